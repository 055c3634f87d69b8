//! Starting the worker so that the agent never waits on it.
//!
//! The child runs in a new session (setsid), with stdin, stdout and stderr on
//! /dev/null: a descendant holding the hook's pipes makes the agent wait
//! (measured: ≈0.5 s per hook in Claude Code). The parent returns right after
//! `fork`: it does not wait for the child's `exec` (std's `Command::spawn`
//! does, which cost ≈1.5 ms on the Stop hot path), and never waits for the
//! child itself — it outlives us and is reaped by init.
//!
//! Invariant: called only from a single-threaded process (the hook binary
//! before any client exists), so the child may run between `fork` and `exec`;
//! it makes only async-signal-safe calls there (setsid, open, dup2, execv,
//! _exit) on memory prepared before the fork.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

/// Spawns `ovhook <args…>` detached. Returns false if it could not start.
pub fn spawn_self(args: &[&str]) -> bool {
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let Ok(path) = CString::new(exe.as_os_str().as_bytes()) else {
        return false;
    };
    let mut argv_owned = vec![path.clone()];
    for a in args {
        let Ok(c) = CString::new(*a) else {
            return false;
        };
        argv_owned.push(c);
    }
    let mut argv: Vec<*const libc::c_char> = argv_owned.iter().map(|c| c.as_ptr()).collect();
    argv.push(std::ptr::null());
    let devnull = c"/dev/null";

    // SAFETY: see the module invariant. Everything the child touches (path,
    // argv, devnull) was allocated before fork and stays alive in the parent
    // until this function returns; the child either execs or _exits.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => {
            log::warn!(
                "could not start the worker: {}",
                std::io::Error::last_os_error()
            );
            false
        }
        // SAFETY: the child of a fork calls only async-signal-safe functions (setsid, open,
        // dup2, close, execv, _exit) on memory allocated before the fork, then execs or exits.
        0 => unsafe {
            libc::setsid();
            let fd = libc::open(devnull.as_ptr(), libc::O_RDWR);
            if fd >= 0 {
                libc::dup2(fd, 0);
                libc::dup2(fd, 1);
                libc::dup2(fd, 2);
                if fd > 2 {
                    libc::close(fd);
                }
            }
            libc::execv(path.as_ptr(), argv.as_ptr());
            libc::_exit(127)
        },
        _ => true,
    }
}
