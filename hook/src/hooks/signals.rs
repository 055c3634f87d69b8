//! A hook exits 0 whatever signal asks it to stop.
//!
//! # Context
//!
//! A harness shows any other exit status as a hook error (Claude Code: exit 2 even blocks the
//! agent), and a harness that gives up on a hook, or a terminal that closes, stops it with
//! SIGTERM, SIGINT or SIGHUP: by default 143, 130 or 129.
//!
//! # Design
//!
//! Installed first thing on every hook path: each of those signals runs `_exit(0)`
//! (async-signal-safe; no destructor, no flush is needed). Whatever the hook journaled before is
//! in the file already: a journal append returns once its frame is written, and a frame cut
//! short by the exit is a torn tail the journal's recovery drops. SIGPIPE stays ignored (Rust's
//! default): a write to a closed stdout fails, and the hook goes on to exit 0.
//!
//! The detached worker and the drain are not hooks: nobody reads their exit status, `exec`
//! resets these handlers to the default, and a killed worker's work is picked up by the next
//! one from the journal.

/// Every signal a hook ends with exit status 0 on.
pub const EXIT_ZERO_ON: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

extern "C" fn exit_zero(_signal: libc::c_int) {
    // SAFETY: _exit(2) is async-signal-safe and takes no pointer.
    unsafe { libc::_exit(0) }
}

/// Makes every signal of [`EXIT_ZERO_ON`] end the process with status 0.
pub fn exit_zero_when_stopped() {
    let handler = exit_zero as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for signal in EXIT_ZERO_ON {
        // SAFETY: signal(2) with a valid signal number and a handler that only calls an
        // async-signal-safe function.
        unsafe {
            libc::signal(signal, handler);
        }
    }
}
