//! A hook that cannot get the journal's lock in time spills its event to a file, exits 0
//! within its budget, and the next writer ingests the file exactly once.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{assert_exactly_once, assert_settled, Env, Turn};
use ov_engine::event::{Event, HookKind};
use ov_engine::store::SessionStore;

fn spill_files(dir: &Path) -> Vec<PathBuf> {
    ov_engine::spill::pending(dir)
}

/// Holds the journal's lock as another process would (a stuck writer).
fn hold_lock(dir: &Path) -> ov_journal::FileLock {
    drop(SessionStore::open(dir).expect("create journal"));
    ov_journal::FileLock::try_exclusive(&dir.join(ov_journal::LOCK_FILE), Duration::ZERO)
        .expect("lock")
        .expect("lock free")
}

fn received(evs: &[ov_engine::event::Envelope], kind: HookKind, turn: &str) -> usize {
    common::count(
        evs,
        |e| matches!(e, Event::HookReceived(h) if h.kind == Some(kind) && h.turn_id.as_deref() == Some(turn)),
    )
}

#[test]
fn hooks_spill_under_a_held_lock_and_drain_ingests_once_even_after_a_crash() {
    let Some(url) = common::server_url() else {
        return;
    };
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "0");
    env.set("OVHOOK_NO_DETACH", "1");
    let sid = common::unique_session();
    let dir = env.journal_dir(&sid);
    let cwd = env.home().to_path_buf();
    let turn = Turn::new("spilled");
    let lock = hold_lock(&dir);

    let started = Instant::now();
    let out = env.hook(
        "user-prompt-submit",
        &common::ups_payload(&sid, &turn, &cwd),
    );
    assert_eq!(out, "", "a spilled prompt injects nothing");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let mut history = Vec::new();
    common::append_rollout(&env.rollout(&sid), &sid, &mut history, &turn);
    let started = Instant::now();
    assert_eq!(
        env.hook("stop", &common::stop_payload(&sid, &turn, &cwd)),
        ""
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let files = spill_files(&dir);
    assert_eq!(files.len(), 2, "one spill file per hook: {files:?}");
    // Kept to put back after the ingest, as a crash between the append and the removal would.
    let saved: Vec<(PathBuf, Vec<u8>)> = files
        .iter()
        .map(|p| (p.clone(), std::fs::read(p).expect("read spill")))
        .collect();
    drop(lock);

    env.drain();
    assert!(spill_files(&dir).is_empty(), "ingested files are removed");
    let evs = env.events(&sid);
    assert_eq!(received(&evs, HookKind::PromptSubmit, &turn.id), 1);
    assert_eq!(received(&evs, HookKind::Stop, &turn.id), 1);
    let spilled_prompt = evs.iter().find(|e| {
        matches!(&e.event, Event::HookReceived(h) if h.prompt.as_deref() == Some(turn.prompt.as_str()))
    });
    assert!(spilled_prompt.is_some(), "the prompt is journaled");
    assert_exactly_once(
        &url,
        &ov_engine::ids::remote_session_id("zc-", &sid),
        std::slice::from_ref(&turn),
    );
    assert_settled(&env, &sid);

    for (path, bytes) in &saved {
        std::fs::write(path, bytes).expect("put back");
    }
    env.drain();
    assert!(
        spill_files(&dir).is_empty(),
        "already ingested files are removed"
    );
    let evs = env.events(&sid);
    assert_eq!(
        received(&evs, HookKind::PromptSubmit, &turn.id),
        1,
        "no duplicate"
    );
    assert_eq!(received(&evs, HookKind::Stop, &turn.id), 1, "no duplicate");
    assert_eq!(
        common::count(&evs, |e| matches!(e, Event::SpillIngested { .. })),
        2
    );
    assert_exactly_once(
        &url,
        &ov_engine::ids::remote_session_id("zc-", &sid),
        std::slice::from_ref(&turn),
    );
}

/// A damaged spill file is set aside and reported; it neither blocks nor breaks the journal.
#[test]
fn a_damaged_spill_file_is_set_aside_and_reported() {
    let env = Env::new();
    let dir = env.journal_dir("sess_damaged");
    drop(SessionStore::open(&dir).expect("create"));
    let good = SessionStore::spill(&dir, vec![Event::ServerReachable]).expect("spill");
    let bad = dir.join("spill-0000000000000-1-0.ovs");
    let mut bytes = std::fs::read(&good).expect("read");
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&bad, bytes).expect("write");
    // A FIFO under a spill file's name is set aside too, never waited on.
    let fifo = dir.join("spill-0000000000000-2-0.ovs");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: mkfifo(3) on a NUL-terminated path this test owns.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let store = SessionStore::open(&dir).expect("open");
    assert!(spill_files(&dir).is_empty());
    assert!(dir.join("spill-0000000000000-1-0.ovs.damaged").exists());
    assert!(dir.join("spill-0000000000000-2-0.ovs.damaged").exists());
    let evs: Vec<Event> = store
        .events()
        .expect("events")
        .into_iter()
        .map(|(_, r)| r.expect("decodes").event)
        .collect();
    assert!(
        evs.iter()
            .any(|e| matches!(e, Event::Problem { context, .. } if context == "spill")),
        "{evs:?}"
    );
    assert!(
        evs.contains(&Event::ServerReachable),
        "the good file is ingested"
    );
    drop(store);
    let out = env.run_with(&["doctor"], b"", &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("spill-0000000000000-1-0.ovs.damaged could not be read"),
        "{text}"
    );
}

/// PreToolUse waits only briefly for the lock (the agent's tool call waits on it): when the
/// lock is held it still denies, and its event goes to a spill file that the next writer
/// ingests, never dropped.
#[test]
fn the_guard_spills_under_a_held_lock_and_still_denies() {
    let env = Env::new();
    let sid = common::unique_session();
    let dir = env.journal_dir(&sid);
    let turn = common::unique_turn();
    let lock = hold_lock(&dir);
    let mut payload = common::base_payload("PreToolUse", &sid, Some(&turn), env.home());
    payload["toolName"] = serde_json::json!("Read");
    payload["toolInput"] = serde_json::json!({"file_path": "viking://~/memories/profile.md"});
    let out = env.hook("pre-tool-use", &payload);
    assert!(out.contains("\"deny\""), "{out}");
    assert_eq!(spill_files(&dir).len(), 1);
    drop(lock);
    // The next writer (here a SessionStart of the same session) ingests the spill file.
    env.hook(
        "session-start",
        &common::base_payload(
            "SessionStart",
            &sid,
            Some(&common::unique_turn()),
            env.home(),
        ),
    );
    assert!(spill_files(&dir).is_empty());
    let evs = env.events(&sid);
    assert_eq!(received(&evs, HookKind::PreToolUse, &turn), 1);
    let denied = evs.iter().any(|e| {
        matches!(&e.event, Event::HookReceived(h) if h.denied_uri.as_deref() == Some("viking://~/memories/profile.md"))
    });
    assert!(denied, "the denial is journaled");
}
