//! Starting the worker so that ZCode never waits on it.
//!
//! The child runs in a new session (setsid), with stdin, stdout and stderr on
//! /dev/null: a descendant holding the hook's pipes makes the agent wait
//! (measured: ≈0.5 s per hook in Claude Code). The parent does not wait for it.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// Spawns `ovhook <args…>` detached. Returns false if it could not start.
pub fn spawn_self(args: &[&str]) -> bool {
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid(2) is async-signal-safe and is the only call made in the
    // child between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    match cmd.spawn() {
        Ok(child) => {
            // Not waited for: it outlives us and is reaped by init.
            drop(child);
            true
        }
        Err(e) => {
            log::warn!("could not start the worker: {e}");
            false
        }
    }
}
