//! The real Claude Code CLI (`@anthropic-ai/claude-code`, pinned in
//! `scripts/claude-code.sh`, cached under `target/`) running headless against the
//! scripted model server (`testdata/agents/claude-code/fake_anthropic.py`) and the real
//! OpenViking server, with ovhook installed by `ovhook install --harness claude-code`
//! into a temporary HOME. Skipped, with a message, only when npm is absent.

use crate::common;

use crate::claude_code_support;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use claude_code_support::{claude_bin, ours_running, Machine, ModelServer, ReportOnFailure};
use serde_json::{json, Value};

/// Writes `content` at `uri` for one account and user (indexed before it returns).
fn seed(url: &str, account: &str, user: &str, uri: &str, content: &str) {
    let http = reqwest::blocking::Client::new();
    for mode in ["replace", "create"] {
        let r = http
            .post(format!("{url}/api/v1/content/write"))
            .header("X-OpenViking-Account", account)
            .header("X-OpenViking-User", user)
            .json(&json!({"uri": uri, "content": content, "mode": mode, "wait": true}))
            .timeout(Duration::from_secs(120))
            .send()
            .expect("content/write");
        if r.status().is_success() {
            return;
        }
    }
    panic!("could not seed {uri}");
}

#[test]
fn real_claude_code_turns_are_injected_guarded_and_captured_exactly_once() {
    let Some(url) = common::server_url() else {
        return;
    };
    let Some(bin) = claude_bin() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    let _report = ReportOnFailure { home: home.clone() };
    std::fs::write(work.join("notes.md"), "# Notes\nwater the plants\n").expect("notes");
    let account = format!(
        "acct_{}",
        common::unique_turn().replace('-', "")[5..17].to_owned()
    );
    let user = "cc_e2e";
    let profile_token = format!("Profiletoken{}", &account[5..]);
    let memory_token = format!("zyxcolour{}", &account[5..]);
    seed(
        &url,
        &account,
        user,
        "viking://~/memories/profile.md",
        &format!("# Profile\nName: {profile_token}\n"),
    );
    seed(
        &url,
        &account,
        user,
        "viking://~/memories/preferences/editor.md",
        &format!("The user prefers the Helix editor ({memory_token})."),
    );

    let ovhook = PathBuf::from(env!("CARGO_BIN_EXE_ovhook"));
    let install = Command::new(&ovhook)
        .args(["install", "--harness", "claude-code", "--url", &url])
        .args(["--account", &account, "--user", user])
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("ovhook install");
    assert!(install.status.success(), "{install:?}");

    let server = ModelServer::start(dir.path());
    let m = Machine {
        bin,
        home: home.clone(),
        work,
        port: server.port,
        extra: Vec::new(),
    };
    // Turn 1: a Read of a viking:// path (denied), then a two-block answer.
    server.script(&json!({
        "read_path": "viking://~/memories/preferences/editor.md",
        "answer": ["First block CC-E2E-A.", "Second block CC-E2E-B."]
    }));
    let (r1, _) = m.turn(
        "Which editor do I like? Read viking://~/memories/preferences/editor.md",
        None,
    );
    let sid = r1["session_id"].as_str().expect("session id").to_owned();
    // Turns 2 and 3: the same prompt twice, resumed.
    server.script(&json!({"answer": ["fine, first"]}));
    m.turn("yes", Some(&sid));
    server.script(&json!({"answer": ["fine, second"]}));
    m.turn("yes", Some(&sid));
    // Turn 4: a tool-using turn whose Read is allowed.
    server.script(
        &json!({"read_path": "notes.md", "answer": ["The notes say to water the plants."]}),
    );
    m.turn("What do my notes say?", Some(&sid));

    // Nothing of ours is left running once the detached workers are done.
    let deadline = Instant::now() + Duration::from_secs(90);
    while !ours_running(&ovhook, &home).is_empty() {
        assert!(
            Instant::now() < deadline,
            "ovhook still running: {:?}",
            ours_running(&ovhook, &home)
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // What the model saw.
    let bodies: Vec<String> = server.requests().iter().map(Value::to_string).collect();
    assert!(!bodies.is_empty());
    assert!(
        bodies[0].contains(&profile_token),
        "the profile reaches the first model call"
    );
    assert!(
        bodies.iter().any(|b| b.contains(&memory_token)),
        "the seeded memory is injected as context"
    );
    let denied = server.requests().iter().any(|b| {
        b["messages"].as_array().into_iter().flatten().any(|msg| {
            msg["content"].as_array().into_iter().flatten().any(|blk| {
                blk["type"] == "tool_result"
                    && blk["is_error"] == true
                    && blk
                        .to_string()
                        .contains("viking:// URIs are OpenViking virtual paths")
            })
        })
    });
    assert!(
        denied,
        "the viking:// Read is denied and the model sees why"
    );

    // What the server holds: every turn once, the right prompt, the whole answer.
    let client = ov_engine::client::Client::new(ov_engine::client::ClientConfig {
        base_url: url.clone(),
        account: Some(account.clone()),
        user: Some(user.to_owned()),
        ..ov_engine::client::ClientConfig::default()
    })
    .expect("client");
    let remote = ov_engine::ids::remote_session_id("cc-", &sid);
    let held = client.session_messages(&remote).expect("messages");
    let mut got: Vec<(String, String)> = held
        .iter()
        .map(|m| (m.role.clone(), m.content.clone()))
        .collect();
    got.sort();
    let turn1 = got
        .iter()
        .find(|(r, c)| r == "assistant" && c.starts_with("First block"))
        .map(|(_, c)| c.clone())
        .unwrap_or_default();
    assert!(
        turn1.starts_with("First block CC-E2E-A.\n\nSecond block CC-E2E-B. [tool_result is_error=True: viking:// URIs"),
        "the whole two-block answer: {turn1:?}"
    );
    let mut want = vec![
        (
            "user".to_string(),
            "Which editor do I like? Read viking://~/memories/preferences/editor.md".to_string(),
        ),
        ("assistant".to_string(), turn1.clone()),
        ("user".to_string(), "yes".to_string()),
        ("assistant".to_string(), "fine, first".to_string()),
        ("user".to_string(), "yes".to_string()),
        ("assistant".to_string(), "fine, second".to_string()),
        ("user".to_string(), "What do my notes say?".to_string()),
    ];
    let notes = got
        .iter()
        .find(|(r, c)| r == "assistant" && c.starts_with("The notes say"))
        .map(|(_, c)| c.clone())
        .unwrap_or_default();
    assert!(
        notes.contains("[tool_result is_error=False: 1\t# Notes"),
        "the model read the file: {notes:?}"
    );
    want.push(("assistant".to_string(), notes));
    want.sort();
    assert_eq!(got, want, "every turn on the server exactly once");
    assert!(held.iter().all(|m| m.turn_id.is_some()));
}
