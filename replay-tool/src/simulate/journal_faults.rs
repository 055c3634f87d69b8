//! Faults done to the session's journal between or during turns: flipped bytes (in the first
//! frame, the middle of the active segment, a snapshot), compaction, a compaction racing the
//! hooks, and the journal lock held by another process.
//!
//! Offsets follow `journal/FORMAT.md`: a segment's first frame starts at byte 32 and has a
//! 16-byte header; a compacted journal's newest segment starts with its snapshot frame.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;

/// The segment files of the journal in `dir`, oldest first.
fn segments(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("could not list {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| ov_journal::segment_id(p).is_some())
        .collect();
    v.sort_by_key(|p| ov_journal::segment_id(p));
    Ok(v)
}

/// Inverts the byte at `offset` of `file` (clamped inside the file).
fn flip(file: &Path, offset: u64) -> anyhow::Result<()> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(file)
        .with_context(|| format!("could not open {}", file.display()))?;
    let len = f.metadata()?.len();
    anyhow::ensure!(len > 0, "{} is empty", file.display());
    let at = offset.min(len - 1);
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at)?;
    b[0] ^= 0xff;
    f.write_all_at(&b, at)?;
    f.sync_all()?;
    Ok(())
}

/// A byte inside the payload of the first frame of the oldest segment.
pub fn flip_first(dir: &Path) -> anyhow::Result<()> {
    let first = segments(dir)?
        .into_iter()
        .next()
        .context("the journal has no segment")?;
    flip(
        &first,
        ov_journal::SEGMENT_HEADER_LEN + ov_journal::FRAME_HEADER_LEN + 4,
    )
}

/// A byte in the middle of the newest (active) segment.
pub fn flip_mid(dir: &Path) -> anyhow::Result<()> {
    let last = segments(dir)?.pop().context("the journal has no segment")?;
    let len = std::fs::metadata(&last)?.len();
    flip(&last, len / 2)
}

/// `ovreplay compact` on the journal.
pub fn compact(dir: &Path) -> anyhow::Result<()> {
    crate::cmd::compact::compact(dir).map(drop)
}

/// Compacts, then flips a byte inside the snapshot that now starts the newest segment.
pub fn flip_snapshot(dir: &Path) -> anyhow::Result<()> {
    compact(dir)?;
    let last = segments(dir)?.pop().context("the journal has no segment")?;
    flip(
        &last,
        ov_journal::SEGMENT_HEADER_LEN + ov_journal::FRAME_HEADER_LEN + 8,
    )
}

/// Compacts over and over until the returned flag is set (errors are expected while hooks
/// hold the journal, and ignored).
pub fn compact_loop(dir: PathBuf) -> (Arc<AtomicBool>, JoinHandle<()>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        while !flag.load(Ordering::SeqCst) {
            let _ = compact(&dir);
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    (stop, handle)
}

/// Holds the journal's exclusive lock for `hold` from another thread; returns once it is held.
pub fn hold_lock(dir: &Path, hold: Duration) -> anyhow::Result<JoinHandle<()>> {
    let path = dir.join(ov_journal::LOCK_FILE);
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let lock = ov_journal::FileLock::try_exclusive(&path, Duration::from_secs(10));
        let _ = tx.send(());
        if let Ok(Some(_held)) = lock {
            std::thread::sleep(hold);
        }
    });
    rx.recv_timeout(Duration::from_secs(15))
        .context("could not take the journal lock")?;
    Ok(handle)
}
