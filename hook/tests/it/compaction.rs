//! PreCompact against the real OpenViking server: when the hook returns, every complete turn
//! of the session is on the server and the session is committed; the turn in progress stays
//! open; a server that never answers costs the agent at most the hook's budget and loses
//! nothing. Payloads are Codex's (`pre-compact.command.input` of Codex 0.169: `session_id`,
//! `turn_id`, `transcript_path`, `cwd`, `hook_event_name`, `model`, `trigger`) and Claude
//! Code's (`trigger`, `custom_instructions`).

use crate::common;

use common::{count, Env};
use ov_engine::event::{Event, HookKind, WorkerReason};
use serde_json::{json, Value};

fn codex(event: &str, sid: &str, turn: &str, cwd: &str) -> Value {
    json!({
        "session_id": sid,
        "turn_id": turn,
        "transcript_path": null,
        "cwd": cwd,
        "hook_event_name": event,
        "model": "fake-model",
        "permission_mode": "default",
    })
}

fn run(env: &Env, harness: &str, cmd: &str, payload: &Value, extra: &[(&str, &str)]) -> String {
    let out = env.run_with(
        &["--harness", harness, cmd],
        payload.to_string().as_bytes(),
        extra,
    );
    assert_eq!(out.status.code(), Some(0), "{cmd}: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// A Codex turn, prompt and answer, journaled while nothing is configured (so that no Stop
/// worker sends it first); its session and turn ids.
fn finished_turn_unsent(env: &Env, cwd: &str) -> (String, String) {
    let sid = format!("019b{}", &common::unique_turn()[5..]);
    let turn = common::unique_turn();
    let mut ups = codex("UserPromptSubmit", &sid, &turn, cwd);
    ups["prompt"] = json!("a prompt before the compaction");
    run(
        env,
        "codex",
        "user-prompt-submit",
        &ups,
        &[("OPENVIKING_URL", "off")],
    );
    let mut stop = codex("Stop", &sid, &turn, cwd);
    stop["last_assistant_message"] = json!("an answer before the compaction");
    run(env, "codex", "stop", &stop, &[("OPENVIKING_URL", "off")]);
    common::wait_all_idle(env);
    (sid, turn)
}

/// Two turns made while the server could not be reached, a third in progress: the PreCompact
/// hook (the server back) returns with the two turns on the server and the session committed,
/// and the third turn's prompt not sent.
#[test]
fn pre_compact_sends_and_commits_the_session_before_it_returns() {
    let Some(url) = common::server_url() else {
        return;
    };
    let down = format!("http://127.0.0.1:{}", common::closed_port());
    let mut env = Env::with_url(&down);
    // Only the forced commit of PreCompact commits.
    env.set("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "100000000");
    let cwd = env.home().display().to_string();
    let sid = format!("019a{}", &common::unique_turn()[5..]);
    let tag = common::unique_turn();
    let turns: Vec<(String, String, String)> = (1..=2)
        .map(|n| {
            (
                format!("{tag}-t{n}"),
                format!("compaction prompt {n} {tag}"),
                format!("compaction answer {n} {tag}"),
            )
        })
        .collect();
    for (turn, prompt, answer) in &turns {
        let mut ups = codex("UserPromptSubmit", &sid, turn, &cwd);
        ups["prompt"] = json!(prompt);
        run(&env, "codex", "user-prompt-submit", &ups, &[]);
        let mut stop = codex("Stop", &sid, turn, &cwd);
        stop["last_assistant_message"] = json!(answer);
        stop["stop_hook_active"] = json!(false);
        run(&env, "codex", "stop", &stop, &[]);
    }
    let open = format!("{tag}-t3");
    let mut ups = codex("UserPromptSubmit", &sid, &open, &cwd);
    ups["prompt"] = json!(format!("still running {tag}"));
    run(&env, "codex", "user-prompt-submit", &ups, &[]);
    common::wait_all_idle(&env);
    let remote = ov_engine::ids::remote_session_id("cx-", &sid);
    let client = common::client(&url);
    assert!(
        client.session_messages(&remote).expect("read").is_empty(),
        "nothing reached the server while it was down"
    );

    let mut pre = codex("PreCompact", &sid, &open, &cwd);
    pre["trigger"] = json!("auto");
    let out = run(
        &env,
        "codex",
        "pre-compact",
        &pre,
        &[("OPENVIKING_URL", &url)],
    );
    assert_eq!(out, "", "PreCompact prints nothing");

    // Right when the hook returned: no waiting.
    let held = client.session_messages(&remote).expect("read");
    let shown: Vec<(&str, &str)> = held
        .iter()
        .map(|m| (m.role.as_str(), m.content.as_str()))
        .collect();
    for (_, prompt, answer) in &turns {
        assert!(shown.contains(&("user", prompt.as_str())), "{shown:?}");
        assert!(shown.contains(&("assistant", answer.as_str())), "{shown:?}");
    }
    assert!(
        !shown.iter().any(|(_, c)| c.contains("still running")),
        "the turn in progress was sent: {shown:?}"
    );
    let meta = client.session_meta(&remote).expect("meta").expect("exists");
    assert!(meta.commit_count >= 1, "{meta:?}");

    let events = env.events(&sid);
    let pre_at = events
        .iter()
        .position(|e| {
            matches!(&e.event, Event::HookReceived(h)
                if h.kind == Some(HookKind::PreCompact) && h.source.as_deref() == Some("auto"))
        })
        .expect("PreCompact journaled with its trigger");
    let after = &events[pre_at..];
    assert_eq!(
        count(after, |e| matches!(
            e,
            Event::WorkerStarted {
                reason: WorkerReason::PreCompact
            }
        )),
        1
    );
    assert!(count(after, |e| matches!(e, Event::CommitAcked { .. })) >= 1);
    assert_eq!(
        count(after, |e| matches!(e, Event::OpenTurnsClosed)),
        0,
        "PreCompact closed the turn in progress"
    );
    let state = env.state_of(&sid);
    assert!(
        state.outbox().is_empty() && state.sends.is_empty(),
        "settled"
    );
}

/// A server that accepts connections and never answers: the hook still exits 0 (inside its
/// budget, which the test harness's hang guard would catch), and the turn stays journaled,
/// unsent, for the next worker.
#[test]
fn pre_compact_against_a_silent_server_keeps_the_turn_for_later() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", silent.local_addr().expect("addr"));
    let held_open = std::thread::spawn(move || {
        let mut kept = Vec::new();
        for s in silent.incoming().take(64) {
            kept.push(s);
        }
    });
    drop(held_open);
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_TIMEOUT_MS", "60000");
    let cwd = env.home().display().to_string();
    let (sid, turn) = finished_turn_unsent(&env, &cwd);

    let mut pre = codex("PreCompact", &sid, &turn, &cwd);
    pre["trigger"] = json!("manual");
    run(&env, "codex", "pre-compact", &pre, &[]);
    let events = env.events(&sid);
    assert_eq!(
        count(&events, |e| matches!(
            e,
            Event::WorkerStarted {
                reason: WorkerReason::PreCompact
            }
        )),
        1
    );
    assert_eq!(count(&events, |e| matches!(e, Event::SendAcked { .. })), 0);
    // Planned, and either pending or in doubt: the next worker settles it with the server.
    let state = env.state_of(&sid);
    assert!(
        !state.is_settled(),
        "the turn must stay journaled for later"
    );
}

/// While the back-off every session shares is on for the server (another session's hook found
/// it down), PreCompact does not try it: no connection, no worker in the hook; the turn stays
/// journaled for later.
#[test]
fn pre_compact_leaves_a_server_in_the_shared_back_off_alone() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    listener.set_nonblocking(true).expect("nonblocking");
    let env = Env::with_url(&url);
    let cwd = env.home().display().to_string();
    let (sid, turn) = finished_turn_unsent(&env, &cwd);

    ov_engine::backoff::start(
        &env.state(),
        &url,
        ov_engine::store::now_ms(),
        60_000,
        "connection refused",
    );
    let mut pre = codex("PreCompact", &sid, &turn, &cwd);
    pre["trigger"] = json!("auto");
    run(&env, "codex", "pre-compact", &pre, &[]);
    let events = env.events(&sid);
    assert_eq!(
        count(&events, |e| matches!(
            e,
            Event::HookReceived(h) if h.kind == Some(HookKind::PreCompact)
        )),
        1,
        "journaled"
    );
    assert_eq!(
        count(&events, |e| matches!(
            e,
            Event::WorkerStarted {
                reason: WorkerReason::PreCompact
            }
        )),
        0
    );
    assert!(
        listener.accept().is_err(),
        "PreCompact connected to a server in the back-off"
    );
    assert!(!env.state_of(&sid).book.turns().is_empty());
}

/// A PreCompact whose run finds the server down opens the back-off every session's hooks share,
/// as a hook's recall does: the next hook of any session does not wait on it.
#[test]
fn pre_compact_against_a_down_server_opens_the_shared_back_off() {
    let url = format!("http://127.0.0.1:{}", common::closed_port());
    let env = Env::with_url(&url);
    let cwd = env.home().display().to_string();
    let (sid, turn) = finished_turn_unsent(&env, &cwd);
    assert!(ov_engine::backoff::read(&env.state()).is_none());
    let mut pre = codex("PreCompact", &sid, &turn, &cwd);
    pre["trigger"] = json!("auto");
    run(&env, "codex", "pre-compact", &pre, &[]);
    let shared = ov_engine::backoff::read(&env.state()).expect("the shared back-off");
    assert_eq!(shared.url, url);
    assert!(!env.state_of(&sid).is_settled(), "the turn stays for later");
}
