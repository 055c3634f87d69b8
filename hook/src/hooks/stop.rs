//! Stop: journal the turn's end durably, start the detached worker, return.
//! Prints nothing (ZCode would render Stop context as an assistant message).

use ov_engine::event::{Event, HookKind};

use super::{load_config, Invocation, Journaled};

/// Handles a Stop.
pub fn handle(inv: &Invocation) {
    let cfg = load_config(&inv.cwd);
    let capture = cfg.memory_enabled && cfg.capture.enabled && !inv.passes_through(&cfg);
    let received = inv.received(HookKind::Stop, capture);
    let store = match inv.open_journaling(Event::HookReceived(received)) {
        Journaled::Store(store) => Some(store),
        Journaled::Spilled => None,
        Journaled::Lost => return,
    };
    if !capture {
        return;
    }
    let dir = ov_engine::ids::safe_part(&inv.session_id);
    if std::env::var_os("OVHOOK_NO_DETACH").is_some_and(|v| v == "1") {
        // Spilled: the lock is held, and an inline worker would wait for it past the budget.
        let Some(store) = store else {
            return;
        };
        drop(store);
        let _ = crate::worker::run_session(&inv.root, &dir, ov_engine::event::WorkerReason::Stop);
        return;
    }
    crate::detach::spawn_self(&["worker", "--session", &dir]);
}
