//! The Claude Code plugin tree (`hook/plugin/claude-code/`), installed by the real Claude Code
//! CLI from a local marketplace (`claude plugin marketplace add <dir>`, `claude plugin install
//! ovhook@ovhook`) into a temporary HOME, offline: one headless turn against the scripted model
//! server runs every hook from the plugin (nothing of ours in `settings.json`), the turn reaches
//! the real OpenViking server once, and `ovhook doctor` warns once settings hooks of ours are
//! installed next to the plugin. Skipped, with a message, only when npm is absent.

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
fn the_plugin_installed_from_a_local_marketplace_runs_every_hook() {
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

    // The marketplace: the plugin tree with the built binary where its manifests name it.
    let market = dir.path().join("marketplace");
    copy_tree(&repo().join("hook/plugin/claude-code"), &market);
    std::fs::create_dir_all(market.join("bin")).expect("bin");
    std::fs::copy(env!("CARGO_BIN_EXE_ovhook"), market.join("bin/ovhook")).expect("binary");

    let added = clean(&claude, &home)
        .args(["plugin", "marketplace", "add"])
        .arg(&market)
        .output()
        .expect("claude plugin marketplace add");
    ok("claude plugin marketplace add", &added);
    let installed = clean(&claude, &home)
        .args(["plugin", "install", "ovhook@ovhook"])
        .output()
        .expect("claude plugin install");
    ok("claude plugin install", &installed);

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
    let plugin_root = home.join(".claude/plugins/cache/ovhook/ovhook/0.1.0");
    let plugin_exe = plugin_root.join("bin/ovhook");
    assert!(plugin_exe.is_file(), "the installed copy holds the binary");

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

    // doctor: the plugin alone is fine; settings hooks next to it run every event twice.
    let doctor = |home: &Path| -> String {
        let out = clean(&PathBuf::from(env!("CARGO_BIN_EXE_ovhook")), home)
            .arg("doctor")
            .env("OVHOOK_STATE_DIR", &state)
            .env("OPENVIKING_URL", "off")
            .output()
            .expect("doctor");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let alone = doctor(&home);
    assert!(
        alone.contains("ovhook@ovhook installed at"),
        "doctor sees the plugin: {alone}"
    );
    assert!(!alone.contains("run twice"), "{alone}");
    assert!(
        alone.contains("ok claude-code mcp: from the ovhook plugin"),
        "{alone}"
    );
    let install = clean(&PathBuf::from(env!("CARGO_BIN_EXE_ovhook")), &home)
        .args(["install", "--harness", "claude-code", "--url", &url])
        .output()
        .expect("ovhook install");
    let said = ok("ovhook install", &install);
    assert!(
        said.contains("the ovhook Claude Code plugin ovhook@ovhook is installed too"),
        "install warns: {said}"
    );
    let both = doctor(&home);
    assert!(
        both.contains(
            "the ovhook plugin and ovhook hooks in Claude Code settings are both installed"
        ),
        "doctor warns: {both}"
    );
}
