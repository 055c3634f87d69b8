//! Waiting for ovhook's detached workers.
//!
//! A worker holds `flock` on `<state>/journals/<id>/worker.lock` while it works
//! (ARCHITECTURE.md). Workers are in their own session (setsid), so they are not our
//! children. "Idle" means: no process runs `ovhook worker` with our `OVHOOK_STATE_DIR`, and no
//! worker lock is held, for [`QUIET`] in a row.
//!
//! The lock probe takes a non-blocking shared lock and drops it at once; the process scan
//! comes first so that the probe rarely overlaps a worker that is just starting.

use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::bail;

/// How long "free" must last before we believe it.
const QUIET: Duration = Duration::from_millis(300);
const POLL: Duration = Duration::from_millis(50);

/// Waits until no worker runs for `state_dir`, at most `timeout`.
pub fn wait_idle(state_dir: &Path, timeout: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    let mut free_since: Option<Instant> = None;
    loop {
        let busy = worker_process_alive(state_dir) || any_lock_held(state_dir);
        let now = Instant::now();
        if busy {
            free_since = None;
        } else {
            let since = *free_since.get_or_insert(now);
            if now.duration_since(since) >= QUIET {
                return Ok(());
            }
        }
        if now > deadline {
            bail!(
                "ovhook workers still running for {} after {timeout:?}",
                state_dir.display()
            );
        }
        std::thread::sleep(POLL);
    }
}

/// True when some process runs `… worker …` with `OVHOOK_STATE_DIR=<state_dir>`.
fn worker_process_alive(state_dir: &Path) -> bool {
    let want = format!("OVHOOK_STATE_DIR={}", state_dir.display());
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|p| {
        let dir = p.path();
        let Ok(cmdline) = std::fs::read(dir.join("cmdline")) else {
            return false;
        };
        if !cmdline
            .split(|b| *b == 0)
            .any(|a| a == b"worker" || a == b"drain")
        {
            return false;
        }
        // A zombie has an empty environ; it is not working any more.
        std::fs::read(dir.join("environ"))
            .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == want.as_bytes()))
    })
}

/// True when some `journals/*/worker.lock` is locked by someone.
fn any_lock_held(state_dir: &Path) -> bool {
    let Ok(journals) = std::fs::read_dir(state_dir.join("journals")) else {
        return false;
    };
    journals.flatten().any(|j| {
        let lock = j.path().join("worker.lock");
        let Ok(file) = std::fs::OpenOptions::new().read(true).open(&lock) else {
            return false;
        };
        // SAFETY: flock on a descriptor we own; the lock dies with `file` below.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
        if rc == 0 {
            // SAFETY: as above.
            unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
            false
        } else {
            std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_lock_is_busy_then_free() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().join("journals/sess_x");
        std::fs::create_dir_all(&dir)?;
        let lock = std::fs::File::create(dir.join("worker.lock"))?;
        // SAFETY: flock on our own descriptor.
        assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
        assert!(any_lock_held(tmp.path()));
        assert!(wait_idle(tmp.path(), Duration::from_millis(200)).is_err());
        drop(lock);
        assert!(!any_lock_held(tmp.path()));
        wait_idle(tmp.path(), Duration::from_secs(5))?;
        Ok(())
    }
}
