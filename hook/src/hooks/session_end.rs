//! SessionEnd: journal it, start the detached worker that closes the session's
//! open turns, sends them and commits the session, return. Prints nothing.

use ov_engine::event::{HookKind, WorkerReason};

use super::{load_config, start_worker, Invocation, Journaled};

/// Handles a SessionEnd.
pub fn handle(inv: &Invocation) {
    let cfg = load_config(&inv.cwd);
    let paused = inv.paused(|| cfg.workspace.slot.clone()).is_some();
    let active = cfg.memory_enabled && !inv.passes_through(&cfg) && !paused;
    let privacy = active.then(|| ov_engine::privacy::Policy::from_config(&cfg));
    let journaled =
        inv.open_journaling_all(inv.received_events(HookKind::SessionEnd, privacy.as_ref()));
    if active && !matches!(journaled, Journaled::Lost) {
        start_worker(inv, journaled, WorkerReason::SessionEnd);
    }
}
