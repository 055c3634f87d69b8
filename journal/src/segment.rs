//! Segment files in a journal directory: naming, listing, atomic creation, header checks.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::{CorruptionKind, Error, IoContext, Result};
use crate::format::{
    decode_segment_header, encode_frame, encode_segment_header, HeaderError, Salt, SegmentHeader,
    FLAG_BEGIN, FLAG_END, FORMAT_VERSION, MIN_READ_VERSION, SEGMENT_HEADER_LEN,
};
use crate::FrameKind;

/// File name suffix of segment files.
pub(crate) const SUFFIX: &str = ".ovj";
const TMP_SUFFIX: &str = ".ovj.tmp";

/// `<dir>/<id as 16 lowercase hex digits>.ovj`.
pub(crate) fn path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id:016x}{SUFFIX}"))
}

/// The file of segment `id` in the journal directory `dir`:
/// `<dir>/<id as 16 lowercase hex digits>.ovj`.
pub fn segment_path(dir: &Path, id: u64) -> PathBuf {
    path(dir, id)
}

/// The segment id a segment file's name holds; `None` for any other file name.
pub fn segment_id(path: &Path) -> Option<u64> {
    path.file_name()?.to_str().and_then(parse_name)
}

/// Whether `dir` is a directory holding at least one segment file. Reads only the directory
/// listing: nothing is opened, created or locked.
pub fn is_journal(dir: &Path) -> bool {
    list(dir).is_ok_and(|ids| !ids.is_empty())
}

fn parse_name(name: &str) -> Option<u64> {
    let hex = name.strip_suffix(SUFFIX)?;
    if hex.len() != 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// Segment ids present in `dir`, ascending.
pub(crate) fn list(dir: &Path) -> Result<Vec<u64>> {
    let mut ids = Vec::new();
    for entry in fs::read_dir(dir).at(dir)? {
        let entry = entry.at(dir)?;
        if let Some(id) = entry.file_name().to_str().and_then(parse_name) {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

/// Removes temporary files left by an interrupted segment creation. Call under the exclusive lock.
pub(crate) fn remove_stale_tmp(dir: &Path) -> Result<()> {
    for entry in fs::read_dir(dir).at(dir)? {
        let entry = entry.at(dir)?;
        if entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.ends_with(TMP_SUFFIX))
        {
            let p = entry.path();
            log::warn!(
                "removing {} left by an interrupted segment roll",
                p.display()
            );
            fs::remove_file(&p).at(&p)?;
        }
    }
    Ok(())
}

/// Fsyncs a directory so that creations, renames and removals in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).at(dir)?.sync_all().at(dir)
}

/// Opens a segment for reading and appending.
pub(crate) fn open_rw(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .at(path)
}

/// Where a new segment's salt comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SaltSource {
    /// The operating system's random source (`/dev/urandom`).
    Random,
    /// Derived from a seed and the segment id (reproducible fixtures only).
    Seeded(u64),
}

/// A fresh version 2 salt for segment `id` (both halves non-zero).
pub(crate) fn new_salt(source: SaltSource, id: u64, dir: &Path) -> Result<Salt> {
    let mut x = match source {
        SaltSource::Seeded(seed) => mix(seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        SaltSource::Random => {
            let path = Path::new("/dev/urandom");
            let mut b = [0u8; 8];
            File::open(path)
                .and_then(|mut f| f.read_exact(&mut b))
                .map_err(|source| Error::Io {
                    path: dir.to_path_buf(),
                    source,
                })?;
            u64::from_le_bytes(b)
        }
    };
    while !Salt(x).is_valid_v2() {
        x = mix(x);
    }
    Ok(Salt(x))
}

/// splitmix64's finaliser: a bijective mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Creates segment `id` atomically (temp file, fsync, rename, fsync dir) holding a version 2
/// header with a fresh salt and, when given, a snapshot frame. Call under the exclusive lock.
/// Returns the file, opened read-write, its length and its header.
pub(crate) fn create(
    dir: &Path,
    id: u64,
    snapshot: Option<&[u8]>,
    source: SaltSource,
) -> Result<(File, u64, SegmentHeader)> {
    let header = SegmentHeader {
        id,
        version: FORMAT_VERSION,
        salt: new_salt(source, id, dir)?,
    };
    let mut bytes = Vec::new();
    encode_segment_header(&mut bytes, header);
    if let Some(s) = snapshot {
        // Format: a new segment = { segment header | snapshot frame (BEGIN|END) }
        encode_frame(
            &mut bytes,
            header.salt,
            FrameKind::Snapshot,
            FLAG_BEGIN | FLAG_END,
            s,
        );
    }
    let tmp = dir.join(format!("{id:016x}{TMP_SUFFIX}"));
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .at(&tmp)?;
    f.write_all(&bytes).at(&tmp)?;
    f.sync_all().at(&tmp)?;
    let p = path(dir, id);
    fs::rename(&tmp, &p).at(&p)?;
    sync_dir(dir)?;
    Ok((f, bytes.len() as u64, header))
}

/// Outcome of reading a segment header.
pub(crate) enum Header {
    /// Valid.
    Ok(SegmentHeader),
    /// The file is shorter than a header (and what is there could be the start of one).
    Torn,
}

/// Reads and checks the header of segment `id` at `path`.
pub(crate) fn check_header(file: &File, path: &Path, id: u64) -> Result<Header> {
    let mut b = [0u8; SEGMENT_HEADER_LEN as usize];
    let mut n = 0;
    while n < b.len() {
        let got = file
            .read_at(b.get_mut(n..).unwrap_or_default(), n as u64)
            .at(path)?;
        if got == 0 {
            break;
        }
        n += got;
    }
    check_header_bytes(b.get(..n).unwrap_or_default(), path, id)
}

/// Checks header bytes (the start of a segment file).
pub(crate) fn check_header_bytes(b: &[u8], path: &Path, id: u64) -> Result<Header> {
    let corrupt = |kind| Error::Corruption {
        path: path.to_path_buf(),
        offset: 0,
        kind,
    };
    match decode_segment_header(b) {
        Ok(h) if h.id == id => Ok(Header::Ok(h)),
        Ok(h) => Err(corrupt(CorruptionKind::SegmentIdMismatch {
            expected: id,
            found: h.id,
        })),
        Err(HeaderError::Short) => Ok(Header::Torn),
        Err(HeaderError::BadMagic) => Err(Error::NotAJournal {
            path: path.to_path_buf(),
        }),
        Err(HeaderError::Version(found)) => Err(Error::UnsupportedVersion {
            path: path.to_path_buf(),
            found,
            min: MIN_READ_VERSION,
            max: FORMAT_VERSION,
        }),
        Err(HeaderError::Corrupt(kind)) => Err(corrupt(kind)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let p = path(Path::new("/j"), 0xab);
        assert_eq!(p, Path::new("/j/00000000000000ab.ovj"));
        assert_eq!(parse_name("00000000000000ab.ovj"), Some(0xab));
        assert_eq!(parse_name("ab.ovj"), None);
        assert_eq!(parse_name("00000000000000ab.ovj.tmp"), None);
        assert_eq!(parse_name("LOCK"), None);
        assert_eq!(segment_path(Path::new("/j"), 0xab), p);
        assert_eq!(segment_id(&p), Some(0xab));
        assert_eq!(segment_id(Path::new("/j/LOCK")), None);
    }

    #[test]
    fn a_journal_is_a_directory_with_a_segment() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert!(!is_journal(&tmp.path().join("missing")));
        assert!(!is_journal(tmp.path()));
        fs::write(tmp.path().join("LOCK"), b"").expect("write");
        assert!(!is_journal(tmp.path()));
        fs::write(path(tmp.path(), 1), b"").expect("write");
        assert!(is_journal(tmp.path()));
    }
}
