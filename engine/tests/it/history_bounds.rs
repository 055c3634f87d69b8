//! History stays bounded: a snapshot holds eight bytes per delivered message (its identity),
//! never its text, and the hook liveness of the latest turns only; what was delivered is
//! never planned again.

use ov_engine::codec;
use ov_engine::delivery::DeliverySettings;
use ov_engine::event::{Envelope, Event};
use ov_engine::projector::{State, KEPT_TURN_LIVENESS};
use ov_engine::retention;
use ov_engine::store::SessionStore;
use ov_engine::turn::{DedupKey, FileIdentity, Role, TranscriptChunk, TurnFragment};
use ov_journal::Durability;

#[path = "../../benches/synthetic.rs"]
#[expect(
    dead_code,
    reason = "the benchmark uses session(); this test only turns()"
)]
mod synthetic;

fn snapshot_len(s: &State) -> usize {
    let mut buf = Vec::new();
    codec::encode_snapshot(s, &mut buf).expect("every state encodes");
    buf.len()
}

/// Delivered turns cost their two identities in a snapshot (16 bytes a turn), whatever
/// their text: 5,000 turns padded to a realistic length fit in 16 bytes a turn plus a
/// constant, and 4,500 more turns add no more than 16.5 bytes each.
#[test]
fn a_snapshot_grows_by_sixteen_bytes_a_delivered_turn() {
    let pad = " Then the next step of the plan, described at length.".repeat(8);
    let small = State::fold(&synthetic::turns(0, 500, &pad));
    let big = State::fold(&synthetic::turns(0, 5_000, &pad));
    assert_eq!(big.commit.acked_total, 10_000);
    assert!(big.messages.is_empty(), "every delivered record let go");
    assert_eq!(big.delivered.len(), 10_000);
    assert_eq!(big.turns.len(), KEPT_TURN_LIVENESS);
    let (a, b) = (snapshot_len(&small), snapshot_len(&big));
    assert!(b <= 16 * 5_000 + 16 * 1024, "5,000 turns: {b} bytes");
    assert!(
        (b - a) * 2 <= 33 * 4_500,
        "500 turns: {a} bytes, 5,000 turns: {b} bytes"
    );
    // The snapshot gives the same state back, and the rest of the session folds onto it.
    let mut back = codec::decode_snapshot(&{
        let mut buf = Vec::new();
        codec::encode_snapshot(&big, &mut buf).expect("encode");
        buf
    })
    .expect("decode");
    assert_eq!(back, big);
    let more = synthetic::turns(5_000, 10, &pad);
    let mut whole = big.clone();
    for e in &more {
        back.apply(e);
        whole.apply(e);
    }
    assert_eq!(back, whole);
}

/// A rollout re-read from its first byte (rotated, or its position lost) plans none of the
/// delivered turns again, although their records were let go long ago.
#[test]
fn a_rescan_plans_no_delivered_turn_whose_record_was_let_go() {
    let mut s = State::fold(&synthetic::turns(0, 1_000, ""));
    assert!(s.messages.is_empty());
    let fragments: Vec<TurnFragment> = (0..1_000usize)
        .map(|i| TurnFragment {
            turn_id: format!("turn_{i:08}"),
            prompt: Some(format!("Task {i}: change the module and run the checks.")),
            final_text: Some(format!("answer {i}")),
            last_text: Some(format!("answer {i}")),
            finished: true,
            calls: 1,
            superseded: i + 1 < 1_000,
            ..TurnFragment::default()
        })
        .collect();
    s.apply(&Envelope {
        at_ms: 1_900_000_000_000,
        pid: 1,
        event: Event::RolloutRead {
            path: "/r/model-io-sess_bench.jsonl".into(),
            chunk: TranscriptChunk {
                identity: FileIdentity { dev: 9, ino: 99 },
                start: 0,
                end: 4_000_000,
                file_len: 4_000_000,
                rescanned: true,
                fragments,
                skipped_lines: 0,
                bad_lines: 0,
                tools: Vec::new(),
            },
        },
    });
    s.apply(&Envelope {
        at_ms: 1_900_000_000_001,
        pid: 1,
        event: Event::OpenTurnsClosed,
    });
    let planned = ov_engine::plan::plan(&s, &DeliverySettings::new("zc-x".into()));
    assert!(planned.is_empty(), "{:?}", planned.first().map(|m| &m.key));
    assert!(s.is_delivered(&DedupKey::for_turn("turn_00000000", Role::User)));
}

fn store_with_turns(dir: &std::path::Path, first: usize, count: usize) -> SessionStore {
    let store = SessionStore::open(dir).expect("open");
    store
        .append_all(
            synthetic::turns(first, count, "")
                .into_iter()
                .map(|e| e.event)
                .collect(),
            Durability::Sync,
        )
        .expect("append");
    store
}

const DAYS_15: u64 = 15 * retention::DAY_MS;

/// Segments before the latest snapshot of a settled session go once the newest of them is
/// older than the retention, after an `Event::Pruned` that says what went; the state the
/// snapshot keeps is the same. Not before the retention, and not while a message waits.
#[test]
fn settled_segments_before_the_snapshot_are_pruned_after_the_retention() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("j");
    let store = store_with_turns(&dir, 0, 20);
    store.compact().expect("compact");
    store
        .append_all(
            synthetic::turns(20, 5, "")
                .into_iter()
                .map(|e| e.event)
                .collect(),
            Durability::Sync,
        )
        .expect("append");
    store.compact().expect("compact");
    let before = store.fold().expect("fold").state;
    let segs = |d: &std::path::Path| {
        ov_journal::prune::segment_files(d)
            .expect("ls")
            .iter()
            .map(|f| f.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(segs(&dir), vec![0, 1, 2]);
    let now = retention::now_ms();
    assert!(retention::prune_segments(&store, 14, now)
        .expect("prune")
        .is_none());
    let pruned = retention::prune_segments(&store, 14, now + DAYS_15).expect("prune");
    assert!(
        matches!(&pruned, Some(Event::Pruned { segments, bytes, retention_days: 14, .. })
            if segments == &vec![0, 1] && *bytes > 0),
        "{pruned:?}"
    );
    assert_eq!(segs(&dir), vec![2]);
    let after = store.fold().expect("fold");
    assert!(!after.lost && after.skipped.is_empty());
    assert_eq!(after.state.delivered, before.delivered);
    assert_eq!(after.state.commit, before.commit);
    assert!(after
        .state
        .is_delivered(&DedupKey::for_turn("turn_00000000", Role::User)));

    // A message waiting to be sent keeps the history.
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("j");
    let store = store_with_turns(&dir, 0, 3);
    store.compact().expect("compact");
    store
        .append(
            Event::MessagesPlanned {
                messages: vec![ov_engine::event::PlannedMessage {
                    key: DedupKey::for_turn("late", Role::User),
                    turn_id: Some("late".into()),
                    role: Role::User,
                    content: "late".into(),
                    raw_len: 4,
                    interrupted: false,
                    created_at_ms: None,
                }],
            },
            Durability::Sync,
        )
        .expect("append");
    store.compact().expect("compact");
    assert!(retention::prune_segments(&store, 14, now + DAYS_15)
        .expect("prune")
        .is_none());
}

/// A finished session's whole journal goes after the retention and leaves a tombstone; when
/// the session comes back, its first worker journals the loss before anything else, so what
/// the server holds decides before anything is sent.
#[test]
fn a_pruned_journal_leaves_a_tombstone_that_makes_its_return_verified() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("journals").join("sess_bench");
    let store = store_with_turns(&dir, 0, 3);
    let now = retention::now_ms();
    // Acknowledged but not committed: kept.
    assert!(retention::prune_journal(&dir, 14, now + DAYS_15)
        .expect("prune")
        .is_none());
    store
        .append_all(
            vec![
                Event::CommitStarted {
                    commit_id: 0,
                    commit_count_before: Some(0),
                },
                Event::CommitAcked {
                    commit_id: 0,
                    task_id: None,
                    archive_uri: None,
                },
            ],
            Durability::Sync,
        )
        .expect("commit");
    drop(store);
    assert!(retention::prune_journal(&dir, 14, now)
        .expect("prune")
        .is_none());
    let bytes = retention::prune_journal(&dir, 14, now + DAYS_15).expect("prune");
    assert!(bytes.is_some_and(|b| b > 0));
    assert!(!dir.exists());
    let stone = retention::tombstone(&dir);
    assert!(stone.is_file());
    assert!(ov_engine::store::session_dirs(tmp.path()).is_empty());

    let store = store_with_turns(&dir, 3, 1);
    assert!(retention::adopt_tombstone(&store).expect("adopt"));
    assert!(!stone.exists());
    let st = store.fold().expect("fold").state;
    assert!(st.acks_unverified, "the server is asked before any send");
    assert!(!retention::adopt_tombstone(&store).expect("adopt"));
}
