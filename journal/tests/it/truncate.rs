//! Truncating a golden journal at every byte offset: recovery yields exactly the longest prefix
//! of committed units that fits, every time it is reopened, and appending then works.

use std::fs::{self, OpenOptions};

use ov_journal::{
    Durability, Error, FrameKind, Journal, Options, RecoveryMode, SEGMENT_HEADER_LEN,
};
use rstest::rstest;

use crate::common::{copy_dir, golden, open_and_read};
use crate::spec::{self, expected, rolled_units, valid_units, Unit};

/// For each unit: (segment index, end offset in that segment).
fn unit_ends(units: &[Unit]) -> Vec<(u64, u64)> {
    let (mut seg, mut off) = (0u64, SEGMENT_HEADER_LEN);
    units
        .iter()
        .map(|u| {
            match u {
                Unit::Single(p) => off += 16 + p.len() as u64,
                Unit::Batch(ps) => off += ps.iter().map(|p| 16 + p.len() as u64).sum::<u64>(),
                Unit::Roll(s) => {
                    seg += 1;
                    off = SEGMENT_HEADER_LEN + 16 + s.len() as u64;
                }
            }
            (seg, off)
        })
        .collect()
}

#[rstest]
#[case::valid("valid", valid_units())]
#[case::rolled("rolled", rolled_units())]
fn truncation_at_every_offset_recovers_a_committed_prefix(
    #[case] name: &str,
    #[case] units: Vec<Unit>,
) {
    let ends = unit_ends(&units);
    let last_seg = ends.last().unwrap().0;
    let src = golden(name);
    let seg_file = spec::seg(&src, last_seg);
    let full = fs::read(&seg_file).unwrap();
    assert_eq!(full.len() as u64, ends.last().unwrap().1);
    let all = expected(&units);
    let t = tempfile::tempdir().unwrap();
    for cut in 0..=full.len() as u64 {
        // Units kept: all in earlier segments, plus those in the last one that end by `cut`
        // (none if the header itself is torn).
        let keep = ends
            .iter()
            .take_while(|(s, e)| *s < last_seg || (cut >= SEGMENT_HEADER_LEN && *e <= cut))
            .count();
        let want: Vec<(FrameKind, Vec<u8>)> = all[..keep].concat();
        let at_boundary =
            cut == full.len() as u64 || ends.iter().any(|(s, e)| *s == last_seg && *e == cut);

        let d = t.path().join(format!("{name}-{cut}"));
        copy_dir(&src, &d);
        let f = OpenOptions::new()
            .write(true)
            .open(spec::seg(&d, last_seg))
            .unwrap();
        f.set_len(cut).unwrap();
        drop(f);

        // Absolute consistency refuses anything torn and changes nothing.
        let strict = Options {
            recovery: RecoveryMode::AbsoluteConsistency,
            ..Options::default()
        };
        match Journal::open(&d, strict) {
            Ok(_) => assert!(
                at_boundary || cut == SEGMENT_HEADER_LEN,
                "cut {cut}: torn tail accepted"
            ),
            Err(Error::TornTail { .. }) => assert!(!at_boundary, "cut {cut}: clean tail refused"),
            Err(e) => panic!("cut {cut}: {e}"),
        }

        for round in 0..3 {
            let (got, err) =
                open_and_read(&d, Options::default()).unwrap_or_else(|e| panic!("cut {cut}: {e}"));
            assert!(err.is_none(), "cut {cut} round {round}: {err:?}");
            assert_eq!(got, want, "cut {cut} round {round}");
        }
        let j = Journal::open(&d, Options::default()).unwrap();
        j.append(b"after", Durability::Buffered).unwrap();
        let (got, err) = crate::common::collect(&j.reader().unwrap());
        assert!(err.is_none(), "cut {cut}: {err:?}");
        assert_eq!(got.len(), want.len() + 1);
        assert_eq!(got.last().unwrap().1, b"after");
        drop(j);
        fs::remove_dir_all(&d).unwrap();
    }
}
