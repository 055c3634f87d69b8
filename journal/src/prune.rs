//! Removing history: what a journal's segments weigh and when they were last written, and
//! the removal of a whole journal directory.
//!
//! Segments before a snapshot are removed with [`crate::Journal::remove_segments_before`];
//! which ones may go, and when, is the caller's rule (the engine's retention). Removing a
//! whole journal happens under its exclusive lock, so no append is half done; a process that
//! opened the journal before and appends after the removal writes to unlinked files (its
//! events are lost), and one that opens it after creates a new, empty journal.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::error::IoContext;
use crate::{segment, FileLock, Result, LOCK_FILE};

/// One segment file on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentFile {
    /// Segment id.
    pub id: u64,
    /// Size in bytes.
    pub len: u64,
    /// Last written (the file's modification time).
    pub modified: SystemTime,
}

/// The segment files of the journal in `dir`, oldest first. Reads only metadata; takes no
/// lock (a segment removed meanwhile is left out).
pub fn segment_files(dir: &Path) -> Result<Vec<SegmentFile>> {
    let mut out = Vec::new();
    for id in segment::list(dir)? {
        let p = segment::path(dir, id);
        match std::fs::metadata(&p) {
            Ok(m) => out.push(SegmentFile {
                id,
                len: m.len(),
                modified: m.modified().at(&p)?,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).at(&p),
        }
    }
    Ok(out)
}

/// Removes the journal directory `dir` and every file in it, under the journal's exclusive
/// lock (waiting at most `lock_wait`). Returns the bytes removed, or `None` when the lock
/// could not be had (someone is writing: nothing is removed) or `dir` does not exist. A
/// directory inside `dir` is not ours: it makes the removal fail after the files are gone.
pub fn remove_journal(dir: &Path, lock_wait: Duration) -> Result<Option<u64>> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let lock_path = dir.join(LOCK_FILE);
    let Some(held) = FileLock::try_exclusive(&lock_path, lock_wait)? else {
        return Ok(None);
    };
    let mut bytes = 0;
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).at(dir)? {
        let entry = entry.at(dir)?;
        let p = entry.path();
        let meta = entry.metadata().at(&p)?;
        if meta.is_file() && p != lock_path {
            bytes += meta.len();
            files.push(p);
        }
    }
    for p in &files {
        match std::fs::remove_file(p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).at(p),
        }
    }
    // The lock file goes last, still held: a writer waiting on it finds the journal gone.
    std::fs::remove_file(&lock_path).at(&lock_path)?;
    drop(held);
    std::fs::remove_dir(dir).at(dir)?;
    if let Some(parent) = dir.parent() {
        segment::sync_dir(parent)?;
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Durability, Journal, Options};

    #[test]
    fn a_whole_journal_goes_and_its_size_is_counted() -> Result<()> {
        let tmp = tempfile::tempdir().map_err(|e| crate::Error::Io {
            path: std::env::temp_dir(),
            source: e,
        })?;
        let dir = tmp.path().join("j");
        let j = Journal::open(&dir, Options::default())?;
        j.append(b"one", Durability::Sync)?;
        j.roll_with_snapshot(b"snap")?;
        j.append(b"two", Durability::Sync)?;
        drop(j);
        let files = segment_files(&dir)?;
        assert_eq!(files.iter().map(|f| f.id).collect::<Vec<_>>(), vec![0, 1]);
        let total: u64 = files.iter().map(|f| f.len).sum();
        assert_eq!(remove_journal(&dir, Duration::ZERO)?, Some(total));
        assert!(!dir.exists());
        assert_eq!(remove_journal(&dir, Duration::ZERO)?, None);
        Ok(())
    }

    #[test]
    fn a_journal_whose_lock_is_held_is_left_alone() -> Result<()> {
        let tmp = tempfile::tempdir().map_err(|e| crate::Error::Io {
            path: std::env::temp_dir(),
            source: e,
        })?;
        let dir = tmp.path().join("j");
        let j = Journal::open(&dir, Options::default())?;
        j.append(b"one", Durability::Sync)?;
        let held = FileLock::try_exclusive(&dir.join(LOCK_FILE), Duration::ZERO)?;
        assert!(held.is_some());
        assert_eq!(remove_journal(&dir, Duration::ZERO)?, None);
        assert!(segment_files(&dir)?.len() == 1);
        Ok(())
    }
}
