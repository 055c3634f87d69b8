//! SessionEnd: journal it, start the detached worker that closes the session's
//! open turns, sends them and commits the session, return. Prints nothing.

use ov_engine::event::{Event, HookKind, WorkerReason};

use super::{load_config, start_worker, Invocation, Journaled};

/// Handles a SessionEnd.
pub fn handle(inv: &Invocation) {
    let cfg = load_config(&inv.cwd);
    let paused = inv.paused(|| cfg.workspace.slot.clone()).is_some();
    let active = cfg.memory_enabled && !inv.passes_through(&cfg) && !paused;
    let received = inv.received(HookKind::SessionEnd, active);
    let journaled = inv.open_journaling(Event::HookReceived(received));
    if active && !matches!(journaled, Journaled::Lost) {
        start_worker(inv, journaled, WorkerReason::SessionEnd);
    }
}
