//! Stop: journal the turn's end durably, start the detached worker, return.
//! Prints nothing (ZCode would render Stop context as an assistant message).

use ov_engine::event::{Event, HookKind};
use ov_journal::Durability;

use super::{journal, load_config, Invocation};

/// Handles a Stop.
pub fn handle(inv: &Invocation) {
    let cfg = load_config(&inv.cwd);
    let Some(store) = inv.open_store() else {
        return;
    };
    let capture = cfg.memory_enabled && cfg.capture.enabled && !inv.passes_through(&cfg);
    let received = inv.received(HookKind::Stop, capture);
    if !journal(&store, Event::HookReceived(received), Durability::Sync) || !capture {
        return;
    }
    let dir = ov_engine::ids::safe_part(&inv.session_id);
    if std::env::var_os("OVHOOK_NO_DETACH").is_some_and(|v| v == "1") {
        drop(store);
        let _ = crate::worker::run_session(&inv.root, &dir, ov_engine::event::WorkerReason::Stop);
        return;
    }
    crate::detach::spawn_self(&["worker", "--session", &dir]);
}
