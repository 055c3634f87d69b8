//! A journal whose active segment is corrupt is quarantined, never a dead end,
//! and never a source of duplicates; long journals are compacted.

use ov_engine::event::{Event, PlannedMessage};
use ov_engine::store::SessionStore;
use ov_engine::turn::{DedupKey, Role};
use ov_journal::Durability;

fn planned(turn: &str, role: Role) -> PlannedMessage {
    PlannedMessage {
        key: DedupKey::for_turn(turn, role),
        turn_id: Some(turn.into()),
        role,
        content: format!("{turn} {}", role.as_str()),
        raw_len: 10,
        interrupted: false,
    }
}

#[test]
fn corrupt_active_segment_is_quarantined_and_unsettled_work_put_in_doubt() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("journals").join("sess_q");
    {
        let store = SessionStore::open(&dir).expect("open");
        store
            .append(
                Event::MessagesPlanned {
                    messages: vec![planned("t1", Role::User), planned("t1", Role::Assistant)],
                },
                Durability::Sync,
            )
            .expect("plan");
        store
            .append(
                Event::SendStarted {
                    send_id: 0,
                    keys: vec![DedupKey::for_turn("t1", Role::User)],
                    single: false,
                },
                Durability::Sync,
            )
            .expect("send");
        store
            .append(Event::SendAcked { send_id: 0 }, Durability::Sync)
            .expect("ack");
        for i in 0..5 {
            store
                .append(
                    Event::Problem {
                        context: "filler".into(),
                        message: format!("{i}"),
                    },
                    Durability::Sync,
                )
                .expect("filler");
        }
    }
    // Flip a byte inside the last-but-one record: a bad frame followed by a valid one.
    let seg = std::fs::read_dir(&dir)
        .expect("ls")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "ovj"))
        .expect("segment");
    let mut bytes = std::fs::read(&seg).expect("read");
    let at = bytes.len() - 60;
    bytes[at] ^= 0x40;
    std::fs::write(&seg, &bytes).expect("write");

    let store = SessionStore::open(&dir).expect("quarantined open succeeds");
    let st = store.fold().expect("fold").state;
    // What was acknowledged before the damage stays acknowledged.
    assert!(st
        .acked()
        .any(|k| k == &DedupKey::for_turn("t1", Role::User)));
    // What was not is in doubt (reconciled with the server before any resend), not pending.
    assert!(st.outbox().is_empty(), "{:?}", st.outbox());
    let doubt: Vec<_> = st.sends.values().flat_map(|s| s.keys.clone()).collect();
    assert_eq!(doubt, vec![DedupKey::for_turn("t1", Role::Assistant)]);
    assert!(
        st.problems.iter().any(|p| p.contains("corruption")),
        "{:?}",
        st.problems
    );
    // The damaged journal is kept next to it for inspection.
    let kept = std::fs::read_dir(dir.parent().expect("parent"))
        .expect("ls")
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().contains("sess_q.corrupt-"));
    assert!(kept);
    // And the session takes appends again.
    store
        .append(Event::ServerReachable, Durability::Buffered)
        .expect("append after quarantine");
}

#[test]
fn long_journals_compact_to_a_snapshot_with_the_same_state() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SessionStore::open(&tmp.path().join("j")).expect("open");
    for i in 0..40u64 {
        let turn = format!("t{i}");
        store
            .append(
                Event::MessagesPlanned {
                    messages: vec![planned(&turn, Role::User)],
                },
                Durability::Buffered,
            )
            .expect("plan");
    }
    let before = store.fold().expect("fold");
    assert_eq!(before.records_after_snapshot, 40);
    assert!(!store.compact_if_due(100, u64::MAX).expect("no-op"));
    assert!(store.compact_if_due(10, u64::MAX).expect("compact"));
    let after = store.fold().expect("fold");
    assert!(after.from_snapshot);
    assert_eq!(after.records_after_snapshot, 0);
    assert_eq!(after.state, before.state);
    // A second generation keeps every event behind it and the same state.
    store
        .append(Event::ServerReachable, Durability::Buffered)
        .expect("a");
    assert!(store.compact_if_due(0, u64::MAX).expect("compact again"));
    let mut expected = before.state.clone();
    expected.apply(&ov_engine::event::Envelope {
        at_ms: 0,
        pid: 0,
        event: Event::ServerReachable,
    });
    let again = store.fold().expect("fold").state;
    assert_eq!(
        store.events().expect("events").len(),
        41,
        "no event is dropped by compaction"
    );
    assert_eq!(again.messages, expected.messages);
    assert_eq!(again.events, expected.events);
}

#[test]
fn an_undecodable_snapshot_falls_back_to_the_events_behind_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SessionStore::open(&tmp.path().join("j")).expect("open");
    for i in 0..5u64 {
        store
            .append(
                Event::MessagesPlanned {
                    messages: vec![planned(&format!("t{i}"), Role::User)],
                },
                Durability::Buffered,
            )
            .expect("plan");
    }
    let whole = store.fold().expect("fold").state;
    // A snapshot written by a build whose State this one cannot decode.
    store
        .journal()
        .roll_with_snapshot(&[ov_engine::codec::CODEC_VERSION + 1, 2, 0xde, 0xad])
        .expect("roll");
    let folded = store.fold().expect("fold");
    assert!(!folded.from_snapshot);
    assert!(
        folded.skipped.iter().any(|s| s.reason.contains("snapshot")),
        "{:?}",
        folded.skipped
    );
    assert_eq!(folded.state.messages, whole.messages);
}

#[test]
fn a_large_active_segment_is_rolled_even_with_few_records() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SessionStore::open(&tmp.path().join("j")).expect("open");
    let mut big = planned("t0", Role::Assistant);
    big.content = "x".repeat(300_000);
    store
        .append(
            Event::MessagesPlanned {
                messages: vec![big],
            },
            Durability::Buffered,
        )
        .expect("plan");
    assert!(!store.compact_if_due(1000, 1 << 20).expect("small enough"));
    assert!(store.compact_if_due(1000, 100_000).expect("too large"));
    assert!(store.fold().expect("fold").from_snapshot);
    // Nothing after the snapshot: no pointless second roll.
    assert!(!store.compact_if_due(1000, 100_000).expect("nothing new"));
    // The snapshot itself is large (it holds the unsent content); a small
    // record after it does not make every run roll again.
    store
        .append(Event::ServerReachable, Durability::Buffered)
        .expect("a");
    assert!(!store.compact_if_due(1000, 100_000).expect("small tail"));
}
