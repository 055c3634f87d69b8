//! Flipping every bit of a small journal: each flip is detected (an error with an offset) and
//! never silently cut as a torn tail (a flip proves no interrupted append); no flip ever yields
//! a frame that was not written.

use std::fs;

use ov_journal::{Entry, Error, Options};

use crate::common::{collect, copy_dir, golden};
use crate::spec::{self, expected, rolled_units};

#[test]
fn every_bit_flip_is_detected_or_harmless() {
    let src = golden("rolled");
    let units = rolled_units();
    let all = expected(&units).concat();
    let t = tempfile::tempdir().unwrap();
    let (mut errors, mut harmless) = (0usize, 0usize);
    for seg in 0..3u64 {
        let original = fs::read(spec::seg(&src, seg)).unwrap();
        for byte in 0..original.len() {
            for bit in 0..8 {
                let d = t.path().join(format!("{seg}-{byte}-{bit}"));
                copy_dir(&src, &d);
                let mut b = original.clone();
                b[byte] ^= 1 << bit;
                fs::write(spec::seg(&d, seg), &b).unwrap();
                let outcome: Result<_, Error> = (|| {
                    let j = ov_journal::Journal::open(&d, Options::default())?;
                    let r = j.reader()?;
                    Ok(collect(&r))
                })();
                let at = format!("segment {seg} byte {byte} bit {bit}");
                match outcome {
                    Err(e) => {
                        assert!(
                            matches!(
                                e,
                                Error::Corruption { .. }
                                    | Error::NotAJournal { .. }
                                    | Error::UnsupportedVersion { .. }
                            ),
                            "{at}: unexpected {e:?}"
                        );
                        errors += 1;
                    }
                    Ok((frames, err)) => {
                        assert!(
                            frames.len() <= all.len() && frames[..] == all[..frames.len()],
                            "{at}: wrong frame"
                        );
                        if let Some(e) = err {
                            assert!(matches!(e, Error::Corruption { .. }), "{at}: {e:?}");
                            errors += 1;
                        } else {
                            assert_eq!(
                                frames.len(),
                                all.len(),
                                "{at}: frames lost without an error"
                            );
                            harmless += 1;
                        }
                    }
                }
                fs::remove_dir_all(&d).unwrap();
            }
        }
    }
    // Every flip lands in a checksummed field, so nothing is silently harmless.
    assert_eq!(harmless, 0, "harmless flips");
    assert!(errors > 0);
}

/// The same flips, read resynchronising: each costs at most the one unit it lands in (a flip in
/// a segment header costs only the header), never a unit after it, never a wrong frame; every
/// loss is reported as damage (none is cut as a torn tail), and the journal always opens.
#[test]
fn every_bit_flip_costs_at_most_its_own_unit() {
    let src = golden("rolled");
    let units = expected(&rolled_units());
    let all = units.concat();
    let t = tempfile::tempdir().unwrap();
    let mut damaged = 0usize;
    for seg in 0..3u64 {
        let original = fs::read(spec::seg(&src, seg)).unwrap();
        for byte in 0..original.len() {
            for bit in 0..8 {
                let d = t.path().join(format!("{seg}-{byte}-{bit}"));
                copy_dir(&src, &d);
                let mut b = original.clone();
                b[byte] ^= 1 << bit;
                fs::write(spec::seg(&d, seg), &b).unwrap();
                let at = format!("segment {seg} byte {byte} bit {bit}");
                let outcome = (|| {
                    let j = ov_journal::Journal::open(&d, Options::default())?;
                    let r = j.reader()?;
                    let mut frames = Vec::new();
                    let mut damage = 0;
                    for e in r.entries() {
                        match e? {
                            Entry::Frame(f) => frames.push((f.kind, f.payload.to_vec())),
                            Entry::Damage(_) => damage += 1,
                        }
                    }
                    Ok::<_, Error>((frames, damage))
                })();
                match outcome {
                    // A flipped magic or version byte is damage to the header (its checksum
                    // verifies with ours put back), not a foreign or newer file.
                    Err(e) => panic!("{at}: the journal does not open: {e:?}"),
                    Ok((frames, damage)) => {
                        let lost: Vec<usize> = (0..units.len())
                            .filter(|i| !units[*i].iter().all(|f| frames.contains(f)))
                            .collect();
                        let mut want = all.clone();
                        if let [i] = lost[..] {
                            want.retain(|f| !units[i].contains(f));
                        }
                        assert_eq!(frames, want, "{at}: wrong frames (lost units {lost:?})");
                        assert!(lost.len() <= 1, "{at}: lost units {lost:?}");
                        if damage > 0 {
                            damaged += 1;
                        } else {
                            assert!(lost.is_empty(), "{at}: lost units {lost:?} without damage");
                        }
                    }
                }
                fs::remove_dir_all(&d).unwrap();
            }
        }
    }
    assert!(damaged > 0);
}
