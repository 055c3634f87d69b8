//! What the golden journals in `testdata/journal/` contain. Shared by the generator
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

/// Appends `units` to the journal at `dir`.
pub fn write(dir: &Path, units: &[Unit]) -> Result<()> {
    let j = Journal::open(dir, Options::default())?;
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
    let p = seg(&torn, 0);
    let mut b = fs::read(&p).map_err(|e| format!("could not read {}: {e}", p.display()))?;
    b.truncate(b.len() - 5);
    fs::write(&p, &b).map_err(|e| format!("could not write {}: {e}", p.display()))?;

    // bad-crc: `valid` with one payload byte of its third frame flipped: the first batch frame
    // starts at offset 78 (32 + 28 + 18), its payload spans 94..101. Valid frames follow, so this
    // is corruption at offset 78, not a torn tail.
    let bad = fresh(out, "bad-crc")?;
    write(&bad, &valid_units())?;
    let p = seg(&bad, 0);
    let mut b = fs::read(&p).map_err(|e| format!("could not read {}: {e}", p.display()))?;
    b[100] ^= 0x01;
    fs::write(&p, &b).map_err(|e| format!("could not write {}: {e}", p.display()))?;

    // future-version: `valid` whose segment header claims format version 2 (crc recomputed), which
    // this build must refuse with a clear error. Version 1 is the only version so far.
    let future = fresh(out, "future-version")?;
    write(&future, &valid_units())?;
    let p = seg(&future, 0);
    let mut b = fs::read(&p).map_err(|e| format!("could not read {}: {e}", p.display()))?;
    b[8..12].copy_from_slice(&2u32.to_le_bytes());
    let crc = crc32fast::hash(&b[..28]) ^ 0x534A_564F;
    b[28..32].copy_from_slice(&crc.to_le_bytes());
    fs::write(&p, &b).map_err(|e| format!("could not write {}: {e}", p.display()))?;

    // zero-tail: `valid` followed by 4096 zero bytes (space a crash left allocated but unwritten).
    let zero = fresh(out, "zero-tail")?;
    write(&zero, &valid_units())?;
    let p = seg(&zero, 0);
    let mut b = fs::read(&p).map_err(|e| format!("could not read {}: {e}", p.display()))?;
    b.resize(b.len() + 4096, 0);
    fs::write(&p, &b).map_err(|e| format!("could not write {}: {e}", p.display()))?;

    // LOCK files carry no data; they are re-created on open.
    for d in [&valid, &rolled, &torn, &bad, &future, &zero] {
        let _ = fs::remove_file(d.join("LOCK"));
    }
    Ok(())
}
