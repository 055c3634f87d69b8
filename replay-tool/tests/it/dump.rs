//! `ovreplay dump` on the golden journals (`testdata/journal-sessions/`): snapshots, filters, JSON
//! lines, exit codes.

use predicates::prelude::*;

use crate::{golden, on_golden, ovreplay};

/// Every event, one line each: position, time, pid, kind, summary.
#[test]
fn dump_clean() {
    insta::assert_snapshot!(on_golden("clean", &["dump", "{j}"]), @r#"
    0:32       2026-03-02T09:00:01.000Z   41001 hook               session-start session=sess_clean source=startup
    0:123      2026-03-02T09:00:02.000Z   41001 hook               prompt-submit turn=turn_a1 prompt="How do I list files?"
    0:235      2026-03-02T09:00:03.000Z   41001 hook               stop turn=turn_a1 response="Use `ls -la`." tools=0
    0:341      2026-03-02T09:00:03.050Z   41002 worker-started     reason=stop
    0:373      2026-03-02T09:00:03.070Z   41002 rollout-read       /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl bytes 0..2048 of 2048, turns [turn_a1]
    0:548      2026-03-02T09:00:03.075Z   41002 planned            turn:turn_a1:user (20 B), turn:turn_a1:assistant (13 B)
    0:700      2026-03-02T09:00:03.080Z   41002 send-started       send 0 batch [turn:turn_a1:user, turn:turn_a1:assistant]
    0:775      2026-03-02T09:00:03.200Z   41002 send-acked         send 0
    0:807      2026-03-02T09:00:03.210Z   41002 commit-started     commit 0 (server count before 0)
    0:841      2026-03-02T09:00:03.410Z   41002 commit-acked       commit 0 task=task-0 archive=viking://session/zc-sess_clean/archive/0
    0:923      2026-03-02T09:00:04.410Z   41001 hook               prompt-submit turn=turn_b2 prompt="And hidden ones?"
    0:1031     2026-03-02T09:00:05.410Z   41001 hook               stop turn=turn_b2 response="`ls -a` shows dotfiles too." tools=0
    0:1151     2026-03-02T09:00:05.460Z   41002 worker-started     reason=stop
    0:1183     2026-03-02T09:00:05.480Z   41002 rollout-read       /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl bytes 2048..4100 of 4100, turns [turn_b2]
    0:1384     2026-03-02T09:00:05.485Z   41002 planned            turn:turn_b2:user (16 B), turn:turn_b2:assistant (27 B)
    0:1546     2026-03-02T09:00:05.490Z   41002 send-started       send 1 batch [turn:turn_b2:user, turn:turn_b2:assistant]
    0:1621     2026-03-02T09:00:05.610Z   41002 send-acked         send 1
    "#);
}

/// A record of a newer codec is shown with its reason, not skipped.
#[test]
fn dump_shows_undecodable_records() {
    insta::assert_snapshot!(on_golden("unreachable", &["dump", "{j}"]), @r#"
    0:32       2026-03-02T09:00:01.000Z   41001 hook               session-start session=sess_offline source=startup
    0:125      2026-03-02T09:00:02.000Z   41001 hook               prompt-submit turn=turn_a1 prompt="What is 2+2?"
    0:231      2026-03-02T09:00:03.000Z   41001 hook               stop turn=turn_a1 response="4." tools=0
    0:328      2026-03-02T09:00:03.050Z   41002 worker-started     reason=stop
    0:360      2026-03-02T09:00:03.070Z   41002 rollout-read       /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl bytes 0..800 of 800, turns [turn_a1]
    0:505      2026-03-02T09:00:03.075Z   41002 planned            turn:turn_a1:user (12 B), turn:turn_a1:assistant (2 B)
    0:638      2026-03-02T09:00:03.080Z   41002 send-started       send 0 batch [turn:turn_a1:user, turn:turn_a1:assistant]
    0:713      2026-03-02T09:00:03.230Z   41002 send-failed        send 0 status 0 retryable: "connection refused (127.0.0.1:1933)"
    0:784      2026-03-02T09:00:03.231Z   41002 server-unreachable retry after 30s: "connection refused (127.0.0.1:1933)"
    0:854      -                              - UNDECODABLE        record: unknown codec version 9 (this build reads up to 3)
    "#);
}

/// `--turn`: hooks, reads and plans of the turn, and the sends, outcomes and reconciliations carrying its keys.
#[test]
fn dump_filters_by_turn() {
    insta::assert_snapshot!(on_golden("in_doubt", &["dump", "{j}", "--turn", "turn_a1"]), @r#"
    0:123      2026-03-02T09:00:02.000Z   41001 hook               prompt-submit turn=turn_a1 prompt="Explain flock."
    0:229      2026-03-02T09:00:03.000Z   41001 hook               stop turn=turn_a1 response="flock(2) takes an advisory lock." tools=0
    0:386      2026-03-02T09:00:03.070Z   41002 rollout-read       /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl bytes 0..1900 of 1900, turns [turn_a1]
    0:593      2026-03-02T09:00:03.075Z   41002 planned            turn:turn_a1:user (14 B), turn:turn_a1:assistant (32 B)
    0:758      2026-03-02T09:00:03.080Z   41002 send-started       send 0 batch [turn:turn_a1:user, turn:turn_a1:assistant]
    0:833      2026-03-02T09:00:03.230Z   41002 send-failed        send 0 status 0 retryable request-sent: "connection reset by peer"
    0:925      2026-03-02T09:00:03.580Z   41003 reconciled         sends [0] present [turn:turn_a1:user] absent [turn:turn_a1:assistant]
    0:1001     2026-03-02T09:00:03.585Z   41003 send-started       send 1 batch [turn:turn_a1:assistant]
    0:1058     2026-03-02T09:00:03.705Z   41003 send-acked         send 1
    "#);
}

/// `--kind`, repeatable.
#[test]
fn dump_filters_by_kind() {
    insta::assert_snapshot!(on_golden("set_aside", &["dump", "{j}", "--kind", "send-started", "--kind", "send-failed"]), @r#"
    0:758      2026-03-02T09:00:03.080Z   41002 send-started       send 0 batch [turn:turn_a1:user, turn:turn_a1:assistant]
    0:833      2026-03-02T09:00:03.230Z   41002 send-failed        send 0 status 400 permanent: "invalid message: content has a lone surrogate"
    0:916      2026-03-02T09:00:03.235Z   41002 send-started       send 1 single [turn:turn_a1:user]
    0:1000     2026-03-02T09:00:03.360Z   41002 send-started       send 2 single [turn:turn_a1:assistant]
    0:1057     2026-03-02T09:00:03.510Z   41002 send-failed        send 2 status 400 permanent: "invalid message: content has a lone surrogate"
    0:1480     2026-03-02T09:00:05.570Z   41002 send-started       send 3 single [turn:turn_b2:user]
    0:1532     2026-03-02T09:00:05.720Z   41002 send-failed        send 3 status 413 permanent: "message too large"
    "#);
}

/// `--kind` and `--turn` together.
#[test]
fn dump_filters_combine() {
    insta::assert_snapshot!(on_golden("clean", &["dump", "{j}", "--turn", "turn_b2", "--kind", "hook"]), @r#"
    0:923      2026-03-02T09:00:04.410Z   41001 hook               prompt-submit turn=turn_b2 prompt="And hidden ones?"
    0:1031     2026-03-02T09:00:05.410Z   41001 hook               stop turn=turn_b2 response="`ls -a` shows dotfiles too." tools=0
    "#);
}

#[test]
fn dump_json_is_one_object_per_event() {
    let out = on_golden("unreachable", &["dump", "{j}", "--json"]);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 10);
    let first = &lines[0];
    assert_eq!(first["position"], "0:32");
    assert_eq!(first["segment"], 0);
    assert_eq!(first["offset"], 32);
    assert_eq!(first["at"], "2026-03-02T09:00:01.000Z");
    assert_eq!(first["at_ms"], 1_772_442_001_000u64);
    assert_eq!(first["pid"], 41001);
    assert_eq!(first["kind"], "hook");
    assert_eq!(first["event"]["HookReceived"]["kind"], "SessionStart");
    assert_eq!(first["event"]["HookReceived"]["session_id"], "sess_offline");
    assert_eq!(
        lines[7]["event"]["SendFailed"]["error"],
        "connection refused (127.0.0.1:1933)"
    );
    assert_eq!(lines[9]["kind"], "undecodable");
    assert!(lines[9]["error"]
        .as_str()
        .unwrap()
        .contains("unknown codec version 9"));
}

#[test]
fn a_bare_session_id_is_looked_up_under_the_state_root() {
    let tmp = tempfile::tempdir().unwrap();
    crate::copy_journal(&golden("clean"), &tmp.path().join("journals/sess_clean"));
    let by_id = ovreplay()
        .args(["dump", "sess_clean", "--state-dir"])
        .arg(tmp.path())
        .assert()
        .success();
    let by_path = on_golden("clean", &["dump", "{j}"]);
    assert_eq!(String::from_utf8_lossy(&by_id.get_output().stdout), by_path);
    ovreplay()
        .env("OVHOOK_STATE_DIR", tmp.path())
        .args(["dump", "sess_clean", "--kind", "commit-acked"])
        .assert()
        .success()
        .stdout(predicate::str::contains("commit 0 task=task-0"));
    ovreplay()
        .args(["dump", "sess_nope", "--state-dir"])
        .arg(tmp.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no journal for session sess_nope"));
}

#[test]
fn dump_exit_codes() {
    ovreplay()
        .args(["dump", "/nonexistent/journal"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "/nonexistent/journal is not a journal: no such directory",
        ));
    let tmp = tempfile::tempdir().unwrap();
    ovreplay()
        .arg("dump")
        .arg(tmp.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no journal segment (*.ovj) in it"));
    assert!(
        std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
        "dump must not create anything in a folder that is not a journal"
    );
    let j = golden("clean");
    ovreplay()
        .arg("dump")
        .arg(&j)
        .args(["--kind", "explosion"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown event kind 'explosion'"));
    ovreplay().args(["dump"]).assert().code(2);
    ovreplay().args(["dump", "a", "b"]).assert().code(2);
}

#[test]
fn broken_pipe_exits_0() {
    // `ovreplay dump … | head -1`: the reader goes away; ovreplay must exit 0, silently.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ovreplay"))
        .arg("dump")
        .arg(golden("clean"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
