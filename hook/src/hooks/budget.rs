//! One time budget for each whole hook invocation.
//!
//! # Context
//!
//! Every agent kills a hook at the timeout its installed entry names (ZCode's `timeoutMs`,
//! Claude Code's `timeout`, ...) and the user waits meanwhile. Every step of
//! a hook (reading stdin, loading configuration, each request to the server) takes its time out
//! of one budget that starts when the process starts, so no input, file or server can make a
//! hook run longer than its budget, whatever the configuration says.
//!
//! # Design
//!
//! | event | budget | installed timeout (ZCode's `timeoutMs`) |
//! |---|---|---|
//! | SessionStart | 5 s | 15 s |
//! | UserPromptSubmit | 6 s | 10 s |
//! | PreToolUse | 3 s | 5 s |
//! | PostToolUse | 3 s | - |
//! | Stop | 3 s | 10 s |
//! | PreCompact (sends and commits before it returns) | 10 s | 30 s |
//! | SubagentStop | 3 s | 10 s |
//!
//! stdin gets at most a third of the budget (1 s to 1.5 s here): an agent writes the payload at
//! once, so a stdin still open and silent after that is a fault, not a slow writer. Requests
//! get what is left, less [`Budget::RESERVE`] for journaling and printing.
//!
//! The journal's lock gets at most [`Budget::LOCK_WAIT`]: a hook that cannot have it by then
//! writes its event to a spill file instead ([`ov_engine::spill`]), which the next writer
//! ingests.

use std::time::{Duration, Instant};

use crate::harness::HookEvent;

/// The deadline of one hook invocation.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    start: Instant,
    total: Duration,
}

impl Budget {
    /// Kept back from network work for journaling the outcome and printing.
    pub const RESERVE: Duration = Duration::from_millis(300);

    /// Most a hook waits for the journal's lock before it spills.
    pub const LOCK_WAIT: Duration = Duration::from_millis(500);

    /// Most stdin may take.
    const STDIN_MAX: Duration = Duration::from_millis(1500);

    /// The budget of `event`, starting now.
    pub fn start(event: HookEvent) -> Budget {
        Budget {
            start: Instant::now(),
            total: Budget::of(event),
        }
    }

    /// The whole budget of `event`.
    pub fn of(event: HookEvent) -> Duration {
        match event {
            HookEvent::SessionStart => Duration::from_secs(5),
            HookEvent::UserPromptSubmit => Duration::from_secs(6),
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::Stop
            | HookEvent::SubagentStop => Duration::from_secs(3),
            HookEvent::PreCompact => Duration::from_secs(10),
            // Claude Code kills SessionEnd hooks after 1.5 s by default.
            HookEvent::SessionEnd => Duration::from_secs(1),
        }
    }

    /// When reading stdin must stop.
    pub fn stdin_deadline(&self) -> Instant {
        self.start + (self.total / 3).min(Budget::STDIN_MAX)
    }

    /// When network work must be over.
    pub fn network_deadline(&self) -> Instant {
        self.start + self.total.saturating_sub(Budget::RESERVE)
    }

    /// How long to wait for the journal's lock now: [`Budget::LOCK_WAIT`], less when the
    /// budget has less left before its reserve (never zero, so a free lock is always taken).
    pub fn lock_wait(&self) -> Duration {
        self.network_left()
            .min(Budget::LOCK_WAIT)
            .max(Duration::from_millis(1))
    }

    /// Time left for network work (zero when spent).
    pub fn network_left(&self) -> Duration {
        self.network_deadline()
            .saturating_duration_since(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::zcode::config_file::OUR_HOOKS;

    /// Each budget stays well inside the timeout ZCode is told to enforce (at most two thirds).
    #[test]
    fn budgets_fit_well_inside_the_installed_timeouts() {
        for (event, sub, _, timeout_ms, _) in OUR_HOOKS {
            let e = HookEvent::from_command(sub).expect(event);
            let budget = Budget::of(e).as_millis() as u64;
            assert!(
                budget * 3 <= timeout_ms * 2,
                "{event}: {budget} ms of {timeout_ms}"
            );
            let b = Budget::start(e);
            assert!(b.stdin_deadline() < b.network_deadline(), "{event}");
        }
    }
}
