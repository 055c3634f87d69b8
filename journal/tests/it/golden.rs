//! The committed golden journals in `testdata/journal-frames/` and what opening each must do.

use std::fs;
use std::time::Duration;

use ov_journal::{
    CorruptionKind, Damage, Entry, Error, FrameKind, Journal, Options, Reader, RecoveryMode,
    FORMAT_VERSION,
};

use crate::common::{capture_logs, collect, golden, golden_copy, logged, open_and_read};
use crate::spec::{self, expected, rolled_units, valid_units};

/// The committed files are exactly what the generator writes (so they can be re-made, and a
/// format change that alters them is noticed).
#[test]
fn generator_reproduces_committed_files() {
    let t = tempfile::tempdir().unwrap();
    spec::generate(t.path()).unwrap();
    let root = golden("");
    let mut names: Vec<_> = fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names.len(), 8);
    for name in names {
        let made = t.path().join(&name);
        let committed = root.join(&name);
        let mut files: Vec<_> = fs::read_dir(&made)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        files.sort();
        for f in files {
            let a = fs::read(made.join(&f)).unwrap();
            let b = fs::read(committed.join(&f))
                .unwrap_or_else(|e| panic!("{}: {e}", committed.join(&f).display()));
            assert!(
                a == b,
                "{} differs from the generator's output",
                committed.join(&f).display()
            );
        }
    }
}

#[test]
fn valid_reads_back_every_frame() {
    let (_t, d) = golden_copy("valid");
    let before = fs::read(spec::seg(&d, 0)).unwrap();
    let (frames, err) = open_and_read(&d, Options::default()).unwrap();
    assert!(err.is_none());
    assert_eq!(frames, expected(&valid_units()).concat());
    assert_eq!(
        fs::read(spec::seg(&d, 0)).unwrap(),
        before,
        "a valid journal is not modified by open"
    );
}

#[test]
fn rolled_reads_across_segments_and_finds_latest_snapshot() {
    let (_t, d) = golden_copy("rolled");
    let j = Journal::open(&d, Options::default()).unwrap();
    let r = j.reader().unwrap();
    let (frames, err) = collect(&r);
    assert!(err.is_none());
    assert_eq!(frames, expected(&rolled_units()).concat());
    assert_eq!(r.segments().count(), 3);
    let snap = r.latest_snapshot().unwrap();
    assert_eq!(snap.kind, FrameKind::Snapshot);
    assert!(snap.payload.starts_with(b"snap2"));
    assert_eq!(snap.position.segment, 2);
    // Reading from the snapshot on gives exactly the frames after it.
    let after: Vec<_> = r
        .frames_from(snap.next_position())
        .map(|f| f.unwrap().payload.to_vec())
        .collect();
    let all: Vec<_> = expected(&rolled_units()).concat();
    let tail: Vec<_> = all
        .iter()
        .skip_while(|(_, p)| !p.starts_with(b"snap2"))
        .skip(1)
        .map(|(_, p)| p.clone())
        .collect();
    assert_eq!(after, tail);
}

#[test]
fn torn_is_cut_to_the_last_whole_frame_with_a_warning() {
    capture_logs();
    let (_t, d) = golden_copy("torn");
    let (frames, err) = open_and_read(&d, Options::default()).unwrap();
    assert!(err.is_none());
    let units = valid_units();
    assert_eq!(frames, expected(&units[..units.len() - 1]).concat());
    let seg = spec::seg(&d, 0);
    let len = fs::metadata(&seg).unwrap().len();
    let warned = logged(&seg.display().to_string());
    assert!(
        warned
            .iter()
            .any(|l| l.starts_with("WARN") && l.contains(&format!("offset {len}"))),
        "expected a warning naming {} and offset {len}: {warned:?}",
        seg.display()
    );
    // Reopening again changes nothing.
    for _ in 0..5 {
        let (again, err) = open_and_read(&d, Options::default()).unwrap();
        assert!(err.is_none());
        assert_eq!(again, frames);
        assert_eq!(fs::metadata(&seg).unwrap().len(), len);
    }
}

#[test]
fn torn_under_absolute_consistency_is_refused_and_left_alone() {
    let (_t, d) = golden_copy("torn");
    let before = fs::read(spec::seg(&d, 0)).unwrap();
    let opts = Options {
        recovery: RecoveryMode::AbsoluteConsistency,
        ..Options::default()
    };
    match Journal::open(&d, opts) {
        Err(Error::TornTail { path, offset }) => {
            assert_eq!(path, spec::seg(&d, 0));
            assert_eq!(offset, before.len() as u64 + 5 - (16 + 19));
        }
        other => panic!("expected TornTail, got {other:?}"),
    }
    assert_eq!(fs::read(spec::seg(&d, 0)).unwrap(), before);
}

#[test]
fn bad_crc_is_damage_at_its_offset_never_decoded_and_every_unit_after_it_is_recovered() {
    let (_t, d) = golden_copy("bad-crc");
    let seg = spec::seg(&d, 0);
    let before = fs::read(&seg).unwrap();
    // The strict mode refuses it, changing nothing.
    let strict = Options {
        recovery: RecoveryMode::AbsoluteConsistency,
        ..Options::default()
    };
    match Journal::open(&d, strict) {
        Err(Error::Corruption { path, offset, kind }) => {
            assert_eq!(path, seg);
            assert_eq!(offset, 78);
            assert_eq!(kind, CorruptionKind::FrameChecksum);
        }
        other => panic!("expected Corruption, got {other:?}"),
    }
    // The tolerant mode keeps the damage in place, reports it, and appends after the last unit.
    let j = Journal::open(&d, Options::default()).unwrap();
    assert_eq!(fs::read(&seg).unwrap(), before, "open cut nothing");
    let units = valid_units();
    let batch_len: usize = expected(&units[2..3])
        .concat()
        .iter()
        .map(|(_, p)| 16 + p.len())
        .sum();
    let damage = j.active_damage().unwrap();
    assert_eq!(
        damage,
        vec![Damage {
            path: seg.clone(),
            segment: 0,
            offset: 78,
            len: batch_len as u64,
            kind: CorruptionKind::FrameChecksum,
        }]
    );
    j.append(b"after", ov_journal::Durability::Sync).unwrap();
    // A strict read yields the frames before it, then the error.
    let r = Reader::open(&d, Duration::from_secs(5)).unwrap();
    let (frames, err) = collect(&r);
    assert_eq!(frames, expected(&units[..2]).concat());
    let err = err.unwrap();
    assert!(
        matches!(err, Error::Corruption { offset: 78, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("offset 78"), "{err}");
    // A resynchronising read yields every whole unit but the damaged batch, then the new frame.
    let mut want = expected(&units[..2]).concat();
    want.extend(expected(&units[3..]).concat());
    want.push((FrameKind::Record, b"after".to_vec()));
    let mut got = Vec::new();
    let mut seen_damage = Vec::new();
    for e in r.entries() {
        match e.unwrap() {
            Entry::Frame(f) => got.push((f.kind, f.payload.to_vec())),
            Entry::Damage(d) => seen_damage.push(d),
        }
    }
    assert_eq!(got, want);
    assert_eq!(seen_damage, damage);
    assert_eq!(r.damage(), damage);
}

#[test]
fn future_version_is_refused_with_a_clear_error() {
    let (_t, d) = golden_copy("future-version");
    let err = Journal::open(&d, Options::default()).unwrap_err();
    match &err {
        Error::UnsupportedVersion {
            path, found, max, ..
        } => {
            assert_eq!(path, &spec::seg(&d, 0));
            assert_eq!(*found, 3);
            assert_eq!(*max, FORMAT_VERSION);
        }
        other => panic!("expected UnsupportedVersion, got {other:?}"),
    }
    assert!(err.to_string().contains("version 3"), "{err}");
    assert!(matches!(
        Reader::open(&d, Duration::from_secs(5)),
        Err(Error::UnsupportedVersion { found: 3, .. })
    ));
}

#[test]
fn zero_tail_never_parses_and_is_cut() {
    let (_t, d) = golden_copy("zero-tail");
    let valid_len = fs::metadata(spec::seg(&golden("valid"), 0)).unwrap().len();
    let (frames, err) = open_and_read(&d, Options::default()).unwrap();
    assert!(err.is_none());
    assert_eq!(frames, expected(&valid_units()).concat());
    assert_eq!(fs::metadata(spec::seg(&d, 0)).unwrap().len(), valid_len);
}

/// Every frame and damaged range a resynchronising read of `dir` yields.
fn entries(dir: &std::path::Path) -> (crate::common::Frames, Vec<Damage>) {
    let r = Reader::open(dir, Duration::from_secs(5)).unwrap();
    let (mut frames, mut damage) = (Vec::new(), Vec::new());
    for e in r.entries() {
        match e.unwrap() {
            Entry::Frame(f) => frames.push((f.kind, f.payload.to_vec())),
            Entry::Damage(d) => damage.push(d),
        }
    }
    (frames, damage)
}

/// `forged-frame` and `forged-header`: the prompt frame whose header is damaged is one damaged
/// range; nothing inside it is read as a frame, nothing after it is cut, and opening changes
/// no byte. The forged frame verifies with plain CRC-32 (as format version 1 would have read it).
#[rstest::rstest]
#[case::frame("forged-frame", spec::forged_frame_prompt())]
#[case::header("forged-header", spec::forged_header_prompt())]
fn a_forged_frame_in_a_prompt_is_never_read(#[case] name: &str, #[case] prompt: Vec<u8>) {
    let (_t, d) = golden_copy(name);
    let seg = spec::seg(&d, 0);
    let before = fs::read(&seg).unwrap();
    let j = Journal::open(&d, Options::default()).unwrap();
    assert_eq!(fs::read(&seg).unwrap(), before, "open cut nothing");
    let units = spec::forged_units(prompt.clone());
    let mut want = expected(&units[..2]).concat();
    want.extend(expected(&units[3..]).concat());
    let (frames, damage) = entries(&d);
    assert_eq!(frames, want);
    assert_eq!(
        damage,
        vec![Damage {
            path: seg.clone(),
            segment: 0,
            offset: spec::FORGED_AT as u64,
            len: 16 + prompt.len() as u64,
            kind: CorruptionKind::HeaderChecksum,
        }]
    );
    assert_eq!(j.active_damage().unwrap(), damage);
    // An append lands after the last frame, and the damage stays where it is.
    j.append(b"after", ov_journal::Durability::Sync).unwrap();
    drop(j);
    let (frames, again) = entries(&d);
    assert_eq!(frames.last().unwrap().1, b"after");
    assert_eq!(frames.len(), want.len() + 1);
    assert_eq!(again, damage);
}

/// The version 1 goldens (`testdata/journal-frames/v1/`, written by format version 1 and never
/// regenerated) open and read as they always did, and the first append seals the version 1
/// segment and starts a version 2 one; no byte of a version 1 segment is ever rewritten.
#[rstest::rstest]
#[case::valid("valid", valid_units(), 1)]
#[case::rolled("rolled", rolled_units(), 3)]
fn version_1_journals_open_read_and_migrate(
    #[case] name: &str,
    #[case] units: Vec<spec::Unit>,
    #[case] segments: u64,
) {
    let (_t, d) = golden_copy(&format!("v1/{name}"));
    let files = |d: &std::path::Path| -> Vec<Vec<u8>> {
        (0..segments)
            .map(|i| fs::read(spec::seg(d, i)).unwrap())
            .collect()
    };
    let before = files(&d);
    for b in &before {
        assert_eq!(&b[8..12], &1u32.to_le_bytes(), "a version 1 golden");
    }
    let (frames, err) = open_and_read(&d, Options::default()).unwrap();
    assert!(err.is_none());
    assert_eq!(frames, expected(&units).concat());
    assert_eq!(files(&d), before, "open and read change nothing");
    assert!(
        !spec::seg(&d, segments).exists(),
        "reading does not migrate"
    );

    let j = Journal::open(&d, Options::default()).unwrap();
    let p = j.append(b"new", ov_journal::Durability::Sync).unwrap();
    assert_eq!((p.segment, p.offset), (segments, 32));
    j.append_batch(&[b"n1", b"n2"], ov_journal::Durability::Sync)
        .unwrap();
    drop(j);
    let new = fs::read(spec::seg(&d, segments)).unwrap();
    assert_eq!(&new[8..12], &FORMAT_VERSION.to_le_bytes());
    assert_eq!(
        files(&d),
        before,
        "the version 1 segments are left as they are"
    );
    let (frames, err) = open_and_read(&d, Options::default()).unwrap();
    assert!(err.is_none());
    let mut want = expected(&units).concat();
    for p in [&b"new"[..], b"n1", b"n2"] {
        want.push((FrameKind::Record, p.to_vec()));
    }
    assert_eq!(frames, want);
}

/// The damaged version 1 goldens read with version 1 rules as before: a torn tail is cut, zero
/// fill never parses, a bad crc is damage at its offset with every unit after it read.
#[test]
fn damaged_version_1_journals_recover_as_before() {
    let units = valid_units();
    let (_t, d) = golden_copy("v1/torn");
    let (frames, err) = open_and_read(&d, Options::default()).unwrap();
    assert!(err.is_none());
    assert_eq!(frames, expected(&units[..units.len() - 1]).concat());

    let (_t, d) = golden_copy("v1/zero-tail");
    let (frames, err) = open_and_read(&d, Options::default()).unwrap();
    assert!(err.is_none());
    assert_eq!(frames, expected(&units).concat());

    let (_t, d) = golden_copy("v1/bad-crc");
    let (frames, damage) = entries(&d);
    let mut want = expected(&units[..2]).concat();
    want.extend(expected(&units[3..]).concat());
    assert_eq!(frames, want);
    assert_eq!(damage.len(), 1);
    assert_eq!(damage[0].offset, 78);
    assert_eq!(damage[0].kind, CorruptionKind::FrameChecksum);
}
