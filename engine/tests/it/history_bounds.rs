//! History stays bounded: a snapshot holds eight bytes per delivered message (its identity),
//! never its text, and the hook liveness of the latest turns only; what was delivered is
//! never planned again.

use ov_engine::codec;
use ov_engine::delivery::DeliverySettings;
use ov_engine::event::{Envelope, Event};
use ov_engine::projector::{State, KEPT_TURN_LIVENESS};
use ov_engine::turn::{DedupKey, FileIdentity, Role, RolloutChunk, TurnFragment};

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
            chunk: RolloutChunk {
                identity: FileIdentity { dev: 9, ino: 99 },
                start: 0,
                end: 4_000_000,
                file_len: 4_000_000,
                rescanned: true,
                fragments,
                skipped_lines: 0,
                bad_lines: 0,
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
