//! Only what the user consented to leaves the machine: `ovhook pause`/`resume`/`status`,
//! `ovhook forget` against the real server, and `ovhook uninstall` holding what is unsent.

use crate::common;

use std::path::Path;

use common::{append_rollout, stop_payload, ups_payload, Env, Session, Turn};
use ov_engine::event::{Event, HookKind};
use ov_engine::projector::MessageStatus;

fn run(env: &Env, args: &[&str]) -> (i32, String) {
    run_in(env, args, env.home())
}

fn run_in(env: &Env, args: &[&str], cwd: &Path) -> (i32, String) {
    let out = env
        .command(args)
        .current_dir(cwd)
        .output()
        .expect("run ovhook");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// Turn ids of the messages a session planned (pending or sent), in plan order, deduplicated.
fn planned_turns(env: &Env, sid: &str) -> Vec<String> {
    let st = env.state_of(sid);
    let mut out: Vec<String> = Vec::new();
    for key in st.order.values() {
        let Some(r) = st.messages.get(key) else {
            continue;
        };
        if matches!(r.status, MessageStatus::SetAside { .. }) {
            continue;
        }
        if let Some(t) = &r.turn_id {
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
    }
    out
}

/// A turn played by hand: its prompt, its rollout line, then (maybe) its Stop.
fn prompt(s: &mut Session<'_>, turn: &Turn) -> String {
    let cwd = s.env.home().to_path_buf();
    let out = s.env.hook_with(
        "user-prompt-submit",
        &ups_payload(&s.sid, turn, &cwd),
        &[("OVHOOK_NO_DETACH", "1")],
    );
    let path = s.env.rollout(&s.sid);
    append_rollout(&path, &s.sid, &mut s.history, turn);
    out
}

fn stop(s: &Session<'_>, turn: &Turn) {
    let cwd = s.env.home().to_path_buf();
    s.env.hook_with(
        "stop",
        &stop_payload(&s.sid, turn, &cwd),
        &[("OVHOOK_NO_DETACH", "1")],
    );
}

/// While paused, hooks keep no conversation and refuse their turns; a turn that began while
/// paused stays unsent after resume, even though its Stop came after it; turns before and after
/// are sent. `status` says so.
#[test]
fn turns_made_while_paused_are_never_sent_even_after_resume() {
    let env = Env::new();
    let mut s = Session::new(&env);
    let t1 = Turn::new("before");
    prompt(&mut s, &t1);
    stop(&s, &t1);

    let (code, out) = run(&env, &["pause"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("capture paused (global)"), "{out}");
    let (_, status) = run(&env, &["status"]);
    assert!(
        status.contains("capture: off") && status.contains("paused (global"),
        "{status}"
    );
    let (_, doctor) = run(&env, &["doctor"]);
    assert!(doctor.contains("warn capture paused: global"), "{doctor}");
    let t2 = Turn::new("private while paused");
    prompt(&mut s, &t2);
    stop(&s, &t2);
    let t3 = Turn::new("begun while paused");
    prompt(&mut s, &t3);
    let (code, out) = run(&env, &["resume"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("capture resumed (global)"), "{out}");
    stop(&s, &t3);
    let (_, status) = run(&env, &["status"]);
    assert!(status.contains("capture: on"), "{status}");
    let t4 = Turn::new("after");
    prompt(&mut s, &t4);
    stop(&s, &t4);
    env.drain();

    assert_eq!(planned_turns(&env, &s.sid), [t1.id.clone(), t4.id.clone()]);
    let events = env.events(&s.sid);
    for t in [&t2, &t3] {
        assert!(
            events.iter().any(|e| matches!(&e.event,
                Event::CaptureRefused { turn_id, reason }
                    if turn_id.as_deref() == Some(t.id.as_str()) && reason == "paused (global)")),
            "{} refused",
            t.id
        );
    }
    // The paused hooks kept no conversation.
    for e in &events {
        if let Event::HookReceived(h) = &e.event {
            if h.turn_id.as_deref() == Some(t2.id.as_str()) {
                assert!(h.prompt.is_none() && h.response_text.is_none(), "{h:?}");
            }
        }
    }
}

/// `--project` pauses the repository of the current folder (every session there), not other
/// folders; `--session ID` pauses one session.
#[test]
fn pause_scopes_project_and_session() {
    let env = Env::new();
    let repo = env.home().join("repo");
    std::fs::create_dir_all(repo.join(".git")).expect("git");
    let (code, out) = run_in(&env, &["pause", "--project"], &repo);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("capture paused (project"), "{out}");
    let (_, status) = run_in(&env, &["status"], &repo);
    assert!(status.contains("capture: off"), "{status}");
    let (_, status) = run(&env, &["status"]);
    assert!(status.contains("capture: on"), "{status}");

    let in_repo = |sid: &str, turn: &str| {
        let mut p = common::base_payload("UserPromptSubmit", sid, Some(turn), &repo);
        p["prompt"] = serde_json::json!("hello");
        env.hook_with("user-prompt-submit", &p, &[]);
    };
    in_repo("sess_in_repo", "turn_r");
    let refused = |sid: &str| {
        env.events(sid)
            .iter()
            .any(|e| matches!(e.event, Event::CaptureRefused { .. }))
    };
    assert!(refused("sess_in_repo"));
    let mut p = common::base_payload(
        "UserPromptSubmit",
        "sess_elsewhere",
        Some("turn_e"),
        env.home(),
    );
    p["prompt"] = serde_json::json!("hello");
    env.hook_with("user-prompt-submit", &p, &[]);
    assert!(!refused("sess_elsewhere"));
    let (code, _) = run_in(&env, &["resume", "--project"], &repo);
    assert_eq!(code, 0);

    let (code, out) = run(&env, &["pause", "--session", "sess_one"]);
    assert_eq!(code, 0, "{out}");
    let mut p = common::base_payload("UserPromptSubmit", "sess_one", Some("turn_o"), env.home());
    p["prompt"] = serde_json::json!("hello");
    env.hook_with("user-prompt-submit", &p, &[]);
    let mut p = common::base_payload("UserPromptSubmit", "sess_two", Some("turn_t"), env.home());
    p["prompt"] = serde_json::json!("hello");
    env.hook_with("user-prompt-submit", &p, &[]);
    assert!(refused("sess_one") && !refused("sess_two"));
    let (code, out) = run(&env, &["pause", "--project", "--session", "x"]);
    assert_eq!(code, 2, "one scope at a time: {out}");
}

/// While paused, SessionStart injects nothing (the profile is there and injected once resumed).
#[test]
fn paused_hooks_inject_nothing() {
    let Some(url) = common::server_url() else {
        return;
    };
    common::seed(
        &url,
        "viking://~/memories/profile.md",
        "# Profile\nName: Pausetest\n",
    );
    let env = Env::with_url(&url);
    let start = |sid: &str| {
        let mut p = common::base_payload("SessionStart", sid, None, env.home());
        p["source"] = serde_json::json!("startup");
        env.hook("session-start", &p)
    };
    run(&env, &["pause"]);
    assert_eq!(
        start(&common::unique_session()),
        "",
        "paused: nothing injected"
    );
    run(&env, &["resume"]);
    let out = start(&common::unique_session());
    assert!(
        out.contains("Pausetest"),
        "resumed: the profile is injected: {out}"
    );
}

/// `forget --session` deletes the session from the real server, says what it removed, and
/// nothing of the session is sent afterwards; `forget --turn` keeps a turn from ever being sent
/// and says that what the server holds of it stays.
#[test]
fn forget_deletes_the_session_on_the_real_server() {
    let Some(url) = common::server_url() else {
        return;
    };
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_AUTO_RECALL", "0");
    let mut s = Session::new(&env);
    s.turn("one", &[]);
    s.wait_worker();
    let t2 = s.turn("two", &[]).clone();
    s.wait_worker();
    let client = common::client(&url);
    let remote = s.remote();
    assert_eq!(client.session_messages(&remote).expect("read").len(), 4);

    // One turn: never sent again; the server keeps what it holds, and the output says so.
    let (code, out) = run(&env, &["forget", "--session", &s.sid, "--turn", &t2.id]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("NOT removed from the server: 2 message(s)")
            && out.contains("no way to delete one message"),
        "{out}"
    );

    let (code, out) = run(&env, &["forget", "--session", &s.sid]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("removed from the server") && out.contains(&remote),
        "{out}"
    );
    assert!(
        client.session_meta(&remote).expect("meta").is_none(),
        "deleted"
    );
    assert!(env
        .events(&s.sid)
        .iter()
        .any(|e| matches!(&e.event, Event::Forgotten { turn_id: None, .. })));

    // The agent goes on in that session: nothing of it reaches the server again.
    s.turn("three", &[]);
    s.wait_worker();
    env.drain();
    assert!(client.session_meta(&remote).expect("meta").is_none());
    assert!(env.state_of(&s.sid).outbox().is_empty());

    // Again: the server holds nothing of it any more.
    let (code, out) = run(&env, &["forget", "--session", &s.sid]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("holds no session"), "{out}");
    let (code, out) = run(&env, &["forget", "--session", "sess_never_seen"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no journal for session"), "{out}");
}

/// `forget --turn` of a turn not yet sent: withdrawn, never sent.
#[test]
fn a_forgotten_pending_turn_is_never_sent() {
    let env = Env::new();
    let mut s = Session::new(&env);
    let t1 = s.turn("keep", &[("OVHOOK_NO_DETACH", "1")]).clone();
    let t2 = s.turn("forget me", &[("OVHOOK_NO_DETACH", "1")]).clone();
    assert_eq!(env.state_of(&s.sid).outbox().len(), 4);
    let (code, out) = run(&env, &["forget", "--session", &s.sid, "--turn", &t2.id]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("withdrawn: 2 message(s)"), "{out}");
    assert!(
        out.contains("nothing of it had reached the server"),
        "{out}"
    );
    env.drain();
    let st = env.state_of(&s.sid);
    let pending: Vec<_> = st
        .outbox()
        .into_iter()
        .filter_map(|(_, r)| r.turn_id.clone())
        .collect();
    assert_eq!(pending, [t1.id.clone(), t1.id]);
}

/// After `ovhook uninstall`, nothing more leaves for that harness: a drain against a live
/// server sends nothing of its sessions, and the message says how to send or delete what
/// waits. Installing again sends it.
#[test]
fn uninstall_keeps_pending_work_unsent_until_installed_again() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = Env::new();
    let (code, out) = run(&env, &["install", "--harness", "zcode", "--no-mcp"]);
    assert_eq!(code, 0, "{out}");
    let mut s = Session::new(&env);
    s.turn("waiting", &[("OVHOOK_NO_DETACH", "1")]);
    assert_eq!(
        env.state_of(&s.sid).outbox().len(),
        2,
        "journal only: pending"
    );

    let (code, out) = run(&env, &["uninstall", "--harness", "zcode"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("kept unsent: 2 message(s) of 1")
            && out.contains("ovhook install --harness zcode && ovhook drain")
            && out.contains("ovhook forget --session"),
        "{out}"
    );
    let online = |args: &[&str]| {
        let out = env
            .command(args)
            .env("OPENVIKING_URL", &url)
            .output()
            .expect("run ovhook");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    online(&["drain"]);
    let client = common::client(&url);
    let remote = ov_engine::ids::remote_session_id("zc-", &s.sid);
    assert!(
        client.session_meta(&remote).expect("meta").is_none(),
        "nothing sent after uninstall"
    );
    assert_eq!(env.state_of(&s.sid).outbox().len(), 2, "still pending");
    let status = online(&["status"]);
    assert!(status.contains("uninstalled"), "{status}");

    let out = online(&["install", "--harness", "zcode", "--no-mcp"]);
    assert!(out.contains("sending again"), "{out}");
    online(&["drain"]);
    assert_eq!(client.session_messages(&remote).expect("read").len(), 2);
    // The hook kinds a session records say which harness it is.
    assert!(env
        .events(&s.sid)
        .iter()
        .any(|e| matches!(&e.event, Event::HookReceived(h) if h.kind == Some(HookKind::Stop) && h.harness == "zcode")));
}

/// A turn made while capture was off (`capture.enabled` false) is refused by its hooks: once
/// capture is back on, a drain reads the transcript past it and still never sends it. A
/// PreToolUse while paused refuses its turn too.
#[test]
fn a_turn_made_with_capture_off_stays_unsent_once_capture_is_on() {
    let env = Env::new();
    let mut s = Session::new(&env);
    let off = [("OVHOOK_NO_DETACH", "1"), ("OPENVIKING_AUTO_CAPTURE", "0")];
    let t1 = s.turn("capture off", &off).clone();
    let t2 = s.turn("capture on", &[("OVHOOK_NO_DETACH", "1")]).clone();
    env.drain();
    assert_eq!(planned_turns(&env, &s.sid), [t2.id]);
    assert!(env.events(&s.sid).iter().any(|e| matches!(&e.event,
        Event::CaptureRefused { turn_id, reason }
            if turn_id.as_deref() == Some(t1.id.as_str()) && reason == "capture off")));

    // PreToolUse, paused: its turn is refused (the guard's one `stat` found the pause).
    run(&env, &["pause", "--session", &s.sid]);
    let mut p = common::base_payload("PreToolUse", &s.sid, Some("turn_tool"), env.home());
    p["toolName"] = serde_json::json!("Read");
    p["toolInput"] = serde_json::json!({"file_path": "/etc/hostname"});
    env.hook("pre-tool-use", &p);
    run(&env, &["resume", "--session", &s.sid]);
    assert!(env.events(&s.sid).iter().any(|e| matches!(&e.event,
        Event::CaptureRefused { turn_id, reason }
            if turn_id.as_deref() == Some("turn_tool") && reason.starts_with("paused (session"))));
}
