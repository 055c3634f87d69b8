//! The journal handle: open and recovery, single and batch appends, rolls, segment removal.
//!
//! # Design
//!
//! Every mutation runs under the exclusive `flock` on `<dir>/LOCK`, taken with a bounded wait,
//! after checking the active segment's tail (another process may have appended, rolled, or died
//! mid-write). Within a process a `Mutex` (also acquired with a bounded wait) serializes the
//! handle's threads. Each append writes its complete encoding with one positioned `write_all` at
//! the verified end of the file, from one reused buffer.

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::thread;
use std::time::{Duration, Instant};

pub(crate) use crate::active::State;
use crate::active::{load_active, salt_source, scan_tail};
use crate::error::{CorruptionKind, Error, IoContext, Result};
use crate::format::{
    encode_frame, frame_size, Salt, FLAG_BEGIN, FLAG_END, FORMAT_VERSION, MAX_PAYLOAD_LEN,
    SEGMENT_HEADER_LEN,
};
use crate::lock::{lock_bounded, open_lock_file, Held};
use crate::reader::Reader;
use crate::segment::{self, Header};
use crate::writer::Writer;
use crate::{Damage, Durability, FrameKind, Options, Position, RecoveryMode};

/// Name of the lock file inside a journal directory.
pub const LOCK_FILE: &str = "LOCK";

/// A journal: a directory of segment files, shared safely by many processes.
///
/// `Journal` is `Send + Sync`; its methods take `&self`.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    lock_path: PathBuf,
    opts: Options,
    lock_file: File,
    state: Mutex<State>,
    poisoned: AtomicBool,
}

impl Journal {
    /// Opens the journal in `dir`, creating it (directory 0700, files 0600) when `opts.create` is
    /// set. Takes the exclusive lock, removes leftovers of an interrupted roll, and recovers the
    /// active segment's tail according to `opts.recovery`.
    pub fn open(dir: &Path, opts: Options) -> Result<Journal> {
        if !dir.is_dir() {
            if !opts.create {
                return Err(Error::NotFound {
                    path: dir.to_path_buf(),
                });
            }
            create_dir(dir)?;
        }
        let lock_path = dir.join(LOCK_FILE);
        let lock_file = open_lock_file(&lock_path)?;
        let held = take(&lock_file, &lock_path, true, opts.lock_timeout)?;
        segment::remove_stale_tmp(dir)?;
        let mut ids = segment::list(dir)?;
        if ids.is_empty() {
            if !opts.create {
                return Err(Error::NotFound {
                    path: dir.to_path_buf(),
                });
            }
            segment::create(dir, 0, None, salt_source(&opts))?;
            ids.push(0);
        }
        // Sealed segments are not opened here (a long session has many): under the tolerant mode
        // readers report a damaged one as a damaged range; the strict mode refuses it now.
        if opts.recovery == RecoveryMode::AbsoluteConsistency {
            for &id in ids.iter().rev().skip(1) {
                let p = segment::path(dir, id);
                let f = File::open(&p).at(&p)?;
                if let Header::Torn = segment::check_header(&f, &p, id)? {
                    return Err(Error::Corruption {
                        path: p,
                        offset: 0,
                        kind: CorruptionKind::SegmentHeaderTruncated,
                    });
                }
            }
        }
        let state = load_active(dir, &opts, true)?;
        drop(held);
        Ok(Journal {
            dir: dir.to_path_buf(),
            lock_path,
            opts,
            lock_file,
            state: Mutex::new(state),
            poisoned: AtomicBool::new(false),
        })
    }

    /// The journal directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends one record frame; returns its position. With [`Durability::Sync`] the frame is on
    /// disk (`fdatasync`) before this returns.
    pub fn append(&self, payload: &[u8], d: Durability) -> Result<Position> {
        self.append_batch(&[payload], d)
    }

    /// Appends record frames that land whole or not at all (after a crash, recovery and readers see
    /// either every frame of the batch or none). Returns the position of the first frame; an empty
    /// batch writes nothing and returns the end.
    pub fn append_batch(&self, payloads: &[&[u8]], d: Durability) -> Result<Position> {
        self.check_payloads(payloads)?;
        let mut st = self.state()?;
        let _held = self.lock(true)?;
        self.refresh(&mut st, true)?;
        let pos = Position {
            segment: st.active,
            offset: st.end,
        };
        if payloads.is_empty() {
            return Ok(pos);
        }
        self.migrate(&mut st)?;
        let pos = Position {
            segment: st.active,
            offset: st.end,
        };
        st.buf.clear();
        let salt = st.header.salt;
        encode_batch(&mut st.buf, salt, payloads);
        self.write_buf(&mut st)?;
        if d == Durability::Sync {
            self.sync(&st)?;
        }
        Ok(pos)
    }

    /// The position after the last valid frame, re-read from disk (sees other processes'
    /// appends).
    pub fn end(&self) -> Result<Position> {
        let mut st = self.state()?;
        let _held = self.lock(false)?;
        self.refresh(&mut st, false)?;
        Ok(Position {
            segment: st.active,
            offset: st.end,
        })
    }

    /// Damaged ranges of the active segment, as found when it was last scanned (on open, and when
    /// another process appended). Appends go after them; they are never cut.
    pub fn active_damage(&self) -> Result<Vec<Damage>> {
        let mut st = self.state()?;
        let _held = self.lock(false)?;
        self.refresh(&mut st, false)?;
        Ok(st.damage.clone())
    }

    /// A memory-mapped view of all segments as they are now. It takes the shared lock only while
    /// it is built; later appends by anyone are not visible in it.
    pub fn reader(&self) -> Result<Reader> {
        let mut st = self.state()?;
        let _held = self.lock(false)?;
        self.refresh(&mut st, false)?;
        Reader::load(&self.dir, Some((st.active, st.end)))
    }

    /// Starts a new segment whose first frame is `snapshot` (a [`FrameKind::Snapshot`] frame),
    /// after making the current one durable. Later appends go to the new segment; readers can
    /// start from [`Reader::latest_snapshot`] instead of the beginning. Returns the snapshot's
    /// position. Durable when it returns.
    pub fn roll_with_snapshot(&self, snapshot: &[u8]) -> Result<Position> {
        self.check_payloads(&[snapshot])?;
        let mut st = self.state()?;
        let _held = self.lock(true)?;
        self.refresh(&mut st, true)?;
        self.roll(&mut st, snapshot)
    }

    /// [`Journal::roll_with_snapshot`], only if the journal still ends at `expected_end` (checked
    /// under the exclusive lock): a snapshot folded up to `expected_end` then covers every
    /// frame before the roll. `Ok(None)` when something was appended (or rolled) since: fold
    /// the frames after `expected_end` and try again.
    pub fn roll_with_snapshot_if_end(
        &self,
        expected_end: Position,
        snapshot: &[u8],
    ) -> Result<Option<Position>> {
        self.check_payloads(&[snapshot])?;
        let mut st = self.state()?;
        let _held = self.lock(true)?;
        self.refresh(&mut st, true)?;
        if (st.active, st.end) != (expected_end.segment, expected_end.offset) {
            return Ok(None);
        }
        self.roll(&mut st, snapshot).map(Some)
    }

    /// Removes every segment whose id is below `segment`, never the active one. Returns how many
    /// were removed. Open [`Reader`]s keep their view of removed segments.
    pub fn remove_segments_before(&self, segment: u64) -> Result<usize> {
        self.check_poison()?;
        let mut st = self.state()?;
        let _held = self.lock(true)?;
        self.refresh(&mut st, true)?;
        let limit = segment.min(st.active);
        let mut removed = 0;
        for id in segment::list(&self.dir)? {
            if id < limit {
                let p = segment::path(&self.dir, id);
                std::fs::remove_file(&p).at(&p)?;
                removed += 1;
            }
        }
        if removed > 0 {
            segment::sync_dir(&self.dir)?;
        }
        Ok(removed)
    }

    /// A writer that holds the exclusive lock until dropped and buffers appends in memory (for
    /// bulk writes). Other processes' appends and readers wait (bounded) while it lives: keep it
    /// short-lived.
    pub fn writer(&self) -> Result<Writer<'_>> {
        self.check_poison()?;
        let mut st = self.state()?;
        let held = self.lock(true)?;
        self.refresh(&mut st, true)?;
        Ok(Writer::new(self, st, held))
    }

    // ---- internals shared with `Writer` ----

    pub(crate) fn check_poison(&self) -> Result<()> {
        if self.poisoned.load(Ordering::Acquire) {
            return Err(Error::Poisoned {
                path: self.dir.clone(),
            });
        }
        Ok(())
    }

    pub(crate) fn check_payloads(&self, payloads: &[&[u8]]) -> Result<()> {
        self.check_poison()?;
        for p in payloads {
            if p.len() as u64 > u64::from(MAX_PAYLOAD_LEN) {
                return Err(Error::FrameTooLarge {
                    path: self.dir.clone(),
                    len: p.len() as u64,
                    max: MAX_PAYLOAD_LEN,
                });
            }
        }
        Ok(())
    }

    /// Locks the in-process state with the bounded wait.
    fn state(&self) -> Result<MutexGuard<'_, State>> {
        self.check_poison()?;
        let start = Instant::now();
        let mut pause = Duration::from_micros(20);
        loop {
            match self.state.try_lock() {
                Ok(g) => return Ok(g),
                // A panic while holding it: the state is re-verified under the LOCK anyway.
                Err(TryLockError::Poisoned(p)) => return Ok(p.into_inner()),
                Err(TryLockError::WouldBlock) => {}
            }
            if start.elapsed() >= self.opts.lock_timeout {
                return Err(Error::LockTimeout {
                    path: self.lock_path.clone(),
                    waited: start.elapsed(),
                });
            }
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }

    fn lock(&self, exclusive: bool) -> Result<Held<'_>> {
        take(
            &self.lock_file,
            &self.lock_path,
            exclusive,
            self.opts.lock_timeout,
        )
    }

    /// Brings `st` up to date with the directory: follows rolls made by other processes and scans
    /// frames appended since `st.end`. With `repair` (exclusive lock held) a torn tail is cut.
    pub(crate) fn refresh(&self, st: &mut State, repair: bool) -> Result<()> {
        let meta = st.file.metadata().at(&st.path)?;
        let next = segment::path(&self.dir, st.active.saturating_add(1));
        if meta.nlink() == 0 || next.exists() {
            *st = load_active(&self.dir, &self.opts, repair)?;
            return Ok(());
        }
        if meta.len() == st.end {
            return Ok(());
        }
        let from = if meta.len() < st.end {
            SEGMENT_HEADER_LEN
        } else {
            st.end
        };
        if from == SEGMENT_HEADER_LEN {
            st.damage.clear();
        }
        let (end, damage) =
            scan_tail(&st.file, &st.path, st.header.salt, from, &self.opts, repair)?;
        st.end = end;
        st.damage.extend(damage);
        Ok(())
    }

    /// Writes `st.buf` at the end of the active segment.
    pub(crate) fn write_buf(&self, st: &mut State) -> Result<()> {
        if let Err(e) = st.file.write_all_at(&st.buf, st.end) {
            st.buf.clear();
            // Cut whatever part landed, so no frame of a failed write survives. If even that
            // fails, the file state is unknown: refuse further use.
            if st.file.set_len(st.end).is_err() {
                self.poisoned.store(true, Ordering::Release);
            }
            return Err(Error::Io {
                path: st.path.clone(),
                source: e,
            });
        }
        st.end += st.buf.len() as u64;
        st.buf.clear();
        Ok(())
    }

    /// `fdatasync`s the active segment; poisons the handle on failure.
    pub(crate) fn sync(&self, st: &State) -> Result<()> {
        st.file.sync_data().at(&st.path).inspect_err(|_| {
            self.poisoned.store(true, Ordering::Release);
        })
    }

    /// Rolls to a new segment (exclusive lock held, `st` refreshed, buffer empty).
    pub(crate) fn roll(&self, st: &mut State, snapshot: &[u8]) -> Result<Position> {
        self.sync(st)?;
        self.start_segment(st, Some(snapshot))?;
        Ok(Position {
            segment: st.active,
            offset: SEGMENT_HEADER_LEN,
        })
    }

    /// Creates segment `active + 1` (with `snapshot` as its first frame, when given) and makes it
    /// the active one (exclusive lock held, the current segment synced).
    fn start_segment(&self, st: &mut State, snapshot: Option<&[u8]>) -> Result<()> {
        let id = st.active.saturating_add(1);
        let (file, len, header) = segment::create(&self.dir, id, snapshot, salt_source(&self.opts))
            .inspect_err(|_| {
                // A failed fsync of the new segment or the directory: be conservative.
                self.poisoned.store(true, Ordering::Release);
            })?;
        st.active = id;
        st.path = segment::path(&self.dir, id);
        st.file = file;
        st.header = header;
        st.end = len;
        st.damage.clear();
        Ok(())
    }

    /// Before the first append to an active segment of an older format version (exclusive lock
    /// held, `st` refreshed, buffer empty): seals it and starts a segment of this version, so
    /// that every new frame is keyed with a salt. The older segment is never written again and
    /// is read with its own version's rules.
    pub(crate) fn migrate(&self, st: &mut State) -> Result<()> {
        if st.header.version == FORMAT_VERSION {
            return Ok(());
        }
        log::info!(
            "journal {}: segment {} is format version {}; new frames go to a version {} segment",
            self.dir.display(),
            st.active,
            st.header.version,
            FORMAT_VERSION
        );
        self.sync(st)?;
        self.start_segment(st, None)
    }
}

/// Encodes `payloads` as one unit: a single frame, or BEGIN, middle frames, END.
// Format: a unit = { frame(flags=BEGIN|END) } or { frame(BEGIN) | frame(0)* | frame(END) }
pub(crate) fn encode_batch(buf: &mut Vec<u8>, salt: Salt, payloads: &[&[u8]]) {
    let last = payloads.len().saturating_sub(1);
    for (i, p) in payloads.iter().enumerate() {
        let mut flags = 0;
        if i == 0 {
            flags |= FLAG_BEGIN;
        }
        if i == last {
            flags |= FLAG_END;
        }
        encode_frame(buf, salt, FrameKind::Record, flags, p);
    }
}

/// Bytes one unit of `payloads` occupies.
pub(crate) fn batch_size(payloads: &[&[u8]]) -> u64 {
    payloads.iter().map(|p| frame_size(p.len())).sum()
}

fn create_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .at(dir)?;
    // Make the new directory's entry durable too.
    match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => segment::sync_dir(parent),
        _ => Ok(()),
    }
}

fn take<'a>(file: &'a File, path: &Path, exclusive: bool, wait: Duration) -> Result<Held<'a>> {
    let start = Instant::now();
    if lock_bounded(file, exclusive, wait).at(path)? {
        Ok(Held(file))
    } else {
        Err(Error::LockTimeout {
            path: path.to_path_buf(),
            waited: start.elapsed(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After a failed fsync (simulated by setting the flag the sync path sets), every call
    /// refuses with `Poisoned`, until the journal is reopened.
    #[test]
    fn poisoned_handle_refuses_every_call() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("j");
        let j = Journal::open(&dir, Options::default()).unwrap();
        j.append(b"x", Durability::Sync).unwrap();
        j.poisoned.store(true, Ordering::Release);
        let poisoned = |r: Result<()>| matches!(r, Err(Error::Poisoned { .. }));
        assert!(poisoned(j.append(b"y", Durability::Buffered).map(drop)));
        assert!(poisoned(
            j.append_batch(&[b"y"], Durability::Sync).map(drop)
        ));
        assert!(poisoned(j.roll_with_snapshot(b"s").map(drop)));
        assert!(poisoned(j.remove_segments_before(1).map(drop)));
        assert!(poisoned(j.writer().map(drop)));
        assert!(poisoned(j.end().map(drop)));
        assert!(poisoned(j.reader().map(drop)));
        drop(j);
        let j = Journal::open(&dir, Options::default()).unwrap();
        assert_eq!(j.reader().unwrap().frames().count(), 1);
    }
}
