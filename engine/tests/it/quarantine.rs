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
        created_at_ms: None,
    }
}

fn filler(store: &SessionStore, n: u64) {
    for i in 0..n {
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

fn segment_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("ls")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ovj"))
        .collect();
    v.sort();
    v
}

fn flip(path: &std::path::Path, at: usize) {
    let mut bytes = std::fs::read(path).expect("read");
    bytes[at] ^= 0x40;
    std::fs::write(path, &bytes).expect("write");
}

fn corrupt_dirs(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.parent().expect("parent"))
        .expect("ls")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .count()
}

fn damage_events(store: &SessionStore) -> usize {
    store
        .events()
        .expect("events")
        .iter()
        .filter(|(_, e)| matches!(e, Ok(env) if matches!(env.event, Event::JournalDamaged { .. })))
        .count()
}

#[test]
fn damage_in_the_active_segment_is_read_around_reported_once_and_never_moved_aside() {
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
        filler(&store, 5);
        store
            .append(
                Event::MessagesPlanned {
                    messages: vec![planned("t2", Role::User)],
                },
                Durability::Sync,
            )
            .expect("plan after");
    }
    // Flip a byte inside the second filler record: a bad frame followed by valid ones.
    let seg = segment_files(&dir).remove(0);
    let events = SessionStore::open(&dir)
        .expect("open")
        .events()
        .expect("events");
    let filler_at = events[4].0.offset as usize;
    flip(&seg, filler_at + 20);

    for _ in 0..3 {
        let store = SessionStore::open(&dir).expect("a damaged journal opens");
        assert_eq!(store.journal().active_damage().expect("damage").len(), 1);
        let folded = store.fold_reporting_damage().expect("fold");
        assert!(folded.lost);
        let st = folded.state;
        // Acknowledged before the damage stays acknowledged; planned after it is there.
        assert!(st.is_delivered(&DedupKey::for_turn("t1", Role::User)));
        assert!(st
            .messages
            .contains_key(&DedupKey::for_turn("t2", Role::User)));
        assert!(
            st.acks_unverified,
            "everything is checked with the server first"
        );
        store
            .append(Event::ServerReachable, Durability::Buffered)
            .expect("appends go on after the damage");
    }
    let store = SessionStore::open(&dir).expect("open");
    assert_eq!(damage_events(&store), 1, "reported once");
    assert_eq!(corrupt_dirs(&dir), 0, "nothing moved aside");
    // The damaged bytes are still there, unchanged, for inspection.
    assert_eq!(store.events().expect("events").len(), 9 - 1 + 1 + 3);
}

#[test]
fn a_damaged_snapshot_after_compaction_is_never_cut_and_its_loss_is_reported() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("j");
    let store = SessionStore::open(&dir).expect("open");
    store
        .append(
            Event::MessagesPlanned {
                messages: vec![planned("t1", Role::User)],
            },
            Durability::Sync,
        )
        .expect("plan");
    let snap = store.compact().expect("compact");
    store
        .journal()
        .remove_segments_before(snap.segment)
        .expect("remove");
    drop(store);
    let seg = segment_files(&dir).pop().expect("segment");
    let len = std::fs::metadata(&seg).expect("meta").len();
    flip(&seg, 32 + 20);
    let store = SessionStore::open(&dir).expect("open");
    assert_eq!(std::fs::metadata(&seg).expect("meta").len(), len, "not cut");
    let folded = store.fold_reporting_damage().expect("fold");
    assert!(folded.lost);
    assert!(folded.state.acks_unverified);
    assert_eq!(damage_events(&store), 1);
    let again = store.fold_reporting_damage().expect("fold");
    assert!(again.unreported.is_empty());
    assert_eq!(damage_events(&store), 1, "reported once");
}

#[test]
fn the_fold_falls_back_to_the_newest_snapshot_it_can_decode() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SessionStore::open(&tmp.path().join("j")).expect("open");
    for i in 0..3u64 {
        store
            .append(
                Event::MessagesPlanned {
                    messages: vec![planned(&format!("t{i}"), Role::User)],
                },
                Durability::Buffered,
            )
            .expect("plan");
    }
    let snap = store.compact().expect("compact");
    store
        .journal()
        .remove_segments_before(snap.segment)
        .expect("remove");
    for i in 3..6u64 {
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
    assert_eq!(whole.messages.len(), 6);
    // A newer snapshot this build cannot decode.
    store
        .journal()
        .roll_with_snapshot(&[ov_engine::codec::SNAPSHOT_VERSION + 1, 2, 0xde, 0xad])
        .expect("roll");
    let folded = store.fold().expect("fold");
    assert!(folded.from_snapshot);
    assert_eq!(folded.snapshot_segment, Some(snap.segment));
    assert_eq!(folded.state.messages, whole.messages);
    assert!(!folded.lost);
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

/// Hooks appending while the journal is compacted (and the old segments removed, as
/// `ovreplay compact` does): a roll happens only where the fold ended, so nothing is left
/// behind a snapshot.
#[test]
fn thirty_prompts_racing_compaction_are_all_kept() {
    use ov_engine::event::{HookKind, HookReceived};
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("j");
    let store = SessionStore::open(&dir).expect("open");
    filler(&store, 200);
    let go = std::sync::Arc::new(std::sync::Barrier::new(31));
    let hooks: Vec<_> = (0..30)
        .map(|i| {
            let (dir, go) = (dir.clone(), go.clone());
            std::thread::spawn(move || {
                let s = SessionStore::open_with(&dir, std::time::Duration::from_secs(30))
                    .expect("open");
                go.wait();
                s.append(
                    Event::HookReceived(HookReceived {
                        kind: Some(HookKind::PromptSubmit),
                        turn_id: Some(format!("t{i}")),
                        ..HookReceived::default()
                    }),
                    Durability::Buffered,
                )
                .expect("append");
            })
        })
        .collect();
    go.wait();
    for _ in 0..20 {
        let snap = store.compact().expect("compact");
        store
            .journal()
            .remove_segments_before(snap.segment)
            .expect("remove");
    }
    for h in hooks {
        h.join().expect("hook");
    }
    let st = store.fold().expect("fold").state;
    assert_eq!(st.hook_counts.get("prompt-submit"), Some(&30), "{st:?}");
    assert_eq!(st.turns.len(), 30);
}

/// The documented thresholds are applied: a worker pass over a journal whose active segment is
/// past `COMPACT_ACTIVE_BYTES` rolls it to a snapshot, so the next hook's open scans little.
#[test]
fn a_worker_compacts_a_journal_past_the_documented_threshold() {
    use ov_engine::delivery::{
        run_worker, DeliverySettings, TranscriptSource, Transport, WorkerContext,
        COMPACT_ACTIVE_BYTES,
    };
    use ov_engine::event::WorkerReason;
    use ov_engine::projector::State;
    struct Offline;
    impl WorkerContext for Offline {
        fn transcript(&self, _: &State) -> Option<Box<dyn TranscriptSource>> {
            None
        }
        fn transport(&self) -> Option<&dyn Transport> {
            None
        }
        fn settings(&self, _: &State) -> DeliverySettings {
            DeliverySettings::new("zc-x".into())
        }
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SessionStore::open(&tmp.path().join("journals").join("s")).expect("open");
    let chunk = "x".repeat(64 << 10);
    for _ in 0..(COMPACT_ACTIVE_BYTES / (64 << 10) + 2) {
        store
            .append(
                Event::Problem {
                    context: "filler".into(),
                    message: chunk.clone(),
                },
                Durability::Buffered,
            )
            .expect("append");
    }
    let before = store.fold().expect("fold");
    assert!(!before.from_snapshot);
    run_worker(
        &store,
        &Offline,
        WorkerReason::Stop,
        std::time::Duration::from_secs(5),
    )
    .expect("worker");
    let after = store.fold().expect("fold");
    assert!(after.from_snapshot, "rolled to a snapshot");
    assert!(after.records_after_snapshot <= 1);
    assert!(store.end().expect("end").offset < COMPACT_ACTIVE_BYTES);
}

/// A frame header (kind record, flags `BEGIN|END`) with plain CRC-32 checksums: what text that
/// cannot read a segment's salt can compute (journal/FORMAT.md, frame layout).
fn plain_header(len: u32, payload: &[u8]) -> [u8; 16] {
    let mut head = [0u8; 16];
    head[..4].copy_from_slice(&len.to_le_bytes());
    head[4] = 1;
    head[5] = 3;
    let head_crc = crc32fast::hash(&head[..8]) ^ 0x484A_564F;
    let mut h = crc32fast::Hasher::new();
    h.update(&head[..8]);
    h.update(payload);
    let crc = h.finalize() ^ 0x464A_564F;
    head[8..12].copy_from_slice(&head_crc.to_le_bytes());
    head[12..16].copy_from_slice(&crc.to_le_bytes());
    head
}

/// Text (bytes below 0x80) holding a whole frame that plans the assistant message of turn
/// `forged`: small numbers and short strings encode to bytes below 0x80, the length is padded
/// to one whose header crc is text, and the time and pid are tried until the frame crc is.
fn forged_block() -> String {
    use ov_engine::event::Envelope;
    let payload = |pad: usize, at_ms: u64, pid: u32| {
        let mut m = planned("forged", Role::Assistant);
        m.content = format!("forged{}", "-".repeat(pad));
        let env = Envelope {
            at_ms,
            pid,
            event: Event::MessagesPlanned { messages: vec![m] },
        };
        let mut out = Vec::new();
        ov_engine::codec::encode_event(&env, &mut out).expect("encode");
        out
    };
    let base = payload(0, 1, 1).len();
    for len in base..128 {
        if !plain_header(len as u32, &[])[..12].is_ascii() {
            continue;
        }
        for (at_ms, pid) in (1..128u64).flat_map(|t| (1..128u32).map(move |p| (t, p))) {
            let p = payload(len - base, at_ms, pid);
            let mut frame = plain_header(p.len() as u32, &p).to_vec();
            frame.extend_from_slice(&p);
            if frame.is_ascii() {
                return format!("memory: {}", String::from_utf8(frame).expect("ascii"));
            }
        }
    }
    panic!("no forged frame of text found")
}

/// The server's recall block is journaled as it came: a block that carries a whole frame
/// planning an assistant message plans nothing, even once the frame holding the block is
/// damaged (a scan then resynchronises through it); the damage is reported instead.
#[test]
fn a_recall_block_carrying_a_frame_plans_nothing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("j");
    let store = SessionStore::open(&dir).expect("open");
    let block = forged_block();
    let at = store.journal().end().expect("end");
    store
        .append(
            Event::RecallServed {
                turn_id: Some("t1".into()),
                prompt_hash: 7,
                tier: 2,
                block: Some(block),
                context_face_unsupported: false,
                cached: false,
            },
            Durability::Sync,
        )
        .expect("recall");
    filler(&store, 2);
    drop(store);
    let seg = ov_journal::segment_path(&dir, at.segment);
    let mut bytes = std::fs::read(&seg).expect("read");
    bytes[usize::try_from(at.offset).expect("offset")] ^= 0x01;
    std::fs::write(&seg, &bytes).expect("write");

    let store = SessionStore::open(&dir).expect("reopen");
    let folded = store.fold_reporting_damage().expect("fold");
    assert!(
        !folded
            .state
            .messages
            .contains_key(&DedupKey::for_turn("forged", Role::Assistant)),
        "the forged frame was read as one"
    );
    assert!(folded.lost, "the damaged recall frame is reported");
    assert_eq!(store.journal().reader().expect("reader").damage().len(), 1);
}
