//! Crash-test failpoints compiled into the real binaries.
//!
//! `OVHOOK_FAILPOINT=POINT[,POINT…]` makes the process send itself SIGKILL the
//! first time it reaches one of the named points. Only tests and `ovreplay
//! simulate --faults kill:POINT@N` set it; without it, [`hit`] is one cached
//! environment lookup.

use std::sync::OnceLock;

/// Every failpoint, in the order a Stop worker reaches them.
pub const POINTS: [&str; 6] = [
    AFTER_STOP_JOURNALED,
    AFTER_ROLLOUT_READ,
    AFTER_PLAN,
    AFTER_REQUEST_SENT,
    AFTER_REPLY_BEFORE_OUTCOME,
    AFTER_COMMIT_SENT,
];

/// The worker started; the Stop event is already durable.
pub const AFTER_STOP_JOURNALED: &str = "after-stop-journaled";
/// The rollout range read is journaled.
pub const AFTER_ROLLOUT_READ: &str = "after-rollout-read";
/// The planned messages are journaled.
pub const AFTER_PLAN: &str = "after-plan";
/// A send is journaled as started and its request body handed to the socket.
pub const AFTER_REQUEST_SENT: &str = "after-request-sent";
/// The server's reply was read; its outcome is not journaled.
pub const AFTER_REPLY_BEFORE_OUTCOME: &str = "after-reply-before-outcome";
/// A commit is journaled as started and its request sent.
pub const AFTER_COMMIT_SENT: &str = "after-commit-sent";

fn armed() -> &'static [String] {
    static ARMED: OnceLock<Vec<String>> = OnceLock::new();
    ARMED.get_or_init(|| {
        std::env::var("OVHOOK_FAILPOINT")
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// True when `point` is armed in this process.
pub fn is_armed(point: &str) -> bool {
    armed().iter().any(|p| p == point)
}

/// Kills the process with SIGKILL if `point` is armed.
pub fn hit(point: &str) {
    if is_armed(point) {
        log::warn!("failpoint {point}: SIGKILL");
        // SAFETY: kill(2) on our own pid with a valid signal number has no
        // memory-safety preconditions.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        // SIGKILL cannot be caught; this is unreachable in practice.
        std::process::abort();
    }
}
