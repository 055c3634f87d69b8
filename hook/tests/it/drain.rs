//! `ovhook drain` finishes unfinished work and leaves settled sessions untouched.

use std::path::Path;

use assert_cmd::Command;

fn hook(home: &Path, cmd: &str, payload: &str) {
    Command::cargo_bin("ovhook")
        .expect("binary")
        .env_clear()
        .env("HOME", home)
        .env("OPENVIKING_URL", "off")
        .env("OVHOOK_NO_DETACH", "1")
        .arg(cmd)
        .write_stdin(payload.to_string())
        .assert()
        .success()
        .stdout("");
}

fn drain(home: &Path) -> String {
    let out = Command::cargo_bin("ovhook")
        .expect("binary")
        .env_clear()
        .env("HOME", home)
        .env("OPENVIKING_URL", "off")
        .arg("drain")
        .output()
        .expect("drain");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn records(home: &Path, session: &str) -> usize {
    let dir = home.join(".openviking/ovhook/journals").join(session);
    ov_engine::store::SessionStore::open(&dir)
        .expect("open")
        .events()
        .expect("events")
        .len()
}

#[test]
fn drain_closes_open_turns_then_leaves_a_settled_session_alone() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path();
    // A turn whose Stop never came: only a drain (a later session start) captures its prompt.
    hook(
        home,
        "user-prompt-submit",
        r#"{"sessionId":"sess_d","turnId":"turn_open","prompt":"left open"}"#,
    );
    let before = records(home, "sess_d");
    let out = drain(home);
    assert!(
        out.contains("drained 1 session(s): 1 message(s) still pending"),
        "{out}"
    );
    let st = ov_engine::store::SessionStore::open(&home.join(".openviking/ovhook/journals/sess_d"))
        .expect("open")
        .fold()
        .expect("fold")
        .state;
    assert_eq!(st.outbox().len(), 1, "the open turn's prompt is planned");
    let after_first = records(home, "sess_d");
    assert!(after_first > before);
    // Embedded default: nothing more can happen, so a second drain writes nothing.
    drain(home);
    assert_eq!(records(home, "sess_d"), after_first);
}

/// A worker rolls a journal whose active segment outgrew `COMPACT_ACTIVE_BYTES` to a snapshot
/// segment: the next open folds the snapshot and a short tail, not the whole history, and
/// the folded state is the same.
#[test]
fn a_worker_compacts_a_journal_that_outgrew_its_threshold() {
    use ov_engine::event::{Event, HookKind, HookReceived};
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path();
    let dir = home.join(".openviking/ovhook/journals/sess_big");
    let store = ov_engine::store::SessionStore::open(&dir).expect("create");
    let filler = "x".repeat(4096);
    let n = usize::try_from(ov_engine::delivery::COMPACT_ACTIVE_BYTES).expect("fits") / 4096 + 64;
    let events: Vec<Event> = (0..n)
        .map(|i| {
            Event::HookReceived(HookReceived {
                kind: Some(HookKind::PreToolUse),
                harness: "zcode".into(),
                session_id: Some("sess_big".into()),
                turn_id: Some(format!("t{i}")),
                tool_name: Some(filler.clone()),
                ..HookReceived::default()
            })
        })
        .collect();
    store
        .append_all(events, ov_journal::Durability::Buffered)
        .expect("append");
    let before = store.fold().expect("fold").state;
    drop(store);
    let active = |dir: &Path| {
        let mut segs: Vec<_> = std::fs::read_dir(dir)
            .expect("ls")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ovj"))
            .collect();
        segs.sort();
        std::fs::metadata(segs.last().expect("a segment"))
            .expect("stat")
            .len()
    };
    assert!(active(&dir) > ov_engine::delivery::COMPACT_ACTIVE_BYTES);
    // A prompt and its drain: the worker runs, then compacts.
    hook(
        home,
        "user-prompt-submit",
        r#"{"sessionId":"sess_big","turnId":"turn_last","prompt":"after the big history"}"#,
    );
    drain(home);
    assert!(
        active(&dir) < 1 << 20,
        "the active segment is still {} bytes",
        active(&dir)
    );
    let after = ov_engine::store::SessionStore::open(&dir)
        .expect("open")
        .fold()
        .expect("fold")
        .state;
    assert_eq!(
        after.hook_counts.get("pre-tool-use").copied().unwrap_or(0),
        before.hook_counts.get("pre-tool-use").copied().unwrap_or(0),
        "the snapshot keeps the folded state"
    );
}

/// `drain --resumed` names the session being resumed by its journal directory (SessionStart
/// hands it over): that session is drained as a resume, not committed, also when its id maps
/// to a hashed directory name.
#[test]
fn the_resumed_session_is_named_by_its_directory_even_when_hashed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path();
    let sid = "Sess_Upper/Case";
    hook(
        home,
        "user-prompt-submit",
        &format!(r#"{{"sessionId":"{sid}","turnId":"turn_r","prompt":"resume me"}}"#),
    );
    let dir_name = ov_engine::ids::safe_part(sid);
    assert!(
        !ov_engine::ids::is_safe_part(sid),
        "the id maps to a hashed name"
    );
    let out = Command::cargo_bin("ovhook")
        .expect("binary")
        .env_clear()
        .env("HOME", home)
        .env("OPENVIKING_URL", "off")
        .args(["drain", "--resumed", &dir_name])
        .output()
        .expect("drain");
    assert!(out.status.success(), "{out:?}");
    let dir = home.join(".openviking/ovhook/journals").join(&dir_name);
    let reasons: Vec<ov_engine::event::WorkerReason> = ov_engine::store::SessionStore::open(&dir)
        .expect("open")
        .events()
        .expect("events")
        .into_iter()
        .filter_map(|(_, r)| match r.expect("decodes").event {
            ov_engine::event::Event::WorkerStarted { reason } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, [ov_engine::event::WorkerReason::Resume]);
}
