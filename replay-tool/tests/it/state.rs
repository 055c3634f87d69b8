//! `ovreplay state` on the golden journals.

use predicates::prelude::*;

use crate::{on_golden, ovreplay};

/// Cursor at the last turn, a commit, nothing pending.
#[test]
fn state_clean() {
    insta::assert_snapshot!(on_golden("clean", &["state", "{j}"]), @r#"
    session      sess_clean
    harness      zcode
    cwd          /home/dev/project
    events       17 (2026-03-02T09:00:01.000Z .. 2026-03-02T09:00:05.610Z)
    hooks        prompt-submit 2, session-start 1, stop 2
    cursor       lastTurnId = turn_b2
    messages     4 planned: 4 acknowledged, 0 pending, 0 in flight, 0 set aside
    outbox       0
    in doubt     0
    set aside    0
    commit       1 commit(s) ok, 4 acknowledged, 2 uncommitted (~11 tokens)
    rollout      /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl at 4100 of 4100 (dev 64769 ino 1234567), 2 read(s), 0 bad line(s)
    turn book    turn_b2
    back-off     none
    liveness     2 turn(s) seen, 0 without Stop
    workers      2 started (0 drain(s))
    messages, in plan order:
      4 acknowledged earlier: records let go, identities kept
    "#);
}

/// A send with no outcome is listed as in doubt.
#[test]
fn state_in_doubt() {
    insta::assert_snapshot!(on_golden("in_doubt", &["state", "{j}"]), @r#"
    session      sess_doubt
    harness      zcode
    cwd          /home/dev/project
    events       18 (2026-03-02T09:00:01.000Z .. 2026-03-02T09:00:05.785Z)
    hooks        prompt-submit 2, session-start 1, stop 2
    cursor       lastTurnId = turn_a1
    messages     4 planned: 2 acknowledged, 0 pending, 2 in flight, 0 set aside
    outbox       0
    in doubt     1
      send 2 started 2026-03-02T09:00:05.785Z by pid 41002: [turn:turn_b2:user, turn:turn_b2:assistant]
    set aside    0
    commit       0 commit(s) ok, 2 acknowledged, 2 uncommitted (~12 tokens)
    rollout      /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl at 3700 of 3700 (dev 64769 ino 1234567), 2 read(s), 0 bad line(s)
    turn book    turn_b2
    back-off     none
    liveness     2 turn(s) seen, 0 without Stop
    workers      3 started (1 drain(s))
    messages, in plan order:
      2 acknowledged earlier: records let go, identities kept
      2    turn:turn_b2:user                            in flight (send 2)
      3    turn:turn_b2:assistant                       in flight (send 2)
    "#);
}

/// Set-aside messages with their errors.
#[test]
fn state_set_aside() {
    insta::assert_snapshot!(on_golden("set_aside", &["state", "{j}"]), @r#"
    session      sess_aside
    harness      zcode
    cwd          /home/dev/project
    events       18 (2026-03-02T09:00:01.000Z .. 2026-03-02T09:00:05.720Z)
    hooks        prompt-submit 2, session-start 1, stop 2
    cursor       lastTurnId = turn_b2
    messages     3 planned: 1 acknowledged, 0 pending, 0 in flight, 2 set aside
    outbox       0
    in doubt     0
    set aside    2
      turn:turn_a1:assistant: 400: invalid message: content has a lone surrogate
      turn:turn_b2:user: 413: message too large
    commit       0 commit(s) ok, 1 acknowledged, 1 uncommitted (~5 tokens)
    rollout      /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl at 1500 of 1500 (dev 64769 ino 1234567), 1 read(s), 0 bad line(s)
    turn book    turn_a1, turn_b2
    back-off     none
    liveness     2 turn(s) seen, 0 without Stop
    workers      2 started (0 drain(s))
    messages, in plan order:
      1 acknowledged earlier: records let go, identities kept
      1    turn:turn_a1:assistant                       set aside (400)
      2    turn:turn_b2:user                            set aside (413)
    "#);
}

/// Outbox, back-off, and the undecodable record that was skipped.
#[test]
fn state_unreachable() {
    insta::assert_snapshot!(on_golden("unreachable", &["state", "{j}"]), @r#"
    session      sess_offline
    harness      zcode
    cwd          /home/dev/project
    events       9 (2026-03-02T09:00:01.000Z .. 2026-03-02T09:00:03.231Z)
    hooks        prompt-submit 1, session-start 1, stop 1
    cursor       lastTurnId = -
    messages     2 planned: 0 acknowledged, 2 pending, 0 in flight, 0 set aside
    outbox       2
      turn:turn_a1:user (12 B, 1 failed send(s), last: 0: connection refused (127.0.0.1:1933))
      turn:turn_a1:assistant (2 B, 1 failed send(s), last: 0: connection refused (127.0.0.1:1933))
    in doubt     0
    set aside    0
    commit       0 commit(s) ok, 0 acknowledged, 0 uncommitted (~0 tokens)
    rollout      /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl at 800 of 800 (dev 64769 ino 1234567), 1 read(s), 0 bad line(s)
    turn book    turn_a1
    back-off     until 2026-03-02T09:00:33.231Z (connection refused (127.0.0.1:1933))
    liveness     1 turn(s) seen, 0 without Stop
    workers      1 started (0 drain(s))
    skipped      0:854: unknown codec version 9 (this build reads up to 3)
    messages, in plan order:
      0    turn:turn_a1:user                            pending
      1    turn:turn_a1:assistant                       pending
    "#);
}

/// Liveness: a turn without Stop.
#[test]
fn state_no_stop() {
    insta::assert_snapshot!(on_golden("no_stop", &["state", "{j}"]), @r#"
    session      sess_open
    harness      zcode
    cwd          /home/dev/project
    events       11 (2026-03-02T09:00:01.000Z .. 2026-03-02T09:00:05.220Z)
    hooks        pre-tool-use 1, prompt-submit 2, session-start 1, stop 1
    cursor       lastTurnId = turn_a1
    messages     2 planned: 2 acknowledged, 0 pending, 0 in flight, 0 set aside
    outbox       0
    in doubt     0
    set aside    0
    commit       0 commit(s) ok, 2 acknowledged, 2 uncommitted (~8 tokens)
    rollout      /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl at 1700 of 1700 (dev 64769 ino 1234567), 2 read(s), 0 bad line(s)
    turn book    turn_b2
    back-off     none
    liveness     2 turn(s) seen, 1 without Stop: turn_b2
    workers      1 started (0 drain(s))
    messages, in plan order:
      2 acknowledged earlier: records let go, identities kept
    "#);
}

#[test]
fn state_json_is_the_whole_state() {
    let out = on_golden("in_doubt", &["state", "{j}", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["cursor"], "turn_a1");
    assert_eq!(v["state"]["session_id"], "sess_doubt");
    assert_eq!(v["state"]["events"], 18);
    // turn_a1 is delivered: its records are let go, their identities kept.
    assert!(v["state"]["messages"]["turn:turn_a1:assistant"].is_null());
    assert_eq!(v["state"]["records_let_go"], 2);
    assert_eq!(v["state"]["delivered"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        v["state"]["messages"]["turn:turn_b2:user"]["status"]["InFlight"]["send_id"],
        2
    );
    assert!(v["state"]["sends"]["2"].is_object());
    assert_eq!(v["skipped"], serde_json::json!([]));
}

#[test]
fn state_exit_codes() {
    ovreplay()
        .args(["state", "/nonexistent/journal"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is not a journal"));
    ovreplay().args(["state", "--bogus"]).assert().code(2);
}

/// `state` prints the engine's fold (`ov_engine::store::fold_reader`), also when the newest
/// snapshot does not decode: there is one fold, and this command is not a second one.
#[test]
fn state_is_the_engine_fold_even_past_an_undecodable_snapshot() {
    use ov_engine::event::Event;
    use ov_engine::store::SessionStore;
    use ov_journal::Durability;

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("j");
    let store = SessionStore::open(&dir).unwrap();
    let problem = |n: u32| Event::Problem {
        context: "test".into(),
        message: format!("p{n}"),
    };
    store.append(problem(1), Durability::Buffered).unwrap();
    store.compact().unwrap();
    store.append(problem(2), Durability::Buffered).unwrap();
    // A snapshot this build cannot decode, then more records.
    store
        .journal()
        .roll_with_snapshot(b"not a snapshot")
        .unwrap();
    store.append(problem(3), Durability::Buffered).unwrap();
    let engine = store.fold().unwrap();
    drop(store);

    let out = ovreplay()
        .args(["state", dir.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"], serde_json::to_value(&engine.state).unwrap());
    assert_eq!(v["skipped"].as_array().unwrap().len(), engine.skipped.len());
}
