//! `ovhook install --scope user|project`, `--no-mcp`, `--api-key -`, the install manifest,
//! uninstall of every place and re-install after the binary moved: the real binary against a
//! temporary HOME.

use std::fs;
use std::path::{Path, PathBuf};

use predicates::str::contains;
use serde_json::{json, Value};

use crate::common::{ovhook_copy, Env};

/// `~/.agents/mcp.json`.
fn agents_mcp(env: &Env) -> PathBuf {
    env.home().join(".agents/mcp.json")
}

fn read(p: &Path) -> Value {
    serde_json::from_slice(&fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .expect("json")
}

fn write(p: &Path, v: &Value) {
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, serde_json::to_vec_pretty(v).expect("json")).expect("write");
}

fn our_commands(cfg: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for groups in cfg["hooks"]["events"]
        .as_object()
        .map(|m| m.values().cloned().collect::<Vec<_>>())
        .unwrap_or_default()
    {
        for g in groups.as_array().cloned().unwrap_or_default() {
            for e in g["hooks"].as_array().cloned().unwrap_or_default() {
                if e["statusMessage"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("openviking-memory:"))
                {
                    out.push(e["command"].as_str().expect("command").to_owned());
                }
            }
        }
    }
    out
}

#[test]
fn project_scope_merges_only_our_hooks_at_the_git_root_and_records_it() {
    let env = Env::bare();
    let root = env.repo("repo");
    let cfg_path = root.join(".zcode/config.json");
    let theirs = json!({
        "model": "bigmodel/glm-4.7",
        "hooks": {"events": {"PostToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "echo hi", "timeout": 5}]}]}},
        "permissions": {"allow": ["Bash"]}
    });
    write(&cfg_path, &theirs);
    let secret = "sk-SECRET-in-argv-0123";
    let sub = root.join("sub/dir");
    env.cmd(&[
        "install",
        "--scope",
        "project",
        "--project",
        &sub.to_string_lossy(),
        "--url",
        "http://where-data-goes.example:1933",
        "--api-key",
        secret,
    ])
    .assert()
    .success()
    .stdout(contains("may be committed"))
    .stdout(contains("trust the workspace"))
    .stdout(contains(cfg_path.display().to_string()))
    .stderr(contains("hooks.enabled is not set"));

    let cfg = read(&cfg_path);
    let top: Vec<&String> = cfg.as_object().expect("obj").keys().collect();
    assert_eq!(top, ["model", "hooks", "permissions"]);
    assert_eq!(cfg["permissions"], theirs["permissions"]);
    // Their own hook is listed and the switch is not set (off): ours does not switch it on.
    assert_eq!(cfg["hooks"].get("enabled"), None, "{cfg}");
    assert_eq!(
        cfg["hooks"]["events"]["PostToolUse"],
        theirs["hooks"]["events"]["PostToolUse"]
    );
    let cmds = our_commands(&cfg);
    assert_eq!(cmds.len(), 4, "{cfg}");
    assert!(cmds.iter().all(|c| Path::new(c).is_file()));
    let text = fs::read_to_string(&cfg_path).expect("read");
    assert!(
        !text.contains(secret),
        "a credential reached the project file"
    );
    assert!(
        !text.contains("where-data-goes"),
        "a URL reached the project file"
    );
    assert!(cfg.get("mcp").is_none(), "no MCP server in a project file");
    // Credentials went to the user's ovcli.conf; the user's ZCode config is not touched.
    let ovcli = read(&env.ovcli());
    assert_eq!(ovcli["api_key"], json!(secret));
    assert!(!env.zcode_config().exists());
    assert!(!agents_mcp(&env).exists());
    let manifest = read(&env.manifest());
    assert_eq!(
        manifest["projects"],
        json!([{"harness": "zcode", "root": root.to_string_lossy()}])
    );
}

#[test]
fn project_root_is_found_from_the_current_folder_and_a_worktree_git_file_counts() {
    let env = Env::bare();
    let main = env.repo("main");
    let wt = env.path("wt");
    fs::create_dir_all(wt.join("deep")).expect("wt");
    fs::write(
        wt.join(".git"),
        format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
    )
    .expect("gitfile");
    let wt = fs::canonicalize(wt).expect("canon");
    env.cmd(&["install", "--scope", "project"])
        .current_dir(wt.join("deep"))
        .assert()
        .success();
    assert_eq!(our_commands(&read(&wt.join(".zcode/config.json"))).len(), 4);
    assert!(!main.join(".zcode").exists());
    assert!(!wt.join("deep/.zcode").exists());
}

#[test]
fn project_scope_outside_a_repository_is_refused() {
    let env = Env::bare();
    let dir = env.path("plain");
    fs::create_dir_all(&dir).expect("mkdir");
    env.cmd(&[
        "install",
        "--scope",
        "project",
        "--project",
        &dir.to_string_lossy(),
    ])
    .assert()
    .code(1)
    .stderr(contains("not inside a git repository"));
    assert!(!dir.join(".zcode").exists());
    assert!(!env.manifest().exists());
    env.cmd(&["install", "--scope", "everywhere"])
        .assert()
        .code(2);
    env.cmd(&["install", "--scope", "user", "--project", "/x"])
        .assert()
        .code(2);
}

#[test]
fn uninstall_removes_every_recorded_place_and_says_where_the_journals_are() {
    let env = Env::bare();
    let created = env.repo("a");
    let existing = env.repo("b");
    let theirs = json!({"model": "m", "hooks": {"enabled": false}});
    write(&existing.join(".zcode/config.json"), &theirs);
    let user_theirs = json!({"mcp": {"servers": {"github": {"command": "gh"}}}});
    write(&env.zcode_config(), &user_theirs);
    env.cmd(&["install"]).assert().success();
    for r in [&created, &existing] {
        env.cmd(&[
            "install",
            "--scope",
            "project",
            "--project",
            &r.to_string_lossy(),
        ])
        .assert()
        .success();
    }
    // Journals and a log exist, as after real use.
    let state = env.home().join(".openviking/ovhook");
    fs::create_dir_all(state.join("journals/sess_x")).expect("journals");
    fs::write(state.join("journals/sess_x/00000000.log"), b"x").expect("j");
    fs::write(state.join("ovhook.log"), b"log").expect("log");
    fs::write(state.join("ovhook.log.1"), b"old log").expect("log.1");
    fs::write(state.join("server-backoff.json"), b"{}").expect("backoff");

    let out = env.cmd(&["uninstall"]).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.contains(&format!("rm -rf {}", state.join("journals").display())),
        "{stdout}"
    );
    // The file install created is gone (with the folder it made); the other is restored.
    assert!(!created.join(".zcode").exists(), "{stdout}");
    let restored = read(&existing.join(".zcode/config.json"));
    assert_eq!(restored["model"], json!("m"));
    assert!(our_commands(&restored).is_empty());
    assert!(restored.get("mcp").is_none());
    let user = read(&env.zcode_config());
    assert!(our_commands(&user).is_empty());
    assert_eq!(user["mcp"], user_theirs["mcp"]);
    assert!(
        !agents_mcp(&env).exists(),
        "install created it; uninstall removes it"
    );
    // Nothing of ours is left but the journals and the record that the harnesses were
    // uninstalled (their unsent work stays unsent until they are installed again).
    assert!(!env.manifest().exists());
    assert!(!state.join("ovhook.log").exists());
    let mut left: Vec<String> = fs::read_dir(&state)
        .expect("state")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["journals", "uninstalled"]);
    assert!(state.join("journals/sess_x/00000000.log").is_file());
    env.cmd(&["uninstall"])
        .assert()
        .success()
        .stdout(contains("nothing of ours"));
}

#[test]
fn uninstall_of_one_project_leaves_the_others() {
    let env = Env::bare();
    let a = env.repo("a");
    let b = env.repo("b");
    for r in [&a, &b] {
        env.cmd(&["install", "--project", &r.to_string_lossy()])
            .assert()
            .success();
    }
    env.cmd(&[
        "uninstall",
        "--scope",
        "project",
        "--project",
        &a.to_string_lossy(),
    ])
    .assert()
    .success();
    assert!(!a.join(".zcode/config.json").exists());
    assert_eq!(our_commands(&read(&b.join(".zcode/config.json"))).len(), 4);
    assert_eq!(
        read(&env.manifest())["projects"],
        json!([{"harness": "zcode", "root": b.to_string_lossy()}])
    );
}

#[test]
fn no_mcp_installs_hooks_only_and_the_desktop_mcp_list_follows() {
    let env = Env::bare();
    write(
        &agents_mcp(&env),
        &json!({"mcpServers": {"github": {"command": "gh-mcp", "args": []}}}),
    );
    env.cmd(&["install"]).assert().success();
    let agents = read(&agents_mcp(&env));
    assert_eq!(agents["mcpServers"]["github"]["command"], json!("gh-mcp"));
    let ours = &agents["mcpServers"]["openviking"];
    assert_eq!(ours["args"], json!(["mcp"]));
    assert!(Path::new(ours["command"].as_str().expect("cmd")).is_file());
    assert_eq!(
        ours["env"]["OPENVIKING_INTEGRATION_ID"],
        json!("openviking-memory")
    );
    assert!(read(&env.zcode_config())["mcp"]["servers"]["openviking"].is_object());

    env.cmd(&["install", "--no-mcp"])
        .assert()
        .success()
        .stdout(contains("not installed (--no-mcp)"));
    let cfg = read(&env.zcode_config());
    assert_eq!(our_commands(&cfg).len(), 4);
    assert!(cfg.get("mcp").is_none(), "{cfg}");
    assert_eq!(
        read(&agents_mcp(&env)),
        json!({"mcpServers": {"github": {"command": "gh-mcp", "args": []}}})
    );

    let fresh = Env::bare();
    fresh.cmd(&["install", "--no-mcp"]).assert().success();
    assert!(!agents_mcp(&fresh).exists());
    assert!(read(&fresh.zcode_config()).get("mcp").is_none());
}

#[test]
fn api_key_from_stdin_or_environment_never_in_argv() {
    let env = Env::bare();
    let conf = env.ovcli();
    let out = env
        .cmd(&["install", "--api-key", "-"])
        .write_stdin("sk-from-stdin-42\n")
        .assert()
        .success()
        .stdout(contains("read from stdin"));
    assert!(!String::from_utf8_lossy(&out.get_output().stdout).contains("sk-from-stdin-42"));
    assert_eq!(read(&conf)["api_key"], json!("sk-from-stdin-42"));

    env.cmd(&["install"])
        .env("OPENVIKING_API_KEY", "sk-from-env-7")
        .assert()
        .success()
        .stdout(contains("read from OPENVIKING_API_KEY"));
    assert_eq!(read(&conf)["api_key"], json!("sk-from-env-7"));

    // An explicit flag wins over the environment.
    env.cmd(&["install", "--api-key=-"])
        .env("OPENVIKING_API_KEY", "sk-from-env-7")
        .write_stdin("sk-stdin-wins")
        .assert()
        .success();
    assert_eq!(read(&conf)["api_key"], json!("sk-stdin-wins"));
    for key in ["sk-from-stdin-42", "sk-from-env-7", "sk-stdin-wins"] {
        assert!(!fs::read_to_string(env.zcode_config())
            .expect("cfg")
            .contains(key));
    }

    env.cmd(&["install", "--help"])
        .assert()
        .success()
        .stdout(contains("--api-key -"))
        .stdout(contains("stdin"))
        .stdout(contains("OPENVIKING_API_KEY"))
        .stdout(contains("`ps`"));
}

/// A copy of the ovhook binary at another path, as after an upgrade that moved it.
fn moved_binary(env: &Env, rel: &str) -> PathBuf {
    ovhook_copy(&env.path(rel))
}

/// `<home>/.openviking/ovhook/bin/ovhook`: what every entry names.
fn stable(env: &Env) -> String {
    env.home()
        .join(".openviking/ovhook/bin/ovhook")
        .to_string_lossy()
        .into_owned()
}

/// Rewrites `files` as a release before the stable home left them: naming `old`, the binary
/// install ran from.
fn as_an_older_release_wrote(env: &Env, files: &[PathBuf], old: &str) {
    for f in files {
        let text = fs::read_to_string(f).expect("read");
        fs::write(f, text.replace(&stable(env), old)).expect("write");
    }
}

#[test]
fn install_from_a_moved_binary_names_the_stable_home_and_moves_older_paths_there() {
    let env = Env::bare();
    let old = moved_binary(&env, "old/bin/ovhook");
    let repo = env.repo("repo");
    env.cmd_of(&old, &["install"]).assert().success();
    env.cmd_of(&old, &["install", "--project", &repo.to_string_lossy()])
        .assert()
        .success();
    let old_s = old.to_string_lossy().into_owned();
    let stable_s = stable(&env);
    assert!(our_commands(&read(&env.zcode_config()))
        .iter()
        .all(|c| *c == stable_s));
    // The binary install ran from may go: the hooks do not name it.
    fs::remove_file(&old).expect("rm");
    env.cmd_of(Path::new(&stable_s), &["--version"])
        .assert()
        .success();

    let project = repo.join(".zcode/config.json");
    as_an_older_release_wrote(
        &env,
        &[env.zcode_config(), agents_mcp(&env), project.clone()],
        &old_s,
    );
    env.cmd(&["install"])
        .assert()
        .success()
        .stdout(contains("moved to this binary"))
        .stdout(contains(project.display().to_string()));
    for file in [env.zcode_config(), project.clone()] {
        let cmds = our_commands(&read(&file));
        assert_eq!(cmds.len(), 4);
        assert!(
            cmds.iter().all(|c| *c == stable_s),
            "{}: {cmds:?}",
            file.display()
        );
    }
    assert_eq!(
        read(&env.zcode_config())["mcp"]["servers"]["openviking"]["command"],
        json!(stable_s)
    );
    assert_eq!(
        read(&agents_mcp(&env))["mcpServers"]["openviking"]["command"],
        json!(stable_s)
    );
    assert!(read(&project).get("mcp").is_none());
    // Nothing names the old binary any more.
    for file in [env.zcode_config(), agents_mcp(&env), project] {
        assert!(!fs::read_to_string(&file).expect("read").contains(&old_s));
    }
}

#[test]
fn a_move_keeps_what_each_place_held_and_reaches_every_harness() {
    let env = Env::bare();
    let old_s = "/nonexistent/old/bin/ovhook";
    env.cmd(&["install", "--no-mcp"]).assert().success();
    env.cmd(&["install", "--harness", "claude-code"])
        .assert()
        .success();
    let claude_settings = env.home().join(".claude/settings.json");
    as_an_older_release_wrote(&env, &[env.zcode_config(), claude_settings.clone()], old_s);

    // A project install moves every user place of every harness to the stable home.
    let repo = env.repo("repo");
    env.cmd(&["install", "--project", &repo.to_string_lossy()])
        .assert()
        .success()
        .stdout(contains("moved to this binary"));
    let stable_s = stable(&env);
    let user = read(&env.zcode_config());
    assert!(our_commands(&user).iter().all(|c| *c == stable_s));
    assert!(
        user.get("mcp").is_none(),
        "--no-mcp is kept by the move: {user}"
    );
    assert!(!agents_mcp(&env).exists());
    let claude = fs::read_to_string(&claude_settings).expect("claude settings");
    assert!(
        !claude.contains(old_s) && claude.contains(&stable_s),
        "{claude}"
    );
}

#[test]
fn uninstall_removes_the_binary_last_once_no_harness_names_it() {
    let env = Env::bare();
    env.cmd(&["install"]).assert().success();
    env.cmd(&["install", "--harness", "claude-code"])
        .assert()
        .success();
    let stable_s = stable(&env);
    env.cmd(&["uninstall", "--harness", "claude-code"])
        .assert()
        .success()
        .stdout(contains("kept: "))
        .stdout(contains(env.zcode_config().display().to_string()));
    assert!(Path::new(&stable_s).is_file(), "ZCode still runs it");
    assert!(env.home().join(".openviking/ovhook/bin/ovreplay").is_file());
    env.cmd(&["uninstall"])
        .assert()
        .success()
        .stdout(contains(format!("removed {stable_s}")));
    assert!(!env.home().join(".openviking/ovhook/bin").exists());
}
