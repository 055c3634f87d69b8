//! The Claude Code plugin tree (`hook/plugin/claude-code/`), installed by the real Claude Code
//! CLI into a temporary HOME, offline, from the repository as a marketplace added by its git URL
//! (`claude plugin marketplace add <url>`, a local git repository standing in for the remote one
//! through git's `url.<base>.insteadOf`), then `claude plugin install ovhook@ovhook`. The
//! repository is deleted; `ovhook install --harness claude-code` then places the binary the plugin
//! runs and writes no settings hooks; one headless turn against the scripted model server runs
//! every hook from the plugin, the turn reaches the real OpenViking server once, and `ovhook
//! doctor` is content. A plugin from a folder marketplace that is moved away does not load
//! (Claude Code says `cache-miss`), and doctor FAILs on it. Skipped, with a message, only when npm
//! is absent.

use crate::claude_code_support;
use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use claude_code_support::{claude_bin, ours_running, repo, Machine, ModelServer};
use ov_engine::event::{Event, HookKind};
use ov_engine::store::SessionStore;
use serde_json::{json, Value};

/// Copies a folder tree.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).expect("copy");
        }
    }
}

/// A command with a clean environment: PATH, HOME and the offline switches.
fn clean(bin: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .stdin(std::process::Stdio::null());
    cmd
}

/// A git repository at `dir` holding the repository's marketplace file and the plugin tree.
fn plugin_repository(dir: &Path) {
    copy_tree(
        &repo().join("hook/plugin/claude-code"),
        &dir.join("hook/plugin/claude-code"),
    );
    copy_tree(&repo().join(".claude-plugin"), &dir.join(".claude-plugin"));
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "plugin",
        ],
    ] {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git");
        ok("git", &out);
    }
}

fn ok(what: &str, out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed: {text}");
    text
}

#[test]
fn the_plugin_from_the_repository_as_a_git_marketplace_survives_its_source_and_runs_every_hook() {
    let Some(url) = common::server_url() else {
        return;
    };
    let Some(claude) = claude_bin() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    let state = dir.path().join("state");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::create_dir_all(&home).expect("home");

    // The marketplace: the repository, by its git URL (a local repository stands in).
    let source = dir.path().join("repository");
    plugin_repository(&source);
    let git_url = "https://git.example.invalid/openviking/ovhook.git";
    std::fs::write(
        home.join(".gitconfig"),
        format!(
            "[url \"file://{}\"]\n\tinsteadOf = {git_url}\n",
            source.display()
        ),
    )
    .expect("gitconfig");
    let added = clean(&claude, &home)
        .args(["plugin", "marketplace", "add", git_url])
        .output()
        .expect("claude plugin marketplace add");
    ok("claude plugin marketplace add", &added);
    let installed = clean(&claude, &home)
        .args(["plugin", "install", "ovhook@ovhook"])
        .output()
        .expect("claude plugin install");
    ok("claude plugin install", &installed);
    // Claude Code keeps its own clone: the source may go.
    std::fs::remove_dir_all(&source).expect("rm repository");

    // install places the binary the plugin runs and writes no hooks of its own.
    let ovhook = PathBuf::from(env!("CARGO_BIN_EXE_ovhook"));
    let install = clean(&ovhook, &home)
        .args(["install", "--harness", "claude-code", "--url", &url])
        .output()
        .expect("ovhook install");
    let said = ok("ovhook install", &install);
    assert!(said.contains("from the plugin ovhook@ovhook"), "{said}");
    let listed = clean(&claude, &home)
        .args(["plugin", "list"])
        .output()
        .expect("claude plugin list");
    let listed = ok("claude plugin list", &listed);
    assert!(!listed.contains("failed to load"), "{listed}");

    let settings_path = home.join(".claude/settings.json");
    let settings: Value =
        serde_json::from_slice(&std::fs::read(&settings_path).unwrap_or_default())
            .unwrap_or(Value::Null);
    assert!(
        settings.get("hooks").is_none(),
        "no hooks in settings.json: {settings}"
    );
    assert_eq!(
        settings["enabledPlugins"]["ovhook@ovhook"], true,
        "{settings}"
    );
    let claude_json: Value =
        serde_json::from_slice(&std::fs::read(home.join(".claude.json")).unwrap_or_default())
            .unwrap_or(Value::Null);
    assert!(
        claude_json.pointer("/mcpServers/openviking").is_none(),
        "the plugin's MCP server only: {claude_json}"
    );
    let plugin_exe = home.join(".openviking/ovhook/bin/ovhook");
    assert!(plugin_exe.is_file(), "the stable home holds the binary");

    let account = format!(
        "acct_{}",
        common::unique_turn().replace('-', "")[5..17].to_owned()
    );
    let user = "cc_plugin";
    let server = ModelServer::start(dir.path());
    let m = Machine {
        bin: claude.clone(),
        home: home.clone(),
        work,
        port: server.port,
        extra: vec![
            ("OVHOOK_STATE_DIR".into(), state.display().to_string()),
            ("OPENVIKING_URL".into(), url.clone()),
            ("OPENVIKING_ACCOUNT".into(), account.clone()),
            ("OPENVIKING_USER".into(), user.into()),
        ],
    };
    server.script(&json!({"answer": ["Plugin answer CC-PLUGIN-A."]}));
    let prompt = "Does the plugin capture this turn?";
    let (r, _) = m.turn(prompt, None);
    let sid = r["session_id"].as_str().expect("session id").to_owned();
    assert!(!server.requests().is_empty(), "the model was called");

    // The detached workers of the plugin's binary finish.
    let deadline = Instant::now() + Duration::from_secs(90);
    while !ours_running(&plugin_exe, &home).is_empty() {
        assert!(Instant::now() < deadline, "ovhook still running");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Every hook fired from the plugin, into the journal under the temporary state dir.
    let store = SessionStore::open_with(
        &ov_engine::paths::journal_dir(&state, &sid),
        Duration::from_secs(10),
    )
    .expect("the turn's journal");
    let hooks: Vec<(Option<HookKind>, String, Option<String>)> = store
        .events()
        .expect("events")
        .into_iter()
        .filter_map(|(_, e)| match e.expect("decodable").event {
            Event::HookReceived(h) => Some((h.kind, h.harness, h.prompt)),
            _ => None,
        })
        .collect();
    assert!(
        hooks.iter().all(|(_, h, _)| h == "claude-code"),
        "{hooks:?}"
    );
    for kind in [
        HookKind::SessionStart,
        HookKind::PromptSubmit,
        HookKind::Stop,
        HookKind::SessionEnd,
    ] {
        assert_eq!(
            hooks.iter().filter(|(k, _, _)| *k == Some(kind)).count(),
            1,
            "{kind:?} once: {hooks:?}"
        );
    }
    assert!(hooks
        .iter()
        .any(|(k, _, p)| *k == Some(HookKind::PromptSubmit) && p.as_deref() == Some(prompt)));

    // The turn reached the real server once.
    let client = ov_engine::client::Client::new(ov_engine::client::ClientConfig {
        base_url: url.clone(),
        account: Some(account.clone()),
        user: Some(user.to_owned()),
        ..ov_engine::client::ClientConfig::default()
    })
    .expect("client");
    let remote = ov_engine::ids::remote_session_id("cc-", &sid);
    let read = || -> Vec<(String, String)> {
        client
            .session_messages(&remote)
            .unwrap_or_default()
            .into_iter()
            .map(|m| (m.role, m.content))
            .collect()
    };
    // The hooks hand the send to a detached worker, which may start after the turn returns.
    let deadline = Instant::now() + Duration::from_secs(90);
    while read().len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    while !ours_running(&plugin_exe, &home).is_empty() {
        assert!(Instant::now() < deadline, "ovhook still running");
        std::thread::sleep(Duration::from_millis(100));
    }
    let expected = vec![
        ("user".to_string(), prompt.to_string()),
        (
            "assistant".to_string(),
            "Plugin answer CC-PLUGIN-A.".to_string(),
        ),
    ];
    // SessionEnd's commit archives in the server's background: while it runs, the live and
    // the archived copy can both be listed. A real duplicate stays; wait for the archive.
    let mut held = read();
    while held != expected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        held = read();
    }
    assert_eq!(held, expected, "the turn on the server exactly once");

    // doctor: the plugin runs the stable home's binary; nothing to fix.
    let doctor = |home: &Path| -> (Option<i32>, String) {
        let out = clean(&ovhook, home)
            .arg("doctor")
            .env("OVHOOK_STATE_DIR", &state)
            .env("OPENVIKING_URL", "off")
            .output()
            .expect("doctor");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (_, alone) = doctor(&home);
    assert!(
        alone.lines().any(
            |l| l.starts_with("ok claude-code plugin: ovhook@ovhook installed at")
                && l.ends_with(&format!("runs {}", plugin_exe.display()))
        ),
        "doctor checks what the plugin runs: {alone}"
    );
    assert!(!alone.contains("run twice"), "{alone}");
    assert!(
        alone.contains("ok claude-code mcp: from the ovhook plugin"),
        "{alone}"
    );
    // Uninstall keeps the binary the plugin runs.
    let uninstall = clean(&ovhook, &home)
        .args(["uninstall", "--harness", "claude-code"])
        .output()
        .expect("ovhook uninstall");
    let said = ok("ovhook uninstall", &uninstall);
    assert!(
        said.contains("the Claude Code plugin ovhook@ovhook still runs it"),
        "{said}"
    );
    assert!(plugin_exe.is_file());
}

#[test]
fn a_plugin_from_a_folder_marketplace_that_moved_fails_in_doctor() {
    let Some(claude) = claude_bin() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let market = dir.path().join("bundle/plugins/claude-code");
    copy_tree(&repo().join("hook/plugin/claude-code"), &market);
    for args in [
        &[
            "plugin",
            "marketplace",
            "add",
            &market.display().to_string(),
        ][..],
        &["plugin", "install", "ovhook@ovhook"],
    ] {
        let out = clean(&claude, &home).args(args).output().expect("claude");
        ok("claude plugin", &out);
    }
    let ovhook = PathBuf::from(env!("CARGO_BIN_EXE_ovhook"));
    let out = clean(&ovhook, &home)
        .args(["install", "--harness", "claude-code"])
        .output()
        .expect("install");
    ok("ovhook install", &out);
    let doctor = || {
        clean(&ovhook, &home)
            .arg("doctor")
            .env("OPENVIKING_URL", "off")
            .output()
            .expect("doctor")
    };
    let out = doctor();
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("ok claude-code plugin: ")),
        "{report}"
    );

    // The bundle folder moves: Claude Code no longer loads the plugin, and doctor says so.
    std::fs::rename(dir.path().join("bundle"), dir.path().join("moved")).expect("mv");
    let listed = clean(&claude, &home)
        .args(["plugin", "list"])
        .output()
        .expect("claude plugin list");
    let listed = format!(
        "{}{}",
        String::from_utf8_lossy(&listed.stdout),
        String::from_utf8_lossy(&listed.stderr)
    );
    assert!(listed.contains("cache-miss"), "the real CLI: {listed}");
    let out = doctor();
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("FAIL claude-code plugin: ovhook@ovhook:")
                && l.contains("cache-miss")
                && l.contains(&market.display().to_string())),
        "{report}"
    );
}
