//! `/compact` in the real Claude Code CLI (headless, `claude -p /compact --resume`, against the
//! scripted model server and the real OpenViking server), with ovhook's hooks installed by
//! `ovhook install --harness claude-code`: Claude Code fires PreCompact (`trigger: "manual"`),
//! and when the hook returns the turn made before it, which no other hook could send (the
//! server was unreachable then), is on the server and the session committed; the SessionStart
//! after the compaction (`source: "compact"`) injects the profile again.

use crate::common;

use crate::claude_code_support;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use claude_code_support::{claude_bin, ours_running, Machine, ModelServer};
use ov_engine::event::{Event, HookKind, WorkerReason};
use serde_json::json;

#[test]
fn real_claude_code_compact_sends_and_commits_before_compacting() {
    let Some(url) = common::server_url() else {
        return;
    };
    let Some(bin) = claude_bin() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    let state = dir.path().join("state");
    std::fs::create_dir_all(&work).expect("work");
    let ovhook = PathBuf::from(env!("CARGO_BIN_EXE_ovhook"));
    let install = Command::new(&ovhook)
        .args(["install", "--harness", "claude-code", "--url", &url])
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("ovhook install");
    assert!(install.status.success(), "{install:?}");
    let settings = std::fs::read_to_string(home.join(".claude/settings.json")).expect("settings");
    assert!(
        settings.contains("pre-compact") && settings.contains("subagent-stop"),
        "{settings}"
    );

    let server = ModelServer::start(dir.path());
    let down = format!("http://127.0.0.1:{}", common::closed_port());
    let state_var = ("OVHOOK_STATE_DIR".to_owned(), state.display().to_string());
    let mut m = Machine {
        bin,
        home: home.clone(),
        work,
        port: server.port,
        extra: vec![state_var.clone(), ("OPENVIKING_URL".to_owned(), down)],
    };
    let tag = common::unique_turn();
    let answer = format!("Noted: the deploy window is Tuesday {tag}.");
    server.script(&json!({ "answer": [answer] }));
    let (r1, _) = m.turn(&format!("Remember the deploy window {tag}"), None);
    let sid = r1["session_id"].as_str().expect("session id").to_owned();
    let wait_ours = || {
        let deadline = Instant::now() + Duration::from_secs(90);
        while !ours_running(&ovhook, &home).is_empty() {
            assert!(Instant::now() < deadline, "ovhook still running");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_ours();
    let client = common::client(&url);
    let remote = ov_engine::ids::remote_session_id("cc-", &sid);
    assert!(client.session_messages(&remote).expect("read").is_empty());

    // The server is back (ovcli.conf's URL): compact.
    m.extra = vec![state_var];
    server.script(&json!({ "answer": ["Summary: the user set the deploy window."] }));
    m.turn("/compact", Some(&sid));
    wait_ours();

    let store = ov_engine::store::SessionStore::open_with(
        &ov_engine::paths::journal_dir(&state, &sid),
        Duration::from_secs(10),
    )
    .expect("journal");
    let events: Vec<Event> = store
        .events()
        .expect("events")
        .into_iter()
        .map(|(_, e)| e.expect("decodable").event)
        .collect();
    let pre = events
        .iter()
        .position(|e| {
            matches!(e, Event::HookReceived(h)
            if h.kind == Some(HookKind::PreCompact) && h.source.as_deref() == Some("manual"))
        })
        .expect("Claude Code fired PreCompact");
    let worker = events[pre..]
        .iter()
        .position(|e| {
            matches!(
                e,
                Event::WorkerStarted {
                    reason: WorkerReason::PreCompact
                }
            )
        })
        .map(|i| i + pre)
        .expect("the PreCompact hook ran the worker");
    // Inside the hook: before any later hook event (the compaction's SessionStart).
    let next_hook = events[worker..]
        .iter()
        .position(|e| matches!(e, Event::HookReceived(_)))
        .map_or(events.len(), |i| i + worker);
    let inside = &events[worker..next_hook];
    let story: Vec<String> = events
        .iter()
        .map(|e| match e {
            Event::HookReceived(h) => format!("hook {:?} {:?}", h.kind, h.source),
            Event::WorkerStarted { reason } => format!("worker {reason:?}"),
            other => other.kind_name().to_owned(),
        })
        .collect();
    // Sent by the time the hook returned: by the hook itself, or by the drain the resumed
    // session's SessionStart started just before (the PreCompact worker waits for its lock).
    assert!(
        events[..next_hook]
            .iter()
            .any(|e| matches!(e, Event::SendAcked { .. })),
        "the turn was sent before the PreCompact hook returned: {story:#?}"
    );
    assert!(
        inside
            .iter()
            .any(|e| matches!(e, Event::CommitAcked { .. })),
        "the session was committed inside the PreCompact hook: {story:#?}"
    );
    assert!(events[next_hook..]
        .iter()
        .any(|e| matches!(e, Event::HookReceived(h)
        if h.kind == Some(HookKind::SessionStart) && h.source.as_deref() == Some("compact"))));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ProfileServed { .. })
                && events.iter().position(|x| std::ptr::eq(x, e)) > Some(next_hook)),
        "the profile is injected again after the compaction"
    );

    let held: Vec<(String, String)> = client
        .session_messages(&remote)
        .expect("read")
        .into_iter()
        .map(|m| (m.role, m.content))
        .collect();
    assert_eq!(
        held,
        [
            (
                "user".to_owned(),
                format!("Remember the deploy window {tag}")
            ),
            ("assistant".to_owned(), answer)
        ],
        "the turn before the compaction, once"
    );
}
