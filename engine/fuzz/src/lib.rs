//! Checks behind the `ov-engine` fuzz targets (`fuzz_targets/`), kept in a library so that
//! `cargo test` here replays every committed corpus and regression input on a stable toolchain.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ov_engine::codec::{
    decode_event, decode_snapshot, encode_event, encode_snapshot, CODEC_VERSION,
};
use ov_engine::projector::State;
use ov_engine::transcript::tail::identity_of;
use ov_engine::transcript::zcode::{parse_line, read_chunk};

/// `codec_event`: `decode_event` on arbitrary bytes.
///
/// * never panics;
/// * an accepted event re-encodes (`encode_event`) to bytes that decode to the same event and
///   that encoding is a fixed point; for an input of today's codec version, no longer than the
///   input (an older version re-encodes as today's, which may be longer);
/// * with `OV_FUZZ_CANONICAL=1`, the re-encoding must equal the input byte for byte. That fails
///   today: bincode 2.0.1 accepts non-minimal varints (`fb 02 00` for `02`), see
///   `regressions/codec_event/noncanonical-varint-variant-index` and `BENCHMARKS.md` (fuzzing);
/// * folding the event into an empty projector state does not panic, and that state's snapshot
///   round-trips (`encode_snapshot` → `decode_snapshot` gives it back).
pub fn codec_event(data: &[u8]) {
    let Ok(env) = decode_event(data) else { return };
    let mut re = Vec::new();
    encode_event(&env, &mut re).expect("an accepted event encodes");
    // An event of an older codec version decodes through its frozen types and re-encodes as
    // today's version, which may be longer; byte-level claims hold for today's version only.
    let current = data.first() == Some(&CODEC_VERSION);
    if re != data {
        assert!(
            !(current && strict_canonical()),
            "accepted event does not re-encode to its bytes:\n in  {}\n out {}\n {env:?}",
            hex(data),
            hex(&re)
        );
        assert!(
            !current || re.len() <= data.len(),
            "re-encoding is longer than the input"
        );
        let back = decode_event(&re).expect("a re-encoded event decodes");
        assert_eq!(back, env, "event does not round-trip");
        let mut re2 = Vec::new();
        encode_event(&back, &mut re2).expect("an accepted event encodes");
        assert!(re2 == re, "event encoding is not a fixed point");
    }
    let mut state = State::default();
    state.apply(&env);
    snapshot_round_trip(&state);
}

fn strict_canonical() -> bool {
    static STRICT: OnceLock<bool> = OnceLock::new();
    *STRICT.get_or_init(|| std::env::var_os("OV_FUZZ_CANONICAL").is_some_and(|v| v == "1"))
}

/// `codec_snapshot`: `decode_snapshot` on arbitrary bytes.
///
/// * never panics;
/// * an accepted snapshot re-encodes to bytes that decode to an equal state, and that encoding
///   is a fixed point. (Byte equality with the input is not required: a `BTreeMap` in the state
///   decodes keys in any order, and duplicates, and re-encodes them sorted.)
pub fn codec_snapshot(data: &[u8]) {
    let Ok(state) = decode_snapshot(data) else {
        return;
    };
    snapshot_round_trip(&state);
}

fn snapshot_round_trip(state: &State) {
    let mut re = Vec::new();
    encode_snapshot(state, &mut re).expect("a state encodes");
    let back = decode_snapshot(&re).expect("an encoded state decodes");
    assert_eq!(&back, state, "snapshot does not round-trip");
    let mut re2 = Vec::new();
    encode_snapshot(&back, &mut re2).expect("a state encodes");
    assert!(re == re2, "snapshot encoding is not a fixed point");
}

/// `rollout_line`: `parse_line` on arbitrary bytes (seeded with real `model_io` lines).
///
/// * never panics, and is deterministic;
/// * an accepted line has a non-empty turn id;
/// * trailing JSON whitespace does not change the result.
pub fn rollout_line(data: &[u8]) {
    let a = parse_line(data);
    if let Ok(Some(f)) = &a {
        assert!(!f.turn_id.is_empty(), "accepted line without a turn id");
    }
    let b = parse_line(data);
    assert_eq!(
        format!("{a:?}"),
        format!("{b:?}"),
        "parse_line is not deterministic"
    );
    if let Ok(facts) = &a {
        let mut padded = data.to_vec();
        padded.extend_from_slice(b" \t\r");
        match parse_line(&padded) {
            Ok(p) => assert_eq!(&p, facts, "trailing whitespace changed the result"),
            Err(e) => panic!("trailing whitespace made an accepted line fail: {e}"),
        }
    }
}

/// `rollout_chunk`: the input as a rollout file through `read_chunk`.
///
/// * never panics;
/// * `end` is within the file and just past a newline (or the start);
/// * resuming at `end` on the same file reads nothing new and does not rescan;
/// * resuming at 0 gives the same chunk as a fresh read.
pub fn rollout_chunk(data: &[u8]) {
    let Ok(tmp) = tempfile::Builder::new()
        .prefix("ovr-fuzz-")
        .tempdir_in(tmp_root())
    else {
        return;
    };
    let path = tmp.path().join("model-io-fuzz.jsonl");
    if fs::write(&path, data).is_err() {
        return;
    }
    let c = read_chunk(&path, None)
        .expect("read_chunk on a readable file")
        .expect("the file exists");
    assert_eq!(c.file_len, data.len() as u64);
    assert_eq!(c.start, 0);
    assert!(c.end <= c.file_len, "end past the file");
    let end = usize::try_from(c.end).unwrap_or(usize::MAX);
    assert!(
        end == 0 || data.get(end - 1) == Some(&b'\n'),
        "end {end} is not just past a newline"
    );
    assert!(
        !data.get(end..).unwrap_or_default().contains(&b'\n'),
        "a complete line after end was not consumed"
    );
    let Ok(meta) = fs::metadata(&path) else {
        return;
    };
    let id = identity_of(&meta);
    let r = read_chunk(&path, Some((id, c.end)))
        .expect("read_chunk on a readable file")
        .expect("the file exists");
    assert!(
        !r.rescanned && r.start == c.end && r.end == c.end,
        "resume at end: {r:?}"
    );
    assert!(r.fragments.is_empty(), "resume at end found turns");
    let z = read_chunk(&path, Some((id, 0)))
        .expect("read_chunk on a readable file")
        .expect("the file exists");
    assert_eq!(
        format!("{z:?}"),
        format!("{c:?}"),
        "resume at 0 differs from a fresh read"
    );
}

/// Where temp files go: `$OVJ_FUZZ_TMP`, else `/dev/shm` when present, else the default.
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

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
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
