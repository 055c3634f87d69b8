//! Stop: journal the turn's end durably, start the detached worker, return.
//! Prints nothing (ZCode would render Stop context as an assistant message, and no agent reads
//! an answer to Stop as context).

use ov_engine::event::{HookKind, WorkerReason};

use super::{load_config, start_worker, Invocation, Journaled};
use crate::harness::HookEvent;

/// Handles a Stop. A Stop that does not capture (paused, off, bypassed) journals no content,
/// refuses its turn and starts no worker.
pub fn handle(inv: &Invocation) {
    let cfg = load_config(&inv.cwd);
    let capture = inv.capture(&cfg);
    let on = capture.is_on();
    let privacy = on.then(|| ov_engine::privacy::Policy::from_config(&cfg));
    let mut events = inv.receipt(HookKind::Stop, privacy.as_ref(), &capture);
    if on {
        events.extend(inv.transcript_named(HookEvent::Stop));
    }
    let journaled = inv.open_journaling_all(events);
    if on && !matches!(journaled, Journaled::Lost) {
        start_worker(inv, journaled, WorkerReason::Stop);
    }
}
