//! Advisory `flock` locks with a bounded wait.
//!
//! Locks are held on an open file description: they are released when dropped, when the file is
//! closed, or when the process dies (including SIGKILL). No call here ever waits longer than the
//! bound it is given.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{IoContext, Result};

/// Opens (creating it with mode 0600 if missing) a lock file.
pub(crate) fn open_lock_file(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .at(path)
}

/// Tries to lock `file` until `wait` has passed, sleeping briefly between tries.
/// Returns `Ok(false)` when the lock was not obtained in time.
pub(crate) fn lock_bounded(file: &File, exclusive: bool, wait: Duration) -> io::Result<bool> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(20);
    loop {
        let r = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match r {
            Ok(()) => return Ok(true),
            Err(TryLockError::Error(e)) => return Err(e),
            Err(TryLockError::WouldBlock) => {}
        }
        let elapsed = start.elapsed();
        if elapsed >= wait {
            return Ok(false);
        }
        thread::sleep(pause.min(wait.saturating_sub(elapsed)));
        pause = (pause * 2).min(Duration::from_millis(1));
    }
}

/// Unlocks `file` when dropped.
#[derive(Debug)]
pub(crate) struct Held<'a>(pub(crate) &'a File);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // Closing the file or process death releases it as well; an error here leaves nothing to do.
        let _ = self.0.unlock();
    }
}

/// An advisory lock on a file (`flock`), released on drop or process death.
///
/// Used by the journal for its `LOCK` file and by other crates for their own locks (e.g. a
/// per-session worker lock).
#[derive(Debug)]
pub struct FileLock {
    file: File,
    path: PathBuf,
}

impl FileLock {
    /// Takes an exclusive lock on `path` (created with mode 0600 if missing), trying until `wait`
    /// has passed. `Ok(None)` means someone else holds it.
    pub fn try_exclusive(path: &Path, wait: Duration) -> Result<Option<FileLock>> {
        Self::take(path, true, wait)
    }

    /// Takes a shared lock on `path` (created with mode 0600 if missing), trying until `wait` has
    /// passed. `Ok(None)` means someone holds it exclusively.
    pub fn try_shared(path: &Path, wait: Duration) -> Result<Option<FileLock>> {
        Self::take(path, false, wait)
    }

    fn take(path: &Path, exclusive: bool, wait: Duration) -> Result<Option<FileLock>> {
        let file = open_lock_file(path)?;
        if lock_bounded(&file, exclusive, wait).at(path)? {
            Ok(Some(FileLock {
                file,
                path: path.to_path_buf(),
            }))
        } else {
            Ok(None)
        }
    }

    /// The locked file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_excludes_and_is_released_on_drop() -> Result<()> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("l");
        let a = FileLock::try_exclusive(&p, Duration::ZERO)?.unwrap();
        assert!(FileLock::try_exclusive(&p, Duration::from_millis(5))?.is_none());
        assert!(FileLock::try_shared(&p, Duration::ZERO)?.is_none());
        drop(a);
        let s1 = FileLock::try_shared(&p, Duration::ZERO)?.unwrap();
        let _s2 = FileLock::try_shared(&p, Duration::ZERO)?.unwrap();
        assert!(FileLock::try_exclusive(&p, Duration::ZERO)?.is_none());
        assert_eq!(s1.path(), p);
        Ok(())
    }
}
