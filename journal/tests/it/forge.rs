//! Text inside a frame never becomes a frame, and never erases one: a prompt (or an answer, or a
//! server's recall block) is stored raw inside a payload, and may hold bytes that look like a
//! frame with valid checksums, as text that cannot read the segment's salt can compute them
//! (plain CRC-32). After damage to the header of the frame that holds it, a scan resynchronises
//! through that payload; what it finds there must never verify, and must never end the scan.

use std::fs::{self, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use ov_journal::{CorruptionKind, Durability, Entry, Journal, Options, Position};
use proptest::prelude::*;

use crate::common::patient;
use crate::spec::{self, forged_frame_prompt, forged_header_prompt, plain_frame};

/// Flips bit `bit` of byte `at` of the file `p`.
fn flip(p: &Path, at: u64, bit: u8) {
    let f = OpenOptions::new().read(true).write(true).open(p).unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, at).unwrap();
    b[0] ^= 1 << bit;
    f.write_all_at(&b, at).unwrap();
}

/// What a resynchronising read of `dir` yields: payloads, and damaged ranges as
/// `(position, len, kind)`.
type Read = (Vec<Vec<u8>>, Vec<(Position, u64, CorruptionKind)>);

fn read(dir: &Path) -> Read {
    let j = Journal::open(dir, patient()).unwrap();
    let r = j.reader().unwrap();
    let (mut frames, mut damage) = (Vec::new(), Vec::new());
    for e in r.entries() {
        match e.unwrap() {
            Entry::Frame(f) => frames.push(f.payload.to_vec()),
            Entry::Damage(d) => damage.push((d.position(), d.len, d.kind)),
        }
    }
    (frames, damage)
}

/// A journal holding `before`, `prompt`, `after` (single frames, synced), with bit `bit` of byte
/// `byte` of the prompt frame's header flipped. Returns the prompt's position.
fn journal_with_damaged_prompt(
    dir: &Path,
    before: &[&[u8]],
    prompt: &[u8],
    after: &[&[u8]],
    byte: u64,
    bit: u8,
) -> Position {
    let j = Journal::open(dir, patient()).unwrap();
    for p in before {
        j.append(p, Durability::Buffered).unwrap();
    }
    let at = j.append(prompt, Durability::Buffered).unwrap();
    for p in after {
        j.append(p, Durability::Buffered).unwrap();
    }
    j.append_batch(&[], Durability::Sync).unwrap();
    drop(j);
    flip(&spec::seg(dir, at.segment), at.offset + byte, bit);
    at
}

/// A prompt that carries a whole frame with valid plain CRC-32 checksums: after a flipped bit in
/// the prompt frame's header, the forged frame is not read; the prompt is one damaged range and
/// every frame after it is read.
#[test]
fn a_prompt_carrying_a_frame_is_never_read_as_one() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("j");
    let prompt = forged_frame_prompt();
    let at = journal_with_damaged_prompt(&d, &[b"r0"], &prompt, &[b"a1", b"a2"], 0, 0);
    let (frames, damage) = read(&d);
    assert_eq!(frames, [&b"r0"[..], b"a1", b"a2"].map(<[u8]>::to_vec));
    assert_eq!(
        damage,
        vec![(at, 16 + prompt.len() as u64, CorruptionKind::HeaderChecksum)]
    );
}

/// A prompt that carries only a forged header whose length runs past the end of the file: it
/// is no torn append (it is not at the valid end, and its payload never verifies), so nothing
/// after the damaged prompt frame is cut.
#[test]
fn a_prompt_carrying_a_header_erases_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("j");
    let prompt = forged_header_prompt();
    let at = journal_with_damaged_prompt(&d, &[b"r0"], &prompt, &[b"a1", b"a2"], 0, 0);
    let seg = spec::seg(&d, 0);
    let len = fs::metadata(&seg).unwrap().len();
    for _ in 0..3 {
        let (frames, damage) = read(&d);
        assert_eq!(frames, [&b"r0"[..], b"a1", b"a2"].map(<[u8]>::to_vec));
        assert_eq!(
            damage,
            vec![(at, 16 + prompt.len() as u64, CorruptionKind::HeaderChecksum)]
        );
        assert_eq!(fs::metadata(&seg).unwrap().len(), len, "nothing was cut");
    }
}

/// A flipped bit in the last frame of the active segment is damage, reported and kept: only an
/// interrupted append, proven by the bytes at the end of the file, is ever cut.
#[test]
fn a_flipped_bit_in_the_last_frame_is_damage_not_a_torn_tail() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("j");
    let at = journal_with_damaged_prompt(&d, &[b"r0"], b"last answer", &[], 5, 3);
    let seg = spec::seg(&d, 0);
    let len = fs::metadata(&seg).unwrap().len();
    let (frames, damage) = read(&d);
    assert_eq!(frames, vec![b"r0".to_vec()]);
    assert_eq!(damage, vec![(at, 16 + 11, CorruptionKind::HeaderChecksum)]);
    assert_eq!(fs::metadata(&seg).unwrap().len(), len, "nothing was cut");
    // Appends go after it, and it stays reported.
    Journal::open(&d, patient())
        .unwrap()
        .append(b"next", Durability::Sync)
        .unwrap();
    let (frames, again) = read(&d);
    assert_eq!(frames, vec![b"r0".to_vec(), b"next".to_vec()]);
    assert_eq!(again, damage);
}

/// A version 1 segment (plain CRC-32, written by an older build) with a forged header in a
/// prompt and the prompt frame's header damaged: nothing after it is cut there either (the rule
/// that a header alone never ends a scan holds in every version), and the next append goes to
/// a new version 2 segment.
#[test]
fn a_version_1_segment_with_a_forged_header_erases_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("j");
    fs::create_dir_all(&d).unwrap();
    let mut seg = spec::v1_segment_header(0);
    seg.extend(plain_frame(1, 3, b"r0"));
    let at = seg.len() as u64;
    let prompt = forged_header_prompt();
    seg.extend(plain_frame(1, 3, &prompt));
    seg.extend(plain_frame(1, 3, b"a1"));
    seg[at as usize] ^= 1;
    let path = spec::seg(&d, 0);
    fs::write(&path, &seg).unwrap();
    let (frames, damage) = read(&d);
    assert_eq!(frames, vec![b"r0".to_vec(), b"a1".to_vec()]);
    assert_eq!(damage.len(), 1);
    assert_eq!(damage[0].0.offset, at);
    assert_eq!(fs::read(&path).unwrap(), seg, "nothing was cut");
    let p = Journal::open(&d, patient())
        .unwrap()
        .append(b"new", Durability::Sync)
        .unwrap();
    assert_eq!(p.segment, 1);
    assert_eq!(fs::read(&path).unwrap(), seg);
    assert_eq!(read(&d).0.last().unwrap(), b"new");
}

/// Not even a frame computed with the salt of another journal verifies here.
#[test]
fn a_frame_from_another_journal_is_damage() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let ja = Journal::open(&a, Options::default()).unwrap();
    ja.append(b"from a", Durability::Sync).unwrap();
    let frame_a = fs::read(spec::seg(&a, 0)).unwrap()[32..].to_vec();
    let jb = Journal::open(&b, Options::default()).unwrap();
    jb.append(b"b0", Durability::Sync).unwrap();
    let at = jb.end().unwrap();
    drop(jb);
    let mut f = OpenOptions::new()
        .append(true)
        .open(spec::seg(&b, 0))
        .unwrap();
    std::io::Write::write_all(&mut f, &frame_a).unwrap();
    let (frames, damage) = read(&b);
    assert_eq!(frames, vec![b"b0".to_vec()]);
    assert_eq!(
        damage,
        vec![(at, frame_a.len() as u64, CorruptionKind::HeaderChecksum)]
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever text surrounds a forged frame (or header) in a prompt, and whichever bit of the
    /// prompt frame's header is flipped, a read yields exactly the frames written around the
    /// prompt: never the forged one, never fewer.
    #[test]
    fn no_text_forges_or_erases_a_frame(
        lead in proptest::collection::vec(any::<u8>(), 0..40),
        trail in proptest::collection::vec(any::<u8>(), 0..40),
        forged in proptest::collection::vec(any::<u8>(), 0..24),
        header_only in any::<bool>(),
        claimed in 0u32..4096,
        byte in 0u64..16,
        bit in 0u8..8,
        after in 1usize..4,
    ) {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("j");
        let mut prompt = lead;
        if header_only {
            prompt.extend(spec::plain_header(1, 3, claimed, &forged));
        } else {
            prompt.extend(plain_frame(1, 3, &forged));
        }
        prompt.extend(trail);
        let tail: Vec<Vec<u8>> = (0..after).map(|i| format!("after {i}").into_bytes()).collect();
        let tail_refs: Vec<&[u8]> = tail.iter().map(Vec::as_slice).collect();
        let at = journal_with_damaged_prompt(&d, &[b"r0"], &prompt, &tail_refs, byte, bit);
        let (frames, damage) = read(&d);
        let mut want = vec![b"r0".to_vec()];
        want.extend(tail.iter().cloned());
        prop_assert_eq!(frames, want);
        prop_assert_eq!(damage.len(), 1);
        prop_assert_eq!(damage[0].0, at);
        prop_assert_eq!(damage[0].1, 16 + prompt.len() as u64);
    }
}
