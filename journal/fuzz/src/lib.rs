//! Checks behind the `ov-journal` fuzz targets (`fuzz_targets/`), kept in a library so that
//! `cargo test` here replays every committed corpus and regression input on a stable toolchain.
//!
//! # Design
//!
//! `decode_frame`, `encode_frame` and `decode_segment_header` are private to `ov-journal`
//! (`mod format`). Rather than widen its API for fuzzing, [`format`] compiles the very same
//! source file, `journal/src/format.rs`, inside this crate, with `crate::error::CorruptionKind`
//! and `crate::FrameKind` resolved to the public `ov-journal` types. The `journal_open` target
//! goes through the public API only (`Reader::open`, `Journal::open`), so it exercises the
//! journal's own compiled copy of the same code.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ov_journal::{Durability, Journal, Options, Reader, RecoveryMode};

pub use ov_journal::FrameKind;

/// Lets `journal/src/format.rs` resolve `crate::error::CorruptionKind`.
mod error {
    pub use ov_journal::CorruptionKind;
}

/// `journal/src/format.rs`, compiled here (see the crate docs).
#[allow(dead_code, clippy::all)]
#[path = "../../src/format.rs"]
pub mod format;

use format::{
    decode_frame, decode_segment_header, encode_frame, encode_segment_header, DecodeError,
    HeaderError, Salt, SegmentHeader, FORMAT_VERSION, FRAME_HEADER_LEN, MAGIC,
    MIN_READ_VERSION, SEGMENT_HEADER_LEN,
};

/// The salt of the version 2 segments the targets build (a fixed one, so that seeds can hold
/// frames that verify); version 1 segments have [`Salt::NONE`].
pub const FUZZ_SALT: Salt = Salt(0x6675_7a7a_5f6f_766a);

/// Offsets tried per input by [`journal_frame`] (inputs are short; this bounds the cost).
const MAX_OFFSETS: usize = 4096;
/// Frames whose every truncation is re-decoded by [`journal_frame`].
const MAX_TRUNCATION_CHECK: usize = 4096;

/// `journal_frame`: `decode_frame` at every offset of `data`, and `decode_segment_header`.
///
/// * never panics;
/// * an accepted frame re-encodes (`encode_frame`) to exactly the bytes it was decoded from, and
///   every truncation of it decodes as `Truncated`, never as a frame or as damage;
/// * `Truncated` with a complete header means the claimed payload really runs past the data;
/// * 16 zero bytes never decode; the same holds after zeroing an input-chosen range;
/// * an accepted segment header re-encodes to the same 32 bytes.
pub fn journal_frame(data: &[u8]) {
    check_frames(data);
    // Zero a range chosen by the input (as a crash zero-fills the tail) and look again.
    if let [a, b, ..] = *data {
        let len = data.len();
        let from = usize::from(a) * len / 256;
        let to = (from + usize::from(b) * 4).min(len);
        let mut z = data.to_vec();
        if let Some(r) = z.get_mut(from..to) {
            r.fill(0);
        }
        check_frames(&z);
    }
    check_segment_header(data);
}

fn check_frames(data: &[u8]) {
    for salt in [Salt::NONE, FUZZ_SALT] {
        check_frames_with(data, salt);
    }
}

fn check_frames_with(data: &[u8], salt: Salt) {
    let h = FRAME_HEADER_LEN as usize;
    for at in 0..=data.len().min(MAX_OFFSETS) {
        let res = decode_frame(data, at, salt);
        let head = data.get(at..at + h);
        if head.is_some_and(|hd| hd.iter().all(|&b| b == 0)) {
            assert!(
                matches!(res, Err(DecodeError::Bad(_))),
                "16 zero bytes at {at} gave {res:?}"
            );
        }
        match res {
            Ok(d) => {
                assert_eq!(d.next, at + h + d.payload.len(), "next at {at}");
                assert_eq!(d.flags & !3, 0, "unknown flags accepted at {at}");
                let mut re = Vec::new();
                encode_frame(&mut re, salt, d.kind, d.flags, d.payload);
                assert_eq!(
                    Some(&re[..]),
                    data.get(at..d.next),
                    "frame at {at} does not re-encode to its bytes"
                );
                if d.payload.len() <= MAX_TRUNCATION_CHECK {
                    for cut in at..d.next {
                        let t = decode_frame(&data[..cut], at, salt);
                        assert!(
                            matches!(t, Err(DecodeError::Truncated)),
                            "frame at {at} cut at {cut} gave {t:?}"
                        );
                    }
                }
            }
            Err(DecodeError::Truncated) => {
                if let Some(hd) = head {
                    let claimed = u32::from_le_bytes([hd[0], hd[1], hd[2], hd[3]]) as usize;
                    assert!(
                        at + h + claimed > data.len(),
                        "Truncated at {at} but the {claimed}-byte payload fits"
                    );
                }
            }
            Err(DecodeError::Bad(_)) => {}
        }
    }
}

fn check_segment_header(data: &[u8]) {
    match decode_segment_header(data) {
        Ok(h) => {
            let mut re = Vec::new();
            encode_segment_header(&mut re, h);
            assert_eq!(
                Some(&re[..]),
                data.get(..SEGMENT_HEADER_LEN as usize),
                "segment header does not re-encode"
            );
        }
        Err(HeaderError::Version(v)) => {
            assert!(
                !(MIN_READ_VERSION..=FORMAT_VERSION).contains(&v),
                "version {v} refused as a version"
            );
            assert_eq!(data.get(..8), Some(&MAGIC[..]));
        }
        Err(HeaderError::Short) => {
            assert!(data.len() < SEGMENT_HEADER_LEN as usize);
        }
        Err(HeaderError::BadMagic | HeaderError::Corrupt(_)) => {}
    }
}

/// One frame as a reader saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// `segment:offset`.
    pub at: (u64, u64),
    /// Its kind.
    pub kind: FrameKind,
    /// Its payload.
    pub payload: Vec<u8>,
}

/// Every frame `Reader::open` yields, and whether the iteration ended with an error (`None` when
/// the open itself failed).
fn read_all(dir: &Path, budget: usize) -> Option<(Vec<Seen>, bool)> {
    let r = Reader::open(dir, LOCK_WAIT).ok()?;
    let _ = r.latest_snapshot();
    let _ = r.segments().count();
    let mut seen = Vec::new();
    let mut failed = false;
    for f in r.frames() {
        match f {
            Ok(f) => seen.push(Seen {
                at: (f.position.segment, f.position.offset),
                kind: f.kind,
                payload: f.payload.to_vec(),
            }),
            Err(_) => failed = true,
        }
        // Never loops forever: each frame takes at least 16 bytes.
        assert!(seen.len() <= budget, "reader yielded more frames than fit");
    }
    Some((seen, failed))
}

const LOCK_WAIT: Duration = Duration::from_millis(200);

/// Every file of `dir` (name, bytes), sorted.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.file_name().is_some_and(|n| n != "LOCK"))
                .map(|p| {
                    let b = fs::read(&p).unwrap_or_default();
                    (p, b)
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn opts(recovery: RecoveryMode) -> Options {
    Options {
        recovery,
        lock_timeout: LOCK_WAIT,
        create: false,
        ..Options::default()
    }
}

/// Where temp journals go: `$OVJ_FUZZ_TMP`, else `/dev/shm` when present, else the default.
fn tmp_root() -> PathBuf {
    if let Some(p) = std::env::var_os("OVJ_FUZZ_TMP") {
        return PathBuf::from(p);
    }
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        return shm.to_path_buf();
    }
    std::env::temp_dir()
}

fn segment_name(id: u64) -> String {
    format!("{id:016x}.ovj")
}

/// A segment of format `version` (1: plain CRC-32 frames, 2: keyed with [`FUZZ_SALT`]).
fn with_header(id: u64, version: u32, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(32 + body.len());
    let salt = if version == 1 { Salt::NONE } else { FUZZ_SALT };
    encode_segment_header(&mut v, SegmentHeader { id, version, salt });
    v.extend_from_slice(body);
    v
}

/// `journal_open`: the input becomes the segment file(s) of a temp journal, chosen by its first
/// byte (mod 4): `0` a valid version 1 header + the rest, `1` the rest as the whole file, `2` the
/// rest split in two (at the point given by bytes 1..3) into a sealed segment 0 (version 1) and
/// an active segment 1 (version 2), each with a valid header, `3` a valid version 2 header (salt
/// [`FUZZ_SALT`]) + the rest.
///
/// * `Reader::open` + iterating every frame, and `Journal::open`, never panic and terminate;
/// * `AbsoluteConsistency` changes nothing on disk, whatever it returns;
/// * after recovery (`TolerateTailCorruption`), the frames read are a prefix of those read
///   before it, and all of them when the reader saw no error;
/// * recovery is idempotent: a second open leaves every byte as the first left it;
/// * after a successful recovery an append lands after the recovered frames.
pub fn journal_open(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(tmp) = tempfile::Builder::new()
        .prefix("ovj-fuzz-")
        .tempdir_in(tmp_root())
    else {
        return;
    };
    let dir = tmp.path();
    match mode % 4 {
        0 => write(dir, 0, &with_header(0, 1, rest)),
        1 => write(dir, 0, rest),
        3 => write(dir, 0, &with_header(0, 2, rest)),
        _ => {
            let (split, body) = match rest {
                [a, b, body @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), body),
                _ => (0, rest),
            };
            let split = if body.is_empty() {
                0
            } else {
                split % (body.len() + 1)
            };
            let (s0, s1) = body.split_at(split);
            write(dir, 0, &with_header(0, 1, s0));
            write(dir, 1, &with_header(1, 2, s1));
        }
    }
    let budget = data.len() / FRAME_HEADER_LEN as usize + 2;

    let before = read_all(dir, budget);
    let on_disk = files(dir);

    let strict = Journal::open(dir, opts(RecoveryMode::AbsoluteConsistency));
    drop(strict);
    assert!(
        files(dir) == on_disk,
        "AbsoluteConsistency changed the files"
    );

    let Ok(j) = Journal::open(dir, opts(RecoveryMode::TolerateTailCorruption)) else {
        return;
    };
    drop(j);
    let recovered = files(dir);
    let after = read_all(dir, budget);
    if let (Some((b, b_failed)), Some((a, _))) = (&before, &after) {
        assert!(
            a.len() <= b.len() && a[..] == b[..a.len()],
            "frames after recovery are not a prefix of those before:\nbefore {b:?}\nafter {a:?}"
        );
        if !b_failed {
            assert_eq!(a, b, "recovery lost frames that read cleanly before it");
        }
    }

    let j2 = Journal::open(dir, opts(RecoveryMode::TolerateTailCorruption));
    assert!(
        j2.is_ok(),
        "second open failed after a successful one: {j2:?}"
    );
    assert!(files(dir) == recovered, "recovery is not idempotent");

    if let (Ok(j2), Some((a, false))) = (j2, &after) {
        if j2.append(b"fuzz", Durability::Buffered).is_ok() {
            drop(j2);
            let (again, failed) = read_all(dir, budget + 1).unwrap_or_default();
            assert!(!failed, "reading after an append failed");
            assert_eq!(again.len(), a.len() + 1, "append after recovery");
            assert_eq!(&again[..a.len()], &a[..]);
            assert_eq!(again.last().map(|s| &s.payload[..]), Some(&b"fuzz"[..]));
        }
    }
}

fn write(dir: &Path, id: u64, bytes: &[u8]) {
    let _ = fs::write(dir.join(segment_name(id)), bytes);
}

/// Replays every file under `dir` (recursively) through `check`; returns how many it ran.
pub fn replay_dir(dir: &Path, check: fn(&[u8])) -> usize {
    let mut n = 0;
    let Ok(rd) = fs::read_dir(dir) else { return 0 };
    let mut paths: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            n += replay_dir(&p, check);
        } else if let Ok(b) = fs::read(&p) {
            eprintln!("replay {}", p.display());
            check(&b);
            n += 1;
        }
    }
    n
}
