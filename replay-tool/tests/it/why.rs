//! `ovreplay why` on the golden journals: one story per verdict.

use predicates::prelude::*;

use crate::{on_golden, ovreplay};

/// On the server and committed.
#[test]
fn why_committed() {
    insta::assert_snapshot!(on_golden("clean", &["why", "{j}", "turn_a1"]), @r#"
    turn turn_a1 of session sess_clean
    2026-03-02T09:00:02.000Z  0:123    UserPromptSubmit hook received (pid 41001): prompt "How do I list files?"
    2026-03-02T09:00:03.000Z  0:235    Stop hook received (pid 41001): answer "Use `ls -la`."
    2026-03-02T09:00:03.070Z  0:373    read from the rollout /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl, bytes 0..2048: 1 model call(s), the prompt, a final answer
    2026-03-02T09:00:03.075Z  0:548    planned as 2 message(s): user (turn:turn_a1:user, 20 B), assistant (turn:turn_a1:assistant, 13 B)
    2026-03-02T09:00:03.080Z  0:700    sent user (turn:turn_a1:user) and assistant (turn:turn_a1:assistant) in send 0 (a batch of 2, pid 41002)
    2026-03-02T09:00:03.200Z  0:775    send 0 acknowledged by the server
    2026-03-02T09:00:03.210Z  0:807    commit 0 started, covering this turn's acknowledged messages
    2026-03-02T09:00:03.410Z  0:841    commit 0 acknowledged: the turn is committed
    verdict: on the server (acknowledged at 2026-03-02T09:00:03.200Z, committed by commit 0)
    "#);
}

/// On the server, no commit after its acknowledgement yet.
#[test]
fn why_acknowledged_not_committed() {
    insta::assert_snapshot!(on_golden("clean", &["why", "{j}", "turn_b2"]), @r#"
    turn turn_b2 of session sess_clean
    2026-03-02T09:00:04.410Z  0:923    UserPromptSubmit hook received (pid 41001): prompt "And hidden ones?"
    2026-03-02T09:00:05.410Z  0:1031   Stop hook received (pid 41001): answer "`ls -a` shows dotfiles too."
    2026-03-02T09:00:05.480Z  0:1183   read from the rollout /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl, bytes 2048..4100: 1 model call(s), the prompt, a final answer
    2026-03-02T09:00:05.485Z  0:1384   planned as 2 message(s): user (turn:turn_b2:user, 16 B), assistant (turn:turn_b2:assistant, 27 B)
    2026-03-02T09:00:05.490Z  0:1546   sent user (turn:turn_b2:user) and assistant (turn:turn_b2:assistant) in send 1 (a batch of 2, pid 41002)
    2026-03-02T09:00:05.610Z  0:1621   send 1 acknowledged by the server
    verdict: on the server (acknowledged at 2026-03-02T09:00:05.610Z, not committed yet)
    "#);
}

/// In doubt, then reconciled: the present key is not resent, the absent one is.
#[test]
fn why_reconciled() {
    insta::assert_snapshot!(on_golden("in_doubt", &["why", "{j}", "turn_a1"]), @r#"
    turn turn_a1 of session sess_doubt
    2026-03-02T09:00:02.000Z  0:123    UserPromptSubmit hook received (pid 41001): prompt "Explain flock."
    2026-03-02T09:00:03.000Z  0:229    Stop hook received (pid 41001): answer "flock(2) takes an advisory lock."
    2026-03-02T09:00:03.070Z  0:386    read from the rollout /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl, bytes 0..1900: 1 model call(s), the prompt, a final answer
    2026-03-02T09:00:03.075Z  0:593    planned as 2 message(s): user (turn:turn_a1:user, 14 B), assistant (turn:turn_a1:assistant, 32 B)
    2026-03-02T09:00:03.080Z  0:758    sent user (turn:turn_a1:user) and assistant (turn:turn_a1:assistant) in send 0 (a batch of 2, pid 41002)
    2026-03-02T09:00:03.230Z  0:833    send 0 failed with a network error: "connection reset by peer"; the request had left, so the send is in doubt until reconciled with the server
    2026-03-02T09:00:03.580Z  0:925    in-doubt send(s) [0] reconciled with the server: the server already holds user (turn:turn_a1:user) (counted as acknowledged, not resent); the server does not hold assistant (turn:turn_a1:assistant) (back to the outbox)
    2026-03-02T09:00:03.585Z  0:1001   sent assistant (turn:turn_a1:assistant) in send 1 (a batch of 1, pid 41003)
    2026-03-02T09:00:03.705Z  0:1058   send 1 acknowledged by the server
    verdict: on the server (acknowledged at 2026-03-02T09:00:03.705Z, not committed yet)
    "#);
}

/// A send with no outcome.
#[test]
fn why_in_doubt() {
    insta::assert_snapshot!(on_golden("in_doubt", &["why", "{j}", "turn_b2"]), @r#"
    turn turn_b2 of session sess_doubt
    2026-03-02T09:00:04.705Z  0:1090   UserPromptSubmit hook received (pid 41001): prompt "And fcntl locks?"
    2026-03-02T09:00:05.705Z  0:1198   Stop hook received (pid 41001): answer "fcntl locks are per process."
    2026-03-02T09:00:05.775Z  0:1351   read from the rollout /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl, bytes 1900..3700: 1 model call(s), the prompt, a final answer
    2026-03-02T09:00:05.780Z  0:1554   planned as 2 message(s): user (turn:turn_b2:user, 16 B), assistant (turn:turn_b2:assistant, 28 B)
    2026-03-02T09:00:05.785Z  0:1717   sent user (turn:turn_b2:user) and assistant (turn:turn_b2:assistant) in send 2 (a batch of 2, pid 41002)
    verdict: not known to be on the server: send 2 started 2026-03-02T09:00:05.785Z by pid 41002 has no recorded outcome (in doubt); the next worker checks the server before any resend
    "#);
}

/// Batch refused for good, split; one message acknowledged, one set aside.
#[test]
fn why_partly_set_aside() {
    insta::assert_snapshot!(on_golden("set_aside", &["why", "{j}", "turn_a1"]), @r#"
    turn turn_a1 of session sess_aside
    2026-03-02T09:00:02.000Z  0:123    UserPromptSubmit hook received (pid 41001): prompt "Summarise the log."
    2026-03-02T09:00:03.000Z  0:233    Stop hook received (pid 41001): answer "The log shows three restarts."
    2026-03-02T09:00:03.070Z  0:387    read from the rollout /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl, bytes 0..1500: 1 model call(s), the prompt, a final answer
    2026-03-02T09:00:03.075Z  0:592    planned as 2 message(s): user (turn:turn_a1:user, 18 B), assistant (turn:turn_a1:assistant, 29 B)
    2026-03-02T09:00:03.080Z  0:758    sent user (turn:turn_a1:user) and assistant (turn:turn_a1:assistant) in send 0 (a batch of 2, pid 41002)
    2026-03-02T09:00:03.230Z  0:833    send 0 failed with HTTP 400: "invalid message: content has a lone surrogate"; refused for good; the batch will be split and each message sent on its own
    2026-03-02T09:00:03.235Z  0:916    sent user (turn:turn_a1:user) in send 1 (one request per message, pid 41002)
    2026-03-02T09:00:03.355Z  0:968    send 1 acknowledged by the server
    2026-03-02T09:00:03.360Z  0:1000   sent assistant (turn:turn_a1:assistant) in send 2 (one request per message, pid 41002)
    2026-03-02T09:00:03.510Z  0:1057   send 2 failed with HTTP 400: "invalid message: content has a lone surrogate"; refused for good: turn:turn_a1:assistant set aside
    verdict: partly on the server (1 message(s) acknowledged); the rest set aside — the server refused it for good (turn:turn_a1:assistant: 400: invalid message: content has a lone surrogate)
    "#);
}

/// The only message refused for good.
#[test]
fn why_set_aside() {
    insta::assert_snapshot!(on_golden("set_aside", &["why", "{j}", "turn_b2"]), @r#"
    turn turn_b2 of session sess_aside
    2026-03-02T09:00:04.510Z  0:1140   UserPromptSubmit hook received (pid 41001): prompt "Paste the whole log here."
    2026-03-02T09:00:05.510Z  0:1257   Stop hook received (pid 41001): answer ""
    2026-03-02T09:00:05.565Z  0:1382   planned as 1 message(s): user (turn:turn_b2:user, 25 B); no assistant message (no answer known)
    2026-03-02T09:00:05.570Z  0:1480   sent user (turn:turn_b2:user) in send 3 (one request per message, pid 41002)
    2026-03-02T09:00:05.720Z  0:1532   send 3 failed with HTTP 413: "message too large"; refused for good: turn:turn_b2:user set aside
    verdict: not on the server: set aside — the server refused it for good (turn:turn_b2:user: 413: message too large)
    "#);
}

/// Waiting for the server: the back-off.
#[test]
fn why_server_unreachable() {
    insta::assert_snapshot!(on_golden("unreachable", &["why", "{j}", "turn_a1"]), @r#"
    turn turn_a1 of session sess_offline
    2026-03-02T09:00:02.000Z  0:125    UserPromptSubmit hook received (pid 41001): prompt "What is 2+2?"
    2026-03-02T09:00:03.000Z  0:231    Stop hook received (pid 41001): answer "4."
    2026-03-02T09:00:03.070Z  0:360    read from the rollout /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl, bytes 0..800: 1 model call(s), the prompt, a final answer
    2026-03-02T09:00:03.075Z  0:505    planned as 2 message(s): user (turn:turn_a1:user, 12 B), assistant (turn:turn_a1:assistant, 2 B)
    2026-03-02T09:00:03.080Z  0:638    sent user (turn:turn_a1:user) and assistant (turn:turn_a1:assistant) in send 0 (a batch of 2, pid 41002)
    2026-03-02T09:00:03.230Z  0:713    send 0 failed with a network error: "connection refused (127.0.0.1:1933)"; the server could not be reached; the messages wait in the outbox for the back-off
    2026-03-02T09:00:03.231Z  0:784    the server could not be reached ("connection refused (127.0.0.1:1933)"); network work paused for 30s
    verdict: not on the server: waiting to be sent (server unreachable since 2026-03-02T09:00:03.231Z: connection refused (127.0.0.1:1933); next try after 2026-03-02T09:00:33.231Z)
    "#);
}

/// No Stop and no later turn.
#[test]
fn why_turn_still_open() {
    insta::assert_snapshot!(on_golden("no_stop", &["why", "{j}", "turn_b2"]), @r#"
    turn turn_b2 of session sess_open
    2026-03-02T09:00:04.200Z  0:796    UserPromptSubmit hook received (pid 41001): prompt "Now run the tests."
    2026-03-02T09:00:05.200Z  0:905    PreToolUse hook received (pid 41001): tool Bash
    2026-03-02T09:00:05.220Z  0:1000   read from the rollout /home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl, bytes 1000..1700: 1 model call(s), the prompt, no final answer yet
    verdict: not captured: no Stop and no later turn yet (turn still open)
    "#);
}

/// A turn id the journal never saw.
#[test]
fn why_unknown_turn() {
    insta::assert_snapshot!(on_golden("no_stop", &["why", "{j}", "turn_never"]), @r#"
    turn turn_never of session sess_open
    verdict: unknown turn id: never seen in this journal
    "#);
}

#[test]
fn why_json_has_events_and_a_verdict() {
    let out = on_golden("in_doubt", &["why", "{j}", "turn_a1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["turn_id"], "turn_a1");
    assert_eq!(v["session_id"], "sess_doubt");
    let events = v["events"].as_array().unwrap();
    assert_eq!(events.len(), 9);
    assert_eq!(events[0]["kind"], "hook");
    assert_eq!(events[0]["position"], "0:123");
    assert_eq!(events[6]["kind"], "reconciled");
    assert_eq!(v["verdict"]["kind"], "on-server");
    assert_eq!(v["verdict"]["on_server"], true);
    let out = on_golden("unreachable", &["why", "{j}", "turn_a1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verdict"]["kind"], "waiting");
    assert_eq!(v["verdict"]["on_server"], false);
}

#[test]
fn why_exit_codes() {
    ovreplay()
        .args(["why", "/nonexistent/journal", "turn_x"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is not a journal"));
    ovreplay()
        .args(["why", "/nonexistent/journal"])
        .assert()
        .code(2);
}

/// On the embedded default nothing is ever sent: the verdict says why, and what to do.
#[test]
fn why_never_sent_points_at_the_missing_server() {
    use ov_engine::event::{Event, PlannedMessage};
    use ov_engine::turn::{DedupKey, Role};
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("sess_embedded");
    let store = ov_engine::store::SessionStore::open(&dir).expect("open");
    store
        .append(
            Event::MessagesPlanned {
                messages: vec![PlannedMessage {
                    key: DedupKey::for_turn("turn_e", Role::User),
                    turn_id: Some("turn_e".into()),
                    role: Role::User,
                    content: "hello".into(),
                    raw_len: 5,
                    interrupted: false,
                    created_at_ms: None,
                }],
            },
            ov_journal::Durability::Buffered,
        )
        .expect("plan");
    drop(store);
    ovreplay()
        .args(["why"])
        .arg(&dir)
        .arg("turn_e")
        .assert()
        .success()
        .stdout(predicate::str::contains("never sent anything"))
        .stdout(predicate::str::contains("ovhook install --url"));
}

/// A journal written in a temporary folder from `events`; returns the folder and the path.
fn journal_of(events: Vec<ov_engine::event::Event>) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("j");
    let store = ov_engine::store::SessionStore::open(&dir).expect("open");
    for e in events {
        store
            .append(e, ov_journal::Durability::Buffered)
            .expect("append");
    }
    drop(store);
    let path = dir.to_str().expect("utf-8").to_owned();
    (tmp, path)
}

fn planned_turn(turn: &str) -> ov_engine::event::Event {
    use ov_engine::turn::{DedupKey, Role};
    ov_engine::event::Event::MessagesPlanned {
        messages: [Role::User, Role::Assistant]
            .into_iter()
            .map(|role| ov_engine::event::PlannedMessage {
                key: DedupKey::for_turn(turn, role),
                turn_id: Some(turn.into()),
                role,
                content: format!("{turn} {}", role.as_str()),
                raw_len: 10,
                interrupted: false,
                created_at_ms: None,
            })
            .collect(),
    }
}

/// A batch refused with 401: the fold keeps both messages pending, and the story says so
/// (the projector's classification), not "refused for good; the batch will be split".
#[test]
fn why_a_401_keeps_the_messages_waiting() {
    use ov_engine::event::Event;
    use ov_engine::turn::{DedupKey, Role};
    let keys = vec![
        DedupKey::for_turn("t1", Role::User),
        DedupKey::for_turn("t1", Role::Assistant),
    ];
    let (_tmp, j) = journal_of(vec![
        planned_turn("t1"),
        Event::SendStarted {
            send_id: 0,
            keys,
            single: false,
        },
        Event::SendFailed {
            send_id: 0,
            status: 401,
            retryable: false,
            error: "Invalid API key".into(),
            request_sent: true,
        },
    ]);
    let (code, out, err) = crate::run(&["why", &j, "t1"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("refused for good"), "{out}");
    assert!(!out.contains("split"), "{out}");
    assert!(out.contains("refused the credentials"), "{out}");
    assert!(
        out.contains("verdict: not on the server: waiting to be sent again"),
        "{out}"
    );
}

/// The server's trace id of the commit that covered the turn is in the story and the verdict.
#[test]
fn why_shows_the_commits_trace_id() {
    use ov_engine::event::Event;
    use ov_engine::turn::{DedupKey, Role};
    let (_tmp, j) = journal_of(vec![
        planned_turn("t1"),
        Event::SendStarted {
            send_id: 0,
            keys: vec![
                DedupKey::for_turn("t1", Role::User),
                DedupKey::for_turn("t1", Role::Assistant),
            ],
            single: false,
        },
        Event::SendAcked { send_id: 0 },
        Event::CommitStarted {
            commit_id: 0,
            commit_count_before: Some(0),
        },
        Event::CommitAcked {
            commit_id: 0,
            task_id: Some("task-1".into()),
            archive_uri: None,
        },
        Event::CommitTraced {
            commit_id: 0,
            trace_id: "9b665a77-b5a6-4cfc-87c1-7a32badf6c9f".into(),
        },
    ]);
    let (code, out, err) = crate::run(&["why", &j, "t1"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("commit 0: the server's trace id is 9b665a77-b5a6-4cfc-87c1-7a32badf6c9f"),
        "{out}"
    );
    assert!(
        out.contains("committed by commit 0, server trace id 9b665a77-b5a6-4cfc-87c1-7a32badf6c9f"),
        "{out}"
    );
}

/// A turn the transcript holds and no hook of ours saw (the plugin was disabled): `why` says it
/// is not sent and why; a refused turn and a forgotten session say theirs.
#[test]
fn why_a_turn_no_hook_saw_is_not_sent() {
    use ov_engine::event::{Event, HookKind, HookReceived};
    use ov_engine::turn::{TranscriptChunk, TurnFragment};
    let hook = |kind, turn: &str| {
        Event::HookReceived(HookReceived {
            kind: Some(kind),
            harness: "zcode".into(),
            session_id: Some("s".into()),
            turn_id: Some(turn.into()),
            prompt: (kind == HookKind::PromptSubmit).then(|| format!("prompt {turn}")),
            response_text: (kind == HookKind::Stop).then(|| format!("answer {turn}")),
            ..HookReceived::default()
        })
    };
    let frag = |id: &str, superseded: bool| TurnFragment {
        turn_id: id.into(),
        prompt: Some(format!("prompt {id}")),
        final_text: Some(format!("answer {id}")),
        last_text: Some(format!("answer {id}")),
        finished: true,
        calls: 1,
        superseded,
        ..TurnFragment::default()
    };
    let (_tmp, j) = journal_of(vec![
        hook(HookKind::PromptSubmit, "t1"),
        hook(HookKind::Stop, "t1"),
        hook(HookKind::PromptSubmit, "t3"),
        Event::CaptureRefused {
            turn_id: Some("t3".into()),
            reason: "paused (global)".into(),
        },
        Event::RolloutRead {
            path: "/r.jsonl".into(),
            chunk: TranscriptChunk {
                start: 0,
                end: 100,
                file_len: 100,
                fragments: vec![frag("t1", true), frag("t2", true), frag("t3", false)],
                ..TranscriptChunk::default()
            },
        },
        Event::OpenTurnsClosed,
    ]);
    let (code, out, err) = crate::run(&["why", &j, "t2"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("verdict: not sent: no hook of ours saw this turn"),
        "{out}"
    );
    let (_, out, _) = crate::run(&["why", &j, "t3"]);
    assert!(
        out.contains("a hook did not capture this turn (paused (global))")
            && out.contains("verdict: not sent: capture refused for this turn (paused (global))"),
        "{out}"
    );
}

/// `ovreplay sessions` counts the turns withheld for want of consent.
#[test]
fn sessions_count_withheld_turns() {
    use ov_engine::event::{Event, HookKind, HookReceived};
    use ov_engine::turn::{TranscriptChunk, TurnFragment};
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("journals").join("sess_w");
    let store = ov_engine::store::SessionStore::open(&dir).expect("open");
    let frag = |id: &str| TurnFragment {
        turn_id: id.into(),
        prompt: Some(format!("prompt {id}")),
        final_text: Some(format!("answer {id}")),
        last_text: Some(format!("answer {id}")),
        finished: true,
        calls: 1,
        superseded: id != "t3",
        ..TurnFragment::default()
    };
    for e in [
        Event::HookReceived(HookReceived {
            kind: Some(HookKind::Stop),
            harness: "zcode".into(),
            session_id: Some("sess_w".into()),
            turn_id: Some("t1".into()),
            ..HookReceived::default()
        }),
        Event::RolloutRead {
            path: "/r.jsonl".into(),
            chunk: TranscriptChunk {
                start: 0,
                end: 100,
                file_len: 100,
                fragments: vec![frag("t1"), frag("t2"), frag("t3")],
                ..TranscriptChunk::default()
            },
        },
    ] {
        store
            .append(e, ov_journal::Durability::Buffered)
            .expect("append");
    }
    drop(store);
    let root = tmp.path().to_str().expect("utf-8");
    let (code, out, err) = crate::run(&["sessions", "--state-dir", root, "--json"]);
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(rows[0]["withheld"], 2, "{out}");
}

/// After the retention pruned the segments before the snapshot, `why` still tells a delivered
/// turn's verdict from what is kept, and says what history was pruned.
#[test]
fn why_says_what_was_pruned() {
    let tmp = tempfile::tempdir().expect("tmp");
    let j = tmp.path().join("j");
    crate::copy_journal(&crate::golden("clean"), &j);
    let store = ov_engine::store::SessionStore::open(&j).expect("open");
    store.compact().expect("compact");
    store.compact().expect("compact");
    let later = ov_engine::retention::now_ms() + 15 * ov_engine::retention::DAY_MS;
    let pruned = ov_engine::retention::prune_segments(&store, 14, later).expect("prune");
    assert!(pruned.is_some());
    drop(store);
    let (code, out, err) = crate::run(&["why", j.to_str().expect("utf-8"), "turn_a1"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("history pruned: 2 segment(s) before the snapshot (0..=1"),
        "{out}"
    );
    assert!(out.contains("14-day retention"), "{out}");
    assert!(
        out.contains("verdict: on the server (acknowledged at an earlier time"),
        "{out}"
    );
}
