//! Stop: journal the turn's end durably, start the detached worker, return.
//! Prints nothing (ZCode would render Stop context as an assistant message).

use ov_engine::event::{Event, HookKind, WorkerReason};

use super::{load_config, start_worker, Invocation, Journaled};

/// Handles a Stop.
pub fn handle(inv: &Invocation) {
    let cfg = load_config(&inv.cwd);
    let capture = cfg.memory_enabled && cfg.capture.enabled && !inv.passes_through(&cfg);
    let received = inv.received(HookKind::Stop, capture);
    let journaled = inv.open_journaling(Event::HookReceived(received));
    if capture && !matches!(journaled, Journaled::Lost) {
        start_worker(inv, journaled, WorkerReason::Stop);
    }
}
