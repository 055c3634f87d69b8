//! Property tests: random sequences of appends, batches, buffered writers, rolls and reopens read
//! back exactly, at the positions returned; a random truncation recovers a prefix of whole units.

use std::fs::OpenOptions;

use ov_journal::{Durability, FrameKind, Journal, Options, Position, SEGMENT_HEADER_LEN};
use proptest::collection::vec;
use proptest::prelude::*;

use crate::common::collect;

#[derive(Debug, Clone)]
enum Op {
    Append(Vec<u8>, bool),
    Batch(Vec<Vec<u8>>),
    /// Units written through one `Writer`.
    Writer(Vec<Vec<Vec<u8>>>),
    Roll(Vec<u8>),
    Reopen,
}

fn payload() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        12 => vec(any::<u8>(), 0..48),
        1 => vec(any::<u8>(), 0..100_000),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (payload(), any::<bool>()).prop_map(|(p, s)| {
            let sync = s && p.len().is_multiple_of(4);
            Op::Append(p, sync)
        }),
        3 => vec(payload(), 1..6).prop_map(Op::Batch),
        2 => vec(vec(payload(), 1..4), 1..20).prop_map(Op::Writer),
        1 => payload().prop_map(Op::Roll),
        1 => Just(Op::Reopen),
    ]
}

/// One unit as written: its frames and where it starts and ends.
struct Unit {
    frames: Vec<(FrameKind, Vec<u8>)>,
    start: Position,
    end: Position,
}

fn size(ps: &[Vec<u8>]) -> u64 {
    ps.iter().map(|p| 16 + p.len() as u64).sum()
}

/// Runs `ops` on a new journal; returns it and the units written.
fn run(dir: &std::path::Path, ops: &[Op]) -> (Journal, Vec<Unit>) {
    let mut j = Journal::open(dir, Options::default()).unwrap();
    let mut units = Vec::new();
    let mut push = |frames: Vec<(FrameKind, Vec<u8>)>, start: Position| {
        let n: Vec<Vec<u8>> = frames.iter().map(|f| f.1.clone()).collect();
        let end = Position {
            segment: start.segment,
            offset: start.offset + size(&n),
        };
        units.push(Unit { frames, start, end });
    };
    for op in ops {
        match op {
            Op::Append(p, sync) => {
                let d = if *sync {
                    Durability::Sync
                } else {
                    Durability::Buffered
                };
                let pos = j.append(p, d).unwrap();
                push(vec![(FrameKind::Record, p.clone())], pos);
            }
            Op::Batch(ps) => {
                let refs: Vec<&[u8]> = ps.iter().map(Vec::as_slice).collect();
                let pos = j.append_batch(&refs, Durability::Buffered).unwrap();
                push(
                    ps.iter().map(|p| (FrameKind::Record, p.clone())).collect(),
                    pos,
                );
            }
            Op::Writer(us) => {
                let mut w = j.writer().unwrap();
                for ps in us {
                    let refs: Vec<&[u8]> = ps.iter().map(Vec::as_slice).collect();
                    let pos = w.append_batch(&refs).unwrap();
                    push(
                        ps.iter().map(|p| (FrameKind::Record, p.clone())).collect(),
                        pos,
                    );
                }
            }
            Op::Roll(s) => {
                let pos = j.roll_with_snapshot(s).unwrap();
                push(vec![(FrameKind::Snapshot, s.clone())], pos);
            }
            Op::Reopen => {
                drop(j);
                j = Journal::open(dir, Options::default()).unwrap();
            }
        }
    }
    (j, units)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_sequences_read_back_exactly(ops in vec(op(), 1..24), pick in any::<prop::sample::Index>()) {
        let t = tempfile::tempdir().unwrap();
        let (j, units) = run(&t.path().join("j"), &ops);
        let r = j.reader().unwrap();
        let frames: Vec<_> = r.frames().map(Result::unwrap).collect();
        let want: Vec<_> = units.iter().flat_map(|u| u.frames.clone()).collect();
        let got: Vec<_> = frames.iter().map(|f| (f.kind, f.payload.to_vec())).collect();
        prop_assert_eq!(&got, &want);
        // Each unit starts where its append said.
        let mut i = 0;
        for u in &units {
            prop_assert_eq!(frames[i].position, u.start);
            i += u.frames.len();
        }
        prop_assert_eq!(r.end(), units.last().map_or(r.end(), |u| u.end));
        prop_assert_eq!(j.end().unwrap(), r.end());
        // Reading from any unit's position yields exactly the rest.
        if !units.is_empty() {
            let k = pick.index(units.len());
            let rest: Vec<_> = r.frames_from(units[k].start).map(|f| f.unwrap().payload.to_vec()).collect();
            let want_rest: Vec<_> = units[k..].iter().flat_map(|u| u.frames.iter().map(|f| f.1.clone())).collect();
            prop_assert_eq!(rest, want_rest);
        }
        let last_snap = units.iter().rev().find(|u| u.frames[0].0 == FrameKind::Snapshot);
        prop_assert_eq!(r.latest_snapshot().map(|f| f.payload.to_vec()), last_snap.map(|u| u.frames[0].1.clone()));
    }

    #[test]
    fn random_truncation_recovers_whole_units(ops in vec(op(), 1..16), cut in any::<prop::sample::Index>()) {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("j");
        let (j, units) = run(&dir, &ops);
        let end = j.end().unwrap();
        drop(j);
        let seg = dir.join(format!("{:016x}.ovj", end.segment));
        let c = cut.index(end.offset as usize + 1) as u64;
        OpenOptions::new().write(true).open(&seg).unwrap().set_len(c).unwrap();
        let j = Journal::open(&dir, Options::default()).unwrap();
        let (got, err) = collect(&j.reader().unwrap());
        prop_assert!(err.is_none());
        let want: Vec<_> = units
            .iter()
            .take_while(|u| u.end.segment < end.segment || (c >= SEGMENT_HEADER_LEN && u.end.offset <= c))
            .flat_map(|u| u.frames.clone())
            .collect();
        prop_assert_eq!(got, want);
    }

    /// Bytes after the committed frames are never decoded. A torn tail is cut only when the bytes
    /// prove an interrupted append (fewer than a frame header, or zero fill); anything else is a
    /// damaged range, reported at its offset and kept, never cut (FORMAT.md).
    #[test]
    fn garbage_tail_never_decodes(ops in vec(op(), 1..8), garbage in vec(any::<u8>(), 1..512), zeros in any::<bool>()) {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("j");
        let (j, units) = run(&dir, &ops);
        let end = j.end().unwrap();
        drop(j);
        let seg = dir.join(format!("{:016x}.ovj", end.segment));
        let tail = if zeros { vec![0u8; garbage.len()] } else { garbage };
        let mut f = OpenOptions::new().append(true).open(&seg).unwrap();
        std::io::Write::write_all(&mut f, &tail).unwrap();
        drop(f);
        let want: Vec<_> = units.iter().flat_map(|u| u.frames.clone()).collect();
        let torn = tail.len() < 16 || tail.iter().all(|b| *b == 0);
        let j = Journal::open(&dir, Options::default()).unwrap();
        let (got, err) = collect(&j.reader().unwrap());
        prop_assert_eq!(got, want);
        let len = std::fs::metadata(&seg).unwrap().len();
        if torn {
            prop_assert!(err.is_none(), "{err:?}");
            prop_assert_eq!(j.end().unwrap(), end);
            prop_assert_eq!(len, end.offset, "a proven torn tail is cut");
        } else {
            match err {
                Some(ov_journal::Error::Corruption { offset, .. }) => {
                    prop_assert_eq!(offset, end.offset);
                }
                other => prop_assert!(false, "expected damage at {end:?}: {other:?}"),
            }
            prop_assert_eq!(len, end.offset + tail.len() as u64, "damage is never cut");
            let damage = j.active_damage().unwrap();
            prop_assert_eq!(damage.len(), 1);
            prop_assert_eq!((damage[0].offset, damage[0].len), (end.offset, tail.len() as u64));
        }
    }
}
