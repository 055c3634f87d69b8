//! What the golden journals in `testdata/journal-frames/` contain. Shared by the generator
//! (`examples/gen-golden.rs`) and the tests.
#![allow(dead_code, clippy::unwrap_used, clippy::indexing_slicing)]

use std::fs;
use std::path::{Path, PathBuf};

use ov_journal::{Durability, FrameKind, Journal, Options, Result};

/// One unit of the golden journal, in append order.
pub enum Unit {
    /// `Journal::append`.
    Single(Vec<u8>),
    /// `Journal::append_batch`.
    Batch(Vec<Vec<u8>>),
    /// `Journal::roll_with_snapshot`.
    Roll(Vec<u8>),
}

fn bytes(tag: &str, n: usize) -> Vec<u8> {
    let mut v = tag.as_bytes().to_vec();
    v.extend((0..n).map(|i| (i * 7 + tag.len()) as u8));
    v
}

/// The units of the `valid` journal (one segment).
pub fn valid_units() -> Vec<Unit> {
    vec![
        Unit::Single(bytes("r0", 10)),
        Unit::Single(bytes("r1", 0)),
        Unit::Batch(vec![bytes("b0.0", 3), bytes("b0.1", 20), bytes("b0.2", 1)]),
        Unit::Single(Vec::new()),
        Unit::Single(bytes("r2", 40)),
        Unit::Batch(vec![bytes("b1.0", 5), bytes("b1.1", 5)]),
        Unit::Single(bytes("r3", 17)),
    ]
}

/// The units of the `rolled` journal (three segments, two snapshots).
pub fn rolled_units() -> Vec<Unit> {
    vec![
        Unit::Single(bytes("r0", 12)),
        Unit::Batch(vec![bytes("b0.0", 4), bytes("b0.1", 4)]),
        Unit::Roll(bytes("snap1", 30)),
        Unit::Single(bytes("r1", 8)),
        Unit::Roll(bytes("snap2", 10)),
        Unit::Single(bytes("r2", 9)),
        Unit::Batch(vec![bytes("b1.0", 2), bytes("b1.1", 3), bytes("b1.2", 0)]),
        Unit::Single(bytes("r3", 25)),
    ]
}

/// The seed of every golden journal's salts (`Options::salt_seed`), so the generator's output is
/// the same every time.
pub const SALT_SEED: u64 = 0x0076_6a5f_676f_6c64;

/// Options that write reproducible segments (salts from [`SALT_SEED`]).
pub fn seeded() -> Options {
    Options {
        salt_seed: Some(SALT_SEED),
        ..Options::default()
    }
}

/// Appends `units` to the journal at `dir`.
pub fn write(dir: &Path, units: &[Unit]) -> Result<()> {
    let j = Journal::open(dir, seeded())?;
    for u in units {
        match u {
            Unit::Single(p) => {
                j.append(p, Durability::Buffered)?;
            }
            Unit::Batch(ps) => {
                let refs: Vec<&[u8]> = ps.iter().map(Vec::as_slice).collect();
                j.append_batch(&refs, Durability::Buffered)?;
            }
            Unit::Roll(s) => {
                j.roll_with_snapshot(s)?;
            }
        }
    }
    let _ = j.append_batch(&[], Durability::Sync)?;
    Ok(())
}

/// The frames a reader yields for `units`, grouped by unit, as `(kind, payload)`.
pub fn expected(units: &[Unit]) -> Vec<Vec<(FrameKind, Vec<u8>)>> {
    units
        .iter()
        .map(|u| match u {
            Unit::Single(p) => vec![(FrameKind::Record, p.clone())],
            Unit::Batch(ps) => ps.iter().map(|p| (FrameKind::Record, p.clone())).collect(),
            Unit::Roll(s) => vec![(FrameKind::Snapshot, s.clone())],
        })
        .collect()
}

/// Errors of the generator.
pub type BoxResult<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Path of segment `id` in `dir`.
pub fn seg(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id:016x}.ovj"))
}

fn fresh(out: &Path, name: &str) -> BoxResult<PathBuf> {
    let d = out.join(name);
    if d.exists() {
        fs::remove_dir_all(&d).map_err(|e| format!("could not remove {}: {e}", d.display()))?;
    }
    Ok(d)
}

/// A frame as text that cannot read a segment's salt can compute it: checksums of plain
/// CRC-32, the way format version 1 keyed every frame.
pub fn plain_frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = plain_header(kind, flags, payload.len() as u32, payload);
    out.extend_from_slice(payload);
    out
}

/// The 16-byte header [`plain_frame`] writes for a payload of `len` bytes whose first bytes are
/// `payload` (the frame crc covers only those).
pub fn plain_header(kind: u8, flags: u8, len: u32, payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::with_capacity(16);
    head.extend_from_slice(&len.to_le_bytes());
    head.extend_from_slice(&[kind, flags, 0, 0]);
    let head_crc = crc32fast::hash(&head) ^ 0x484A_564F;
    let mut h = crc32fast::Hasher::new();
    h.update(&head);
    h.update(payload);
    let crc = h.finalize() ^ 0x464A_564F;
    let mut out = head;
    out.extend_from_slice(&head_crc.to_le_bytes());
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// A version 1 segment header (no salt), as format version 1 wrote it.
pub fn v1_segment_header(id: u64) -> Vec<u8> {
    let mut b = b"OVJRNL\r\n".to_vec();
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&32u32.to_le_bytes());
    b.extend_from_slice(&id.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    let crc = crc32fast::hash(&b) ^ 0x534A_564F;
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// The payload of the prompt that carries a forged frame: text around a whole frame (record,
/// `BEGIN|END`) whose checksums are plain CRC-32.
pub fn forged_frame_prompt() -> Vec<u8> {
    let mut p = b"{\"prompt\":\"".to_vec();
    p.extend(plain_frame(1, 3, b"FORGED: attacker"));
    p.extend_from_slice(b"\"}");
    p
}

/// The payload of the prompt that carries a forged header: a frame header (plain CRC-32)
/// claiming a payload of 1 MiB, far past the end of the file.
pub fn forged_header_prompt() -> Vec<u8> {
    let mut p = b"{\"prompt\":\"".to_vec();
    p.extend(plain_header(1, 3, 1 << 20, b""));
    p.extend_from_slice(b"\"}");
    p
}

/// The units of the `forged-*` journals: `valid_units` with the prompt at index 2.
pub fn forged_units(prompt: Vec<u8>) -> Vec<Unit> {
    let mut u = valid_units();
    u.insert(2, Unit::Single(prompt));
    u
}

/// Offset of the prompt frame in the `forged-*` journals (after `r0` and `r1`).
pub const FORGED_AT: usize = 32 + 28 + 18;

/// Writes every golden journal under `out` (existing ones are replaced).
pub fn generate(out: &Path) -> BoxResult<()> {
    fs::create_dir_all(out).map_err(|e| format!("could not create {}: {e}", out.display()))?;

    // valid: one segment of singles and batches.
    let valid = fresh(out, "valid")?;
    write(&valid, &valid_units())?;

    // rolled: three segments, the last two starting with snapshots.
    let rolled = fresh(out, "rolled")?;
    write(&rolled, &rolled_units())?;

    // torn: `valid` with its last frame cut 5 bytes short (a crash mid-append).
    let torn = fresh(out, "torn")?;
    write(&torn, &valid_units())?;
    edit(&seg(&torn, 0), |b| b.truncate(b.len() - 5))?;

    // bad-crc: `valid` with one payload byte of its third frame flipped: the first batch frame
    // starts at offset 78 (32 + 28 + 18), its payload spans 94..101. Valid frames follow, so this
    // is corruption at offset 78, not a torn tail.
    let bad = fresh(out, "bad-crc")?;
    write(&bad, &valid_units())?;
    edit(&seg(&bad, 0), |b| b[100] ^= 0x01)?;

    // future-version: `valid` whose segment header claims format version 3 (crc recomputed),
    // which this build must refuse with a clear error.
    let future = fresh(out, "future-version")?;
    write(&future, &valid_units())?;
    edit(&seg(&future, 0), |b| {
        b[8..12].copy_from_slice(&3u32.to_le_bytes());
        let crc = crc32fast::hash(&b[..28]) ^ 0x534A_564F;
        b[28..32].copy_from_slice(&crc.to_le_bytes());
    })?;

    // zero-tail: `valid` followed by 4096 zero bytes (space a crash left allocated but unwritten).
    let zero = fresh(out, "zero-tail")?;
    write(&zero, &valid_units())?;
    edit(&seg(&zero, 0), |b| b.resize(b.len() + 4096, 0))?;

    // forged-frame / forged-header: a prompt carrying a frame (or a header claiming 1 MiB) with
    // plain CRC-32 checksums, then one bit of the prompt frame's own header flipped, so that a
    // scan resynchronises through its payload.
    let forged_frame = fresh(out, "forged-frame")?;
    write(&forged_frame, &forged_units(forged_frame_prompt()))?;
    edit(&seg(&forged_frame, 0), |b| b[FORGED_AT] ^= 0x01)?;
    let forged_header = fresh(out, "forged-header")?;
    write(&forged_header, &forged_units(forged_header_prompt()))?;
    edit(&seg(&forged_header, 0), |b| b[FORGED_AT] ^= 0x01)?;

    // LOCK files carry no data; they are re-created on open.
    for d in [
        &valid,
        &rolled,
        &torn,
        &bad,
        &future,
        &zero,
        &forged_frame,
        &forged_header,
    ] {
        let _ = fs::remove_file(d.join("LOCK"));
    }
    Ok(())
}

/// Rewrites the file at `p` with `f` applied to its bytes.
fn edit(p: &Path, f: impl FnOnce(&mut Vec<u8>)) -> BoxResult<()> {
    let mut b = fs::read(p).map_err(|e| format!("could not read {}: {e}", p.display()))?;
    f(&mut b);
    fs::write(p, &b).map_err(|e| format!("could not write {}: {e}", p.display()))?;
    Ok(())
}
