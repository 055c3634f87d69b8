//! Spill files: events a hook could not journal because another process held the journal's lock.
//!
//! A hook must not wait long for the lock, and must not lose its event. When the lock cannot be
//! had within the hook's wait, its events go to a spill file in the session's journal directory;
//! the next writer that holds the lock ([`crate::store::SessionStore::open_with`]) appends them
//! to the journal (original stamps kept) and removes the file.
//!
//! # Format
//!
//! ```text
//! // Format: { magic: b"OVSPILL1" | count:u32 LE | count × { len:u32 LE | payload: codec event record } | crc32:u32 LE }
//! ```
//!
//! * each payload is exactly a journal record payload ([`crate::codec::encode_event`]);
//! * `crc32` (IEEE, `crc32fast`) covers every byte before it;
//! * the file is written under a temporary name (`.spill-….tmp`), synced, then renamed to
//!   `spill-<ms:013>-<pid>-<seq>.ovs`, so a reader never sees a partial file under the final
//!   name, and names sort in the order they were written (per process; across processes by ms).
//!
//! # Ingestion
//!
//! Ingestion appends a file's events and [`crate::event::Event::SpillIngested`] with its name in
//! one batch, then removes the file: a file whose name the journal already holds (a crash between
//! the append and the removal) is removed without appending again. A file that does not verify
//! is renamed to `<name>.damaged`, kept for inspection, and reported as a
//! [`crate::event::Event::Problem`].

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::codec::{self, CodecError};
use crate::event::Envelope;

/// First bytes of a spill file.
pub const MAGIC: &[u8; 8] = b"OVSPILL1";
/// Extension of a complete spill file.
pub const EXTENSION: &str = "ovs";
/// Prefix of a spill file's name.
pub const PREFIX: &str = "spill-";
/// Name of the lock that serializes ingestion (inside the journal directory).
pub const INGEST_LOCK: &str = "SPILL.LOCK";

static SEQ: AtomicU64 = AtomicU64::new(0);

/// Why a spill file could not be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpillError {
    /// A file operation failed.
    #[error("spill {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// An event could not be encoded or decoded.
    #[error("spill {path}: {source}")]
    Codec {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: CodecError,
    },
    /// The file is not a complete spill file.
    #[error("spill {path}: damaged at byte {offset}: {what}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Where the damage was found.
        offset: usize,
        /// What is wrong.
        what: &'static str,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SpillError + '_ {
    move |source| SpillError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Encodes `events` as a spill file's bytes.
pub fn encode(events: &[Envelope], path: &Path) -> Result<Vec<u8>, SpillError> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(
        &u32::try_from(events.len())
            .unwrap_or(u32::MAX)
            .to_le_bytes(),
    );
    let mut buf = Vec::new();
    for env in events {
        codec::encode_event(env, &mut buf).map_err(|source| SpillError::Codec {
            path: path.to_path_buf(),
            source,
        })?;
        out.extend_from_slice(&u32::try_from(buf.len()).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(&buf);
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// Decodes a spill file's bytes.
pub fn decode(bytes: &[u8], path: &Path) -> Result<Vec<Envelope>, SpillError> {
    let damaged = |offset, what| SpillError::Damaged {
        path: path.to_path_buf(),
        offset,
        what,
    };
    if bytes.len() < MAGIC.len() + 8 || !bytes.starts_with(MAGIC) {
        return Err(damaged(0, "no spill header"));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    let crc = u32::from_le_bytes(crc.try_into().map_err(|_| damaged(body.len(), "crc"))?);
    if crc32fast::hash(body) != crc {
        return Err(damaged(body.len(), "checksum mismatch"));
    }
    let u32_at = |at: usize| -> Option<usize> {
        let b = body.get(at..at + 4)?;
        Some(u32::from_le_bytes(b.try_into().ok()?) as usize)
    };
    let mut at = MAGIC.len();
    let count = u32_at(at).ok_or_else(|| damaged(at, "count"))?;
    at += 4;
    let mut events = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let len = u32_at(at).ok_or_else(|| damaged(at, "record length"))?;
        at += 4;
        let payload = body
            .get(at..at.saturating_add(len))
            .ok_or_else(|| damaged(at, "record past the end"))?;
        events.push(
            codec::decode_event(payload).map_err(|source| SpillError::Codec {
                path: path.to_path_buf(),
                source,
            })?,
        );
        at += len;
    }
    if at != body.len() {
        return Err(damaged(at, "bytes after the last record"));
    }
    Ok(events)
}

/// Writes `events` to a new spill file in `dir` (temporary name, sync, rename); returns its path.
pub fn write(dir: &Path, events: &[Envelope]) -> Result<PathBuf, SpillError> {
    crate::paths::create_private_dir(dir).map_err(io(dir))?;
    let name = format!(
        "{PREFIX}{:013}-{}-{}.{EXTENSION}",
        crate::store::now_ms(),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let path = dir.join(&name);
    let tmp = dir.join(format!(".{name}.tmp"));
    let bytes = encode(events, &path)?;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(io(&tmp))?;
    f.write_all(&bytes).map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
    drop(f);
    fs::rename(&tmp, &path).map_err(io(&path))?;
    sync_dir(dir);
    Ok(path)
}

/// The largest spill file read: one hook's events, each at most a journal frame.
const MAX_SPILL_BYTES: u64 = 4 * ov_journal::MAX_PAYLOAD_LEN as u64;

/// Reads and verifies a spill file: a regular file of at most four journal frames (anything
/// else is damaged, so it is set aside rather than waited on or read whole).
pub fn read(path: &Path) -> Result<Vec<Envelope>, SpillError> {
    let damaged = |what| SpillError::Damaged {
        path: path.to_path_buf(),
        offset: 0,
        what,
    };
    let bytes = match crate::regular_file::read(path, MAX_SPILL_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return Err(io(path)(std::io::ErrorKind::NotFound.into())),
        Err(crate::regular_file::RegularFileError::Io { source, .. }) => {
            return Err(io(path)(source))
        }
        Err(crate::regular_file::RegularFileError::NotRegular { .. }) => {
            return Err(damaged("not a regular file"))
        }
        Err(crate::regular_file::RegularFileError::TooLarge { .. }) => {
            return Err(damaged("larger than any spill file"))
        }
    };
    decode(&bytes, path)
}

/// Complete spill files in `dir`, in name order (empty when there are none or `dir` is missing).
pub fn pending(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(&format!(".{EXTENSION}")))
        })
        .collect();
    v.sort();
    v
}

/// Where a spill file that could not be read is set aside: `<name>.damaged`, next to it.
pub fn set_aside_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{name}.{DAMAGED_EXTENSION}"))
}

/// The spill files of journal `dir` that were set aside as damaged, sorted.
pub fn set_aside(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with(PREFIX) && n.ends_with(&format!(".{DAMAGED_EXTENSION}"))
            })
        })
        .collect();
    v.sort();
    v
}

/// The extension added to a spill file set aside as damaged.
const DAMAGED_EXTENSION: &str = "damaged";

/// Syncs a directory so a rename or removal in it is durable (best effort).
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use crate::event::Event;

    fn sample() -> Vec<Envelope> {
        vec![Envelope {
            at_ms: 7,
            pid: 9,
            event: Event::ServerReachable,
        }]
    }

    #[test]
    fn a_written_file_reads_back_and_any_flipped_byte_is_refused() {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = write(tmp.path(), &sample()).expect("write");
        assert_eq!(pending(tmp.path()), vec![path.clone()]);
        assert_eq!(read(&path).expect("read"), sample());
        let bytes = fs::read(&path).expect("bytes");
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x40;
            assert!(decode(&b, &path).is_err(), "byte {i}");
        }
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut], &path).is_err(), "cut at {cut}");
        }
    }
}
