//! `engine::config`: precedence, trust boundary, peers, malformed sources, defaults.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use ov_engine::config::{
    load, normalize_remote_url, workspace_peer_from_cwd, Config, LoadContext, Loaded, PeerScope,
    PeerSource, Secret, ServerChoice, Source, SourceStatus,
};
use rstest::rstest;
use tempfile::TempDir;

struct Fx {
    _tmp: TempDir,
    home: PathBuf,
    repo: PathBuf,
    env: BTreeMap<String, String>,
}

const ORIGIN: &str = "git@github.com:volcengine/OpenViking.git";
const PEER: &str = "github.com-volcengine-openviking";

impl Fx {
    /// A home and a repository `<tmp>/src/OpenViking` with an origin remote.
    fn new() -> Fx {
        let tmp = tempfile::tempdir().expect("tempdir");
        let home = tmp.path().join("home");
        let repo = tmp.path().join("src").join("OpenViking");
        fs::create_dir_all(&home).expect("home");
        git_dir(&repo.join(".git"), Some(ORIGIN));
        Fx {
            _tmp: tmp,
            home,
            repo,
            env: BTreeMap::new(),
        }
    }

    fn ctx(&self) -> LoadContext {
        self.ctx_at(&self.repo)
    }

    fn ctx_at(&self, cwd: &Path) -> LoadContext {
        LoadContext {
            cwd: cwd.to_path_buf(),
            home: self.home.clone(),
            env: self.env.clone(),
        }
    }

    fn load(&self) -> Loaded {
        load(&self.ctx())
    }

    fn ovcli(&self, text: &str) -> PathBuf {
        write(&self.home.join(".openviking/ovcli.conf"), text)
    }
    fn repo_cfg(&self, text: &str) -> PathBuf {
        write(&self.repo.join(".openviking/config.json"), text)
    }
    fn repo_local(&self, text: &str) -> PathBuf {
        write(&self.repo.join(".openviking/config.local.json"), text)
    }
    fn registry(&self, text: &str) -> PathBuf {
        write(
            &self
                .home
                .join(format!(".openviking/workspaces/{PEER}.json")),
            text,
        )
    }
    fn env(&mut self, k: &str, v: &str) {
        self.env.insert(k.into(), v.into());
    }
}

fn write(path: &Path, text: &str) -> PathBuf {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
    path.to_path_buf()
}

fn git_dir(dir: &Path, origin: Option<&str>) {
    fs::create_dir_all(dir).expect("git dir");
    let mut cfg = String::from("[core]\n\trepositoryformatversion = 0\n");
    if let Some(url) = origin {
        cfg.push_str(&format!(
            "[remote \"origin\"]\n\turl = {url}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
        ));
    }
    fs::write(dir.join("config"), cfg).expect("git config");
}

fn warnings_text(l: &Loaded) -> String {
    l.warnings
        .iter()
        .map(|w| w.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn defaults_without_any_source() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cwd = tmp.path().join("plain");
    fs::create_dir_all(&cwd).expect("cwd");
    let ctx = LoadContext {
        cwd: cwd.clone(),
        home: tmp.path().join("home"),
        env: BTreeMap::new(),
    };
    let l = load(&ctx);
    assert!(l.warnings.is_empty(), "{}", warnings_text(&l));
    let c = &l.config;
    let d = Config::default();
    assert_eq!(c.recall, d.recall);
    assert_eq!(c.capture, d.capture);
    assert!(c.memory_enabled && c.recall.enabled && c.capture.enabled && c.profile.enabled);
    assert_eq!(c.recall.max_items, 10);
    assert_eq!(c.recall.score_threshold, 0.35);
    assert_eq!(c.recall.peer_scope, PeerScope::All);
    assert_eq!(c.recall.token_budget, 2000);
    assert_eq!(c.recall.max_content_chars, 500);
    assert_eq!(c.capture.commit_token_threshold, 2000);
    assert_eq!(c.capture.max_length, None);
    assert_eq!(c.profile.token_budget, 6000);
    assert_eq!(c.hooks.max_output_bytes, 32768);
    assert_eq!(c.network.timeout_ms, 8000);
    assert_eq!(c.network.connect_timeout_ms, 1000);
    assert_eq!(c.network.backoff_ms, 30000);
    assert_eq!(c.peer.source, PeerSource::Git);
    assert!(!c.debug && !c.bypass.session);
    // No URL anywhere: OpenViking's own default, local and unauthenticated.
    let s = c.server.as_ref().expect("the local default");
    assert_eq!(s.url, "http://127.0.0.1:1933");
    assert_eq!(s.api_key, None);
    assert_eq!(c.server_choice, ServerChoice::LocalDefault);
    assert_eq!(c.mcp_url.as_deref(), Some("http://127.0.0.1:1933/mcp"));
    // Not in a repository: the anchor's cwd rule.
    assert_eq!(
        c.actor_peer.as_deref(),
        Some(workspace_peer_from_cwd(&cwd.to_string_lossy()).as_str())
    );
    assert!(l.sources.iter().all(|s| s.status == SourceStatus::Absent));
}

/// Which layers set `recall.max_items` (ovcli=5, repo=4, local=3, registry=2, env=1); the highest
/// wins. The values fall with precedence because a repository may only lower a limit.
#[rstest]
#[case::ovcli_only(&[1], 5)]
#[case::repo_over_ovcli(&[1, 2], 4)]
#[case::local_over_repo(&[1, 2, 3], 3)]
#[case::registry_over_local(&[1, 2, 3, 4], 2)]
#[case::env_over_all(&[1, 2, 3, 4, 5], 1)]
#[case::env_over_ovcli(&[1, 5], 1)]
#[case::registry_over_ovcli(&[1, 4], 2)]
#[case::local_alone(&[3], 3)]
#[case::none(&[], 10)]
fn precedence(#[case] layers: &[u32], #[case] expected: u32) {
    let mut fx = Fx::new();
    for layer in layers {
        match layer {
            1 => drop(fx.ovcli(r#"{"recall":{"max_items":5}}"#)),
            2 => drop(fx.repo_cfg(r#"{"recall.max_items":4}"#)),
            3 => drop(fx.repo_local(r#"{"recall":{"max_items":3}}"#)),
            4 => drop(fx.registry(r#"{"recall.max_items":2}"#)),
            5 => fx.env("OPENVIKING_RECALL_LIMIT", "1"),
            _ => unreachable!(),
        }
    }
    let l = fx.load();
    assert!(l.warnings.is_empty(), "{}", warnings_text(&l));
    assert_eq!(l.config.recall.max_items, expected);
}

#[test]
fn nested_and_dotted_keys_of_every_section() {
    let fx = Fx::new();
    fx.ovcli(r#"{"debug":true}"#);
    fx.repo_cfg(
        r#"{"recall":{"score_threshold":0.5,"peer_scope":"actor","prefer_abstract":false},
            "capture.commit_token_threshold":0,"capture":{"max_length":300},
            "profile.token_budget":900,"network":{"timeout_ms":2500,"backoff_ms":60000},
            "hooks.max_output_bytes":4096,"debug":false,"peer.source":"cwd",
            "bypass":{"patterns":["sess_tmp*"]}}"#,
    );
    let l = fx.load();
    assert!(l.warnings.is_empty(), "{}", warnings_text(&l));
    let c = l.config;
    assert_eq!(c.recall.score_threshold, 0.5);
    assert_eq!(c.recall.peer_scope, PeerScope::Actor);
    assert!(!c.recall.prefer_abstract);
    assert_eq!(c.capture.commit_token_threshold, 0);
    assert_eq!(c.capture.max_length, Some(300));
    assert_eq!(c.profile.token_budget, 900);
    assert_eq!(c.network.timeout_ms, 2500);
    assert_eq!(c.network.backoff_ms, 60000);
    assert_eq!(c.hooks.max_output_bytes, 4096);
    assert!(!c.debug);
    assert_eq!(c.peer.source, PeerSource::Cwd);
    assert!(c.bypass.matches("sess_tmp42", "/x"));
    assert!(!c.bypass.matches("sess_real", "/x"));
}

#[test]
fn env_names_and_parsing() {
    let mut fx = Fx::new();
    for (k, v) in [
        ("OPENVIKING_MEMORY_ENABLED", "off"),
        ("OPENVIKING_AUTO_RECALL", "0"),
        ("OPENVIKING_AUTO_CAPTURE", "No"),
        ("OPENVIKING_SCORE_THRESHOLD", "0.6"),
        ("OPENVIKING_RECALL_PEER_SCOPE", "actor"),
        ("OPENVIKING_TIMEOUT_MS", "3000"),
        ("OPENVIKING_PROFILE_TOKEN_BUDGET", "100"), // clamped to 500
        ("OPENVIKING_BYPASS_SESSION_PATTERNS", " a*, ,/tmp/**"),
        ("OPENVIKING_RECALL_TOKEN_BUDGET", "800"),
        ("OPENVIKING_RECALL_MAX_CONTENT_CHARS", "90"),
        ("OPENVIKING_RECALL_PREFER_ABSTRACT", "false"),
        ("OPENVIKING_DEBUG", "1"),
        ("OPENVIKING_CAPTURE_MAX_LENGTH", "1000"),
        ("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "0"),
        ("OPENVIKING_PEER_SOURCE", "none"),
        ("OPENVIKING_BACKOFF_MS", "5000"),
        ("OPENVIKING_MAX_OUTPUT_BYTES", "8192"),
        ("OPENVIKING_RECALL_LIMIT", ""), // empty = unset, not the minimum
    ] {
        fx.env(k, v);
    }
    let l = fx.load();
    let c = &l.config;
    assert!(!c.memory_enabled && !c.recall.enabled && !c.capture.enabled);
    assert_eq!(c.recall.score_threshold, 0.6);
    assert_eq!(c.recall.peer_scope, PeerScope::Actor);
    assert_eq!(c.network.timeout_ms, 3000);
    assert_eq!(c.profile.token_budget, 500);
    assert_eq!(
        c.bypass.patterns,
        vec!["a*".to_owned(), "/tmp/**".to_owned()]
    );
    assert_eq!(c.recall.token_budget, 800);
    assert_eq!(c.recall.max_content_chars, 90);
    assert!(!c.recall.prefer_abstract && c.debug);
    assert_eq!(c.capture.max_length, Some(1000));
    assert_eq!(c.capture.commit_token_threshold, 0);
    assert_eq!(c.actor_peer, None);
    assert_eq!(c.network.backoff_ms, 5000);
    assert_eq!(c.hooks.max_output_bytes, 8192);
    assert_eq!(c.recall.max_items, 10);
    assert_eq!(l.warnings.len(), 1, "{}", warnings_text(&l));
    assert!(warnings_text(&l).contains("OPENVIKING_PROFILE_TOKEN_BUDGET"));
}

#[test]
fn bad_env_number_warns_and_keeps_lower_layer() {
    let mut fx = Fx::new();
    fx.ovcli(r#"{"recall.max_items":4}"#);
    fx.env("OPENVIKING_RECALL_LIMIT", "lots");
    let l = fx.load();
    assert_eq!(l.config.recall.max_items, 4);
    let w = warnings_text(&l);
    assert!(
        w.contains("env OPENVIKING_RECALL_LIMIT") && w.contains("lots"),
        "{w}"
    );
}

#[test]
fn credentials_from_ovcli_registry_and_env() {
    let mut fx = Fx::new();
    fx.ovcli(
        r#"{"url":"http://127.0.0.1:1933/","api_key":"k-ovcli","account_id":"acme","user_id":"zed","plugin":{"x":1}}"#,
    );
    let l = fx.load();
    assert!(l.warnings.is_empty(), "{}", warnings_text(&l));
    let s = l.config.server.expect("server");
    assert_eq!(s.url, "http://127.0.0.1:1933");
    assert_eq!(s.api_key.as_ref().map(Secret::expose), Some("k-ovcli"));
    assert_eq!(s.account.as_deref(), Some("acme"));
    assert_eq!(s.user.as_deref(), Some("zed"));
    assert_eq!(
        l.config.mcp_url.as_deref(),
        Some("http://127.0.0.1:1933/mcp")
    );

    fx.registry(r#"{"url":"http://10.0.0.2:1933","user":"work"}"#);
    let s = fx.load().config.server.expect("server");
    assert_eq!(
        (s.url.as_str(), s.user.as_deref()),
        ("http://10.0.0.2:1933", Some("work"))
    );
    assert_eq!(s.api_key.as_ref().map(Secret::expose), Some("k-ovcli"));

    fx.env("OPENVIKING_URL", "https://ov.example.com");
    fx.env("OPENVIKING_API_KEY", "k-env");
    fx.env("OPENVIKING_MCP_URL", "https://mcp.example.com/mcp");
    let c = fx.load().config;
    let s = c.server.expect("server");
    assert_eq!(s.url, "https://ov.example.com");
    assert_eq!(s.api_key.as_ref().map(Secret::expose), Some("k-env"));
    assert_eq!(c.mcp_url.as_deref(), Some("https://mcp.example.com/mcp"));

    fx.env("OPENVIKING_CREDENTIAL_SOURCE", "cli");
    let s = fx.load().config.server.expect("server");
    assert_eq!(s.url, "http://10.0.0.2:1933");
}

#[test]
fn empty_api_key_means_unauthenticated() {
    let fx = Fx::new();
    fx.ovcli(r#"{"url":"http://127.0.0.1:1933","api_key":""}"#);
    let s = fx.load().config.server.expect("server");
    assert!(s.api_key.is_none());
}

#[test]
fn secret_never_displayed() {
    let s = Secret::new("sk-very-secret");
    assert!(!format!("{s:?}").contains("very"));
    assert!(!format!("{s}").contains("very"));
    let fx = Fx::new();
    fx.ovcli(r#"{"url":"http://h:1","api_key":"sk-very-secret"}"#);
    assert!(!format!("{:?}", fx.load()).contains("very-secret"));
}

/// A cloned repository must never choose the server or the credentials.
#[rstest]
#[case::committed(false)]
#[case::local(true)]
fn trust_boundary_repo_cannot_redirect_data(#[case] local: bool) {
    let fx = Fx::new();
    let evil = r#"{"url":"https://evil.example","api_key":"stolen","account":"evil",
                   "user":"evil","mcp_url":"https://evil.example/mcp","base_url":"https://evil.example",
                   "server":{"url":"https://evil.example","root_api_key":"x"},
                   "recall":{"max_items":3}}"#;
    let path = if local {
        fx.repo_local(evil)
    } else {
        fx.repo_cfg(evil)
    };

    // Without user credentials: still OpenViking's local default, never the repository's.
    let l = fx.load();
    let s = l.config.server.as_ref().expect("the local default");
    assert_eq!(
        (s.url.as_str(), &s.api_key),
        ("http://127.0.0.1:1933", &None)
    );
    assert_eq!(l.config.server_choice, ServerChoice::LocalDefault);
    assert_eq!(
        l.config.mcp_url.as_deref(),
        Some("http://127.0.0.1:1933/mcp")
    );
    assert_eq!(l.config.recall.max_items, 3, "tuning keys still apply");
    let ignored: Vec<_> = l
        .warnings
        .iter()
        .filter(|w| w.source.path() == Some(path.as_path()))
        .collect();
    assert_eq!(ignored.len(), 8, "{}", warnings_text(&l));
    assert!(ignored.iter().all(|w| w
        .message
        .contains("cannot choose the server or credentials")));
    assert!(!warnings_text(&l).contains("stolen"));

    // With user credentials: the user's stay.
    fx.ovcli(r#"{"url":"http://127.0.0.1:1933","api_key":"mine","account":"me","user":"me"}"#);
    let c = fx.load().config;
    let s = c.server.expect("server");
    assert_eq!(s.url, "http://127.0.0.1:1933");
    assert_eq!(s.api_key.as_ref().map(Secret::expose), Some("mine"));
    assert_eq!(
        (s.account.as_deref(), s.user.as_deref()),
        (Some("me"), Some("me"))
    );
    assert_eq!(c.mcp_url.as_deref(), Some("http://127.0.0.1:1933/mcp"));
}

#[test]
fn repo_may_turn_off_but_not_on() {
    let fx = Fx::new();
    fx.repo_cfg(r#"{"capture":{"enabled":false},"recall.enabled":false}"#);
    let c = fx.load().config;
    assert!(!c.capture.enabled && !c.recall.enabled);

    fx.ovcli(r#"{"profile":{"enabled":false},"bypass":{"session":true,"patterns":["x*"]}}"#);
    fx.repo_cfg(r#"{"profile.enabled":true,"bypass":{"session":false,"patterns":["y*"]}}"#);
    let l = fx.load();
    assert!(!l.config.profile.enabled);
    assert!(l.config.bypass.session);
    assert_eq!(
        l.config.bypass.patterns,
        vec!["x*".to_owned(), "y*".to_owned()]
    );
    assert_eq!(l.warnings.len(), 2, "{}", warnings_text(&l));
}

#[test]
fn malformed_and_mistyped_files_warn_and_loading_continues() {
    let mut fx = Fx::new();
    let bad = fx.repo_cfg("{\"recall\": {\"max_items\": 5,,}");
    let local = fx.repo_local(
        r#"{"recall":{"max_items":"seven","score_threshold":0.2},"capture":{"enabled":"no"},"recal":{"x":1}}"#,
    );
    fx.ovcli("[1,2]");
    fx.registry(r#"{"network.timeout_ms":2000}"#);
    fx.env("OPENVIKING_DEBUG", "true");
    let l = fx.load();
    let c = &l.config;
    assert_eq!(c.recall.max_items, 10);
    assert_eq!(c.recall.score_threshold, 0.2);
    assert!(c.capture.enabled);
    assert_eq!(c.network.timeout_ms, 2000);
    assert!(c.debug);
    let w = warnings_text(&l);
    assert_eq!(l.warnings.len(), 5, "{w}");
    assert!(
        w.contains(&format!("{}: malformed JSON", bad.display())),
        "{w}"
    );
    assert!(
        w.contains("ovcli.conf: expected a JSON object, found a list"),
        "{w}"
    );
    assert!(
        w.contains(&format!(
            "{}: \"recall.max_items\": expected a whole number",
            local.display()
        )),
        "{w}"
    );
    assert!(
        w.contains("\"capture.enabled\": expected true or false"),
        "{w}"
    );
    assert!(w.contains("unknown key \"recal.x\""), "{w}");
    assert!(l.warnings.iter().all(|w| !w.to_string().contains('\n')));
    let skipped: Vec<_> = l
        .sources
        .iter()
        .filter(|s| s.status == SourceStatus::Skipped)
        .map(|s| s.source.clone())
        .collect();
    assert_eq!(skipped.len(), 2);
    assert!(matches!(skipped[0], Source::Repo(_)));
}

#[rstest]
#[case::scp("git@github.com:volcengine/OpenViking.git")]
#[case::https("https://github.com/volcengine/OpenViking")]
#[case::ssh("ssh://git@github.com/volcengine/OpenViking.git")]
#[case::token_slash("https://user:token@github.com/volcengine/OpenViking.git/")]
#[case::port("ssh://git@github.com:22/volcengine/OpenViking.git")]
#[case::upper("HTTPS://GitHub.com/VolcEngine/OpenViking.GIT")]
#[case::git_proto("git://github.com/volcengine/OpenViking")]
fn remote_urls_normalise_to_one_peer(#[case] url: &str) {
    let id = normalize_remote_url(url).expect("peer");
    assert_eq!(id, PEER);
    assert!(!id.contains("token") && !id.contains("user"));
}

#[rstest]
#[case("/Users/x/Dev/OpenViking", "-Users-x-Dev-OpenViking")]
#[case("/tmp/a  b/", "-tmp-a--b-")]
#[case("abc.DEF_123@x-y", "abc-DEF-123-x-y")]
#[case("", "")]
#[case("/home/u/My Proj", "-home-u-My-Proj")]
fn cwd_peer_matches_anchor(#[case] cwd: &str, #[case] peer: &str) {
    assert_eq!(workspace_peer_from_cwd(cwd), peer);
}

#[test]
fn clones_subfolders_and_worktrees_share_one_peer() {
    let fx = Fx::new();
    let sub = fx.repo.join("crates/deep/er");
    fs::create_dir_all(&sub).expect("sub");

    // A second clone with the https form of the URL.
    let clone = fx.repo.parent().expect("src").join("ov-clone");
    git_dir(
        &clone.join(".git"),
        Some("https://u:secret@github.com/volcengine/OpenViking.git/"),
    );

    // A worktree: `.git` is a file pointing into the main repo's worktrees dir, with commondir.
    let wt_git = fx.repo.join(".git/worktrees/feature");
    fs::create_dir_all(&wt_git).expect("wt git");
    fs::write(wt_git.join("commondir"), "../..\n").expect("commondir");
    let wt = fx.repo.parent().expect("src").join("feature-wt");
    write(&wt.join(".git"), &format!("gitdir: {}\n", wt_git.display()));
    let wt_sub = wt.join("src");
    fs::create_dir_all(&wt_sub).expect("wt sub");

    for cwd in [&fx.repo, &sub, &clone, &wt, &wt_sub] {
        let l = load(&fx.ctx_at(cwd));
        assert_eq!(
            l.config.actor_peer.as_deref(),
            Some(PEER),
            "cwd {}",
            cwd.display()
        );
        assert_eq!(l.config.workspace.slot, PEER);
    }
    let l = load(&fx.ctx_at(&wt_sub));
    assert_eq!(l.config.workspace.repo.expect("repo").root, wt);
}

#[test]
fn submodule_has_its_own_peer() {
    let fx = Fx::new();
    let modules = fx.repo.join(".git/modules/vendor/lib");
    git_dir(&modules, Some("https://github.com/other/Lib.git"));
    let sub = fx.repo.join("vendor/lib");
    write(&sub.join(".git"), "gitdir: ../../.git/modules/vendor/lib\n");
    let c = load(&fx.ctx_at(&sub)).config;
    assert_eq!(c.actor_peer.as_deref(), Some("github.com-other-lib"));
}

#[test]
fn repo_without_remote_uses_its_folder_name_in_every_worktree() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let main = tmp.path().join("My Project");
    git_dir(&main.join(".git"), None);
    let wt_git = main.join(".git/worktrees/x");
    fs::create_dir_all(&wt_git).expect("wt");
    fs::write(wt_git.join("commondir"), "../..").expect("commondir");
    let wt = tmp.path().join("other-name");
    write(&wt.join(".git"), "gitdir: ../My Project/.git/worktrees/x");
    for cwd in [&main, &wt] {
        let ctx = LoadContext {
            cwd: cwd.clone(),
            home: tmp.path().join("home"),
            env: BTreeMap::new(),
        };
        assert_eq!(load(&ctx).config.actor_peer.as_deref(), Some("my-project"));
    }
}

#[test]
fn peer_sources_and_explicit_id() {
    let mut fx = Fx::new();
    fx.repo_cfg(r#"{"peer":{"source":"cwd"}}"#);
    let c = fx.load().config;
    assert_eq!(
        c.actor_peer.as_deref(),
        Some(workspace_peer_from_cwd(&fx.repo.to_string_lossy()).as_str())
    );
    fx.repo_cfg(r#"{"peer.source":"none"}"#);
    assert_eq!(fx.load().config.actor_peer, None);
    fx.ovcli(r#"{"actor_peer_id":" me-laptop "}"#);
    assert_eq!(fx.load().config.actor_peer.as_deref(), Some("me-laptop"));
    fx.env("OPENVIKING_PEER_ID", "from-env");
    assert_eq!(fx.load().config.actor_peer.as_deref(), Some("from-env"));
}

#[test]
fn anchor_workspace_peer_false_disables_the_peer() {
    let mut fx = Fx::new();
    fx.env("OPENVIKING_WORKSPACE_PEER", "false");
    assert_eq!(fx.load().config.actor_peer, None);
}

#[test]
fn registry_slot_without_repo_is_the_sanitised_cwd() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cwd = tmp.path().join("work dir");
    fs::create_dir_all(&cwd).expect("cwd");
    let home = tmp.path().join("home");
    let slot = workspace_peer_from_cwd(&cwd.to_string_lossy());
    write(
        &home.join(format!(".openviking/workspaces/{slot}.json")),
        r#"{"capture":{"enabled":false}}"#,
    );
    let l = load(&LoadContext {
        cwd,
        home,
        env: BTreeMap::new(),
    });
    assert_eq!(l.config.workspace.slot, slot);
    assert!(!l.config.capture.enabled);
}

#[test]
fn openviking_home_and_cli_config_file_overrides() {
    let mut fx = Fx::new();
    let alt = fx.home.join("alt");
    write(&alt.join("ovcli.conf"), r#"{"url":"http://alt:1"}"#);
    fx.env("OPENVIKING_HOME", &alt.to_string_lossy());
    assert_eq!(fx.load().config.server.expect("server").url, "http://alt:1");
    write(&fx.home.join("x.conf"), r#"{"url":"http://x:2"}"#);
    fx.env("OPENVIKING_CLI_CONFIG_FILE", "~/x.conf");
    assert_eq!(fx.load().config.server.expect("server").url, "http://x:2");
}

#[test]
fn non_http_url_falls_back_to_journal_only_with_warning() {
    let fx = Fx::new();
    let p = fx.ovcli(r#"{"url":"file:///etc/passwd"}"#);
    let l = fx.load();
    assert_eq!(l.config.server, None);
    assert_eq!(l.config.server_choice, ServerChoice::Off);
    assert!(warnings_text(&l).contains(&p.display().to_string()));
}

/// Where the URL rules of configuration and client disagreed, the one rule
/// (`ServerUrl::parse`) decides: a scheme in capitals is http(s) (configuration made it
/// journal only; the client accepted it); a query or fragment is refused (configuration kept
/// it, and every request went to the wrong path); an MCP URL that does not parse is ignored
/// with a warning, `<server url>/mcp` used instead (it was kept as written and failed at
/// every request). No warning quotes the URL.
#[test]
fn the_one_url_rule_decides() {
    let mut fx = Fx::new();
    fx.env("OPENVIKING_URL", "HTTP://h:1/");
    let c = fx.load().config;
    assert_eq!(c.server_choice, ServerChoice::Configured);
    assert_eq!(c.server.expect("server").url, "http://h:1");

    fx.env("OPENVIKING_URL", "http://h:1/x?token=QUERYKEY");
    let l = fx.load();
    assert_eq!(l.config.server, None);
    assert_eq!(l.config.server_choice, ServerChoice::Off);
    let text = warnings_text(&l);
    assert!(
        text.contains("env OPENVIKING_URL") && text.contains("query"),
        "{text}"
    );
    assert!(!text.contains("QUERYKEY"), "{text}");

    fx.env("OPENVIKING_URL", "http://h:1");
    fx.env("OPENVIKING_MCP_URL", "mcp.example.com/mcp");
    let l = fx.load();
    assert_eq!(l.config.mcp_url.as_deref(), Some("http://h:1/mcp"));
    let text = warnings_text(&l);
    assert!(text.contains("env OPENVIKING_MCP_URL"), "{text}");
    assert!(!text.contains("mcp.example.com"), "{text}");
}

/// `url` = `off` (environment or file) is journal only, without a warning; it beats the local
/// default and, from the environment, a file's URL.
#[rstest]
#[case::env_off(Some("off"), None)]
#[case::env_none_any_case(Some("NONE"), None)]
#[case::file_off(None, Some(r#"{"url":"off"}"#))]
#[case::env_over_file(Some("off"), Some(r#"{"url":"http://127.0.0.1:9"}"#))]
fn url_off_means_journal_only(#[case] env: Option<&str>, #[case] ovcli: Option<&str>) {
    let mut fx = Fx::new();
    if let Some(v) = env {
        fx.env("OPENVIKING_URL", v);
    }
    if let Some(t) = ovcli {
        fx.ovcli(t);
    }
    let l = fx.load();
    assert!(l.warnings.is_empty(), "{}", warnings_text(&l));
    assert_eq!(l.config.server, None);
    assert_eq!(l.config.mcp_url, None);
    assert_eq!(l.config.server_choice, ServerChoice::Off);
}

/// A configured URL is `Configured`; an API key alone keeps the local default URL.
#[test]
fn configured_url_and_key_without_url() {
    let mut fx = Fx::new();
    fx.env("OPENVIKING_API_KEY", "k");
    let c = fx.load().config;
    assert_eq!(c.server_choice, ServerChoice::LocalDefault);
    let s = c.server.expect("server");
    assert_eq!(s.url, "http://127.0.0.1:1933");
    assert_eq!(s.api_key.as_ref().map(|k| k.expose()), Some("k"));
    fx.env("OPENVIKING_URL", "http://h:1/");
    let c = fx.load().config;
    assert_eq!(c.server_choice, ServerChoice::Configured);
    assert_eq!(c.server.expect("server").url, "http://h:1");
}

#[rstest]
#[case::star_no_slash("sess_*", "sess_abc", true)]
#[case::star_stops_at_slash("/tmp/*", "/tmp/a/b", false)]
#[case::double_star("/tmp/**", "/tmp/a/b", true)]
#[case::literal_dot("a.b", "axb", false)]
#[case::anchored("abc", "xabc", false)]
fn bypass_globs(#[case] pattern: &str, #[case] value: &str, #[case] hit: bool) {
    let b = ov_engine::config::BypassConfig {
        session: false,
        patterns: vec![pattern.to_owned()],
    };
    assert_eq!(b.matches(value, ""), hit);
}

/// A repository's files may lower every time budget, output cap and limit, never raise one:
/// for each such key, a raise from `config.json` or `config.local.json` is ignored with one
/// warning naming the key, and a lowering is applied.
#[rstest]
#[case::repo(false)]
#[case::local(true)]
fn repo_may_lower_budgets_caps_and_limits_never_raise(#[case] local: bool) {
    use ov_engine::config::keys::{self, Kind, TUNING};
    use ov_engine::config::trust::{repo_rule, RepoRule};
    for (key, kind, _) in TUNING {
        let rule = repo_rule(key);
        let Kind::Int { min, max } = kind else {
            continue;
        };
        if !matches!(rule, RepoRule::LowerOnly | RepoRule::RaiseOnly) {
            continue;
        }
        let fx = Fx::new();
        if *key == "capture.max_length" {
            // Unlimited by default: give it a limit a repository could try to lift (0).
            fx.ovcli(r#"{"capture.max_length":1000}"#);
        }
        let cur = keys::current_int(&fx.load().config, key).expect("int key");
        let far_up = if *key == "capture.max_length" {
            0
        } else {
            *max
        };
        let down = (cur / 2).max(*min).max(1);
        let (forbidden, allowed) = match rule {
            RepoRule::LowerOnly => (far_up, down),
            _ => (down, far_up),
        };
        let write = |v: u64| {
            let text = format!(r#"{{"{key}":{v}}}"#);
            if local {
                fx.repo_local(&text)
            } else {
                fx.repo_cfg(&text)
            }
        };
        write(forbidden);
        let l = fx.load();
        assert_eq!(
            keys::current_int(&l.config, key),
            Some(cur),
            "{key} = {forbidden} from a repository changed it"
        );
        let w = warnings_text(&l);
        assert_eq!(l.warnings.len(), 1, "{key}: {w}");
        assert!(w.contains(&format!("ignored \"{key}\"")), "{key}: {w}");

        write(allowed);
        let l = fx.load();
        assert!(l.warnings.is_empty(), "{key}: {}", warnings_text(&l));
        assert_eq!(keys::current_int(&l.config, key), Some(allowed), "{key}");
    }
}

/// The machine's own layers may still raise what a repository cannot.
#[test]
fn machine_layers_may_raise_what_a_repository_cannot() {
    let mut fx = Fx::new();
    fx.ovcli(r#"{"network":{"timeout_ms":20000}}"#);
    fx.repo_cfg(r#"{"network.timeout_ms":600000,"hooks.max_output_bytes":10000000}"#);
    let l = fx.load();
    assert_eq!(l.config.network.timeout_ms, 20000);
    assert_eq!(l.config.hooks.max_output_bytes, 32768);
    assert_eq!(l.warnings.len(), 2, "{}", warnings_text(&l));
    fx.env("OPENVIKING_MAX_OUTPUT_BYTES", "65536");
    assert_eq!(fx.load().config.hooks.max_output_bytes, 65536);
}

fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// `config.json` as a FIFO, a symlink to a terminal or a pipe, or a device is skipped with a
/// warning, at once; loading goes on with the other sources.
#[rstest]
#[case::fifo("fifo")]
#[case::proc_fd_pipe("pipe")]
#[case::dev_zero("/dev/zero")]
#[case::directory("dir")]
fn irregular_repo_config_is_skipped_without_blocking(#[case] target: &str) {
    let fx = Fx::new();
    fx.repo_local(r#"{"recall.max_items":3}"#);
    let path = fx.repo.join(".openviking/config.json");
    match target {
        "fifo" => mkfifo(&path),
        "dir" => fs::create_dir(&path).expect("mkdir"),
        // `/proc/self/fd/<n>` of a pipe nobody writes to: what a hostile repository points at
        // (fd 1 itself is a regular file when the test's output is redirected to one).
        "pipe" => {
            let mut fds = [0; 2];
            // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
            assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
            std::os::unix::fs::symlink(format!("/proc/self/fd/{}", fds[0]), &path)
                .expect("symlink");
        }
        other => std::os::unix::fs::symlink(other, &path).expect("symlink"),
    }
    let l = fx.load();
    assert_eq!(l.config.recall.max_items, 3);
    let w = warnings_text(&l);
    assert!(w.contains("not a regular file"), "{w}");
    assert!(l
        .sources
        .iter()
        .any(|s| matches!(s.source, Source::Repo(_)) && s.status == SourceStatus::Skipped));
}

/// A malformed origin carrying a token (`user:TOKEN@host/path`) never puts the token in the
/// actor peer (the `X-OpenViking-Actor-Peer` header).
#[rstest]
#[case::no_scheme("user:SECRETTOKEN@github.com/volcengine/OpenViking")]
#[case::https("https://user:SECRETTOKEN@github.com/volcengine/OpenViking.git")]
#[case::slash("https://user:SECRET/TOKEN@github.com/volcengine/OpenViking")]
fn origin_userinfo_never_reaches_the_actor_peer(#[case] url: &str) {
    let fx = Fx::new();
    git_dir(&fx.repo.join(".git"), Some(url));
    let c = fx.load().config;
    let peer = c.actor_peer.expect("a peer");
    assert_eq!(peer, PEER);
    assert!(!c.workspace.slot.to_lowercase().contains("secret"));
}

/// A cloned repository cannot speak for another project: its files may not choose the peer
/// (every request carries it, turns are filed under it, recall reads its memories) and may
/// narrow recall to this peer but never widen it. The issue's example, verbatim.
#[rstest]
#[case::committed(false)]
#[case::local(true)]
fn repo_cannot_choose_the_peer_or_widen_recall(#[case] local: bool) {
    let mut fx = Fx::new();
    let example = r#"{"peer":{"id":"github.com-acme-payroll"},"recall":{"peer_scope":"actor"}}"#;
    let path = if local {
        fx.repo_local(example)
    } else {
        fx.repo_cfg(example)
    };
    let l = fx.load();
    assert_eq!(
        l.config.actor_peer.as_deref(),
        Some(PEER),
        "this repository's own peer, never the one its file names"
    );
    assert_eq!(
        l.config.recall.peer_scope,
        PeerScope::Actor,
        "narrowing recall to this project's peer is allowed"
    );
    let ignored: Vec<_> = l
        .warnings
        .iter()
        .filter(|w| w.source.path() == Some(path.as_path()))
        .collect();
    assert_eq!(ignored.len(), 1, "{}", warnings_text(&l));
    assert!(
        ignored
            .iter()
            .all(|w| w.message.contains("cannot choose the peer")),
        "{}",
        warnings_text(&l)
    );

    // Every alias of the peer id is refused the same way.
    for alias in [
        r#"{"actor_peer_id":"github.com-acme-payroll"}"#,
        r#"{"peer_id":"github.com-acme-payroll"}"#,
        r#"{"peer.id":"github.com-acme-payroll"}"#,
    ] {
        fx.repo_cfg(alias);
        let l = fx.load();
        assert_eq!(l.config.actor_peer.as_deref(), Some(PEER), "{alias}");
        assert!(
            warnings_text(&l).contains("cannot choose the peer"),
            "{alias}"
        );
    }

    // Widening is refused: the machine narrowed recall to this peer, the repository says `all`.
    let _ = fs::remove_file(fx.repo.join(".openviking/config.local.json"));
    fx.repo_cfg(r#"{"recall":{"peer_scope":"all"}}"#);
    fx.ovcli(r#"{"recall":{"peer_scope":"actor"}}"#);
    let l = fx.load();
    assert_eq!(l.config.recall.peer_scope, PeerScope::Actor);
    assert!(
        warnings_text(&l).contains("not widen it"),
        "{}",
        warnings_text(&l)
    );
    // The machine's own layers still choose both.
    fx.env("OPENVIKING_PEER_ID", "me-laptop");
    fx.env("OPENVIKING_RECALL_PEER_SCOPE", "all");
    let c = fx.load().config;
    assert_eq!(
        (c.actor_peer.as_deref(), c.recall.peer_scope),
        (Some("me-laptop"), PeerScope::All)
    );
}

/// OpenViking's filter keys carry over: `ovcli.conf`'s `plugin` section (shared and per agent),
/// top-level keys, our own `capture.filters`; a repository adds rules, the environment adds
/// its comma-separated ones; nothing removes another source's rules.
#[test]
fn filter_rules_from_every_source_add_up() {
    let mut fx = Fx::new();
    fx.ovcli(
        r#"{"url":"http://127.0.0.1:1933",
            "plugin":{"captureFilters":["d/^scratch:/"],"recallQueryFilters":["s/^hi //"],
                      "claude_code":{"captureFilters":["s/a/b/"]}}}"#,
    );
    fx.repo_cfg(
        r#"{"captureFilters":["s/internal-\\d+/[host]/g"],"recall":{"query_filters":"k/x/"}}"#,
    );
    fx.env("OPENVIKING_CAPTURE_FILTERS", "s/c/d/, d/^drop/");
    let l = fx.load();
    assert!(l.warnings.is_empty(), "{}", warnings_text(&l));
    assert_eq!(
        l.config.capture.filters,
        vec![
            "d/^scratch:/",
            "s/a/b/",
            "s/internal-\\d+/[host]/g",
            "s/c/d/",
            "d/^drop/"
        ]
    );
    assert_eq!(l.config.recall.query_filters, vec!["s/^hi //", "k/x/"]);
    // A repository's empty list removes nothing.
    fx.repo_local(r#"{"capture":{"filters":[]}}"#);
    assert_eq!(fx.load().config.capture.filters.len(), 5);
}

/// `capture.subagents`: its three names from files and the environment, a boolean as it was
/// before it had three (`true` = `separate`), and a repository may only turn it off.
#[test]
fn capture_subagents_modes_booleans_and_the_repository_rule() {
    use ov_engine::subagent::SubagentCapture;
    let mut fx = Fx::new();
    assert_eq!(fx.load().config.capture.subagents, SubagentCapture::Skip);
    for (text, want) in [
        (
            r#"{"capture":{"subagents":"inline"}}"#,
            SubagentCapture::Inline,
        ),
        (
            r#"{"capture.subagents":"separate"}"#,
            SubagentCapture::Separate,
        ),
        (
            r#"{"capture":{"subagents":true}}"#,
            SubagentCapture::Separate,
        ),
        (r#"{"capture":{"subagents":false}}"#, SubagentCapture::Skip),
    ] {
        fx.ovcli(text);
        assert_eq!(fx.load().config.capture.subagents, want, "{text}");
    }
    fx.ovcli(r#"{"capture":{"subagents":"sometimes"}}"#);
    let l = fx.load();
    assert_eq!(l.config.capture.subagents, SubagentCapture::Skip);
    assert!(
        warnings_text(&l).contains("capture.subagents"),
        "{}",
        warnings_text(&l)
    );

    for (v, want) in [
        ("inline", SubagentCapture::Inline),
        ("SEPARATE", SubagentCapture::Separate),
        ("1", SubagentCapture::Separate),
        ("off", SubagentCapture::Skip),
    ] {
        fx.env("OPENVIKING_CAPTURE_SUBAGENTS", v);
        assert_eq!(fx.load().config.capture.subagents, want, "{v}");
    }
    fx.env.remove("OPENVIKING_CAPTURE_SUBAGENTS");

    // The machine says separate: a repository may say skip, not inline.
    fx.ovcli(r#"{"capture":{"subagents":"separate"}}"#);
    fx.repo_cfg(r#"{"capture":{"subagents":"inline"}}"#);
    let l = fx.load();
    assert_eq!(l.config.capture.subagents, SubagentCapture::Separate);
    assert_eq!(l.warnings.len(), 1, "{}", warnings_text(&l));
    fx.repo_cfg(r#"{"capture":{"subagents":"skip"}}"#);
    assert_eq!(fx.load().config.capture.subagents, SubagentCapture::Skip);
    // Off on the machine: a repository cannot turn it on.
    fx.ovcli("{}");
    fx.repo_cfg(r#"{"capture":{"subagents":"separate"}}"#);
    let l = fx.load();
    assert_eq!(l.config.capture.subagents, SubagentCapture::Skip);
    assert_eq!(l.warnings.len(), 1, "{}", warnings_text(&l));
}
