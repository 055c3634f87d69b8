//! SessionEnd: journal it, start the detached worker that closes the session's
//! open turns, sends them and commits the session, return. Prints nothing.

use ov_engine::event::{Event, HookKind, WorkerReason};

use super::{load_config, Invocation, Journaled};

/// Handles a SessionEnd.
pub fn handle(inv: &Invocation) {
    let cfg = load_config(&inv.cwd);
    let active = cfg.memory_enabled && !cfg.bypass.matches(&inv.session_id, &inv.cwd);
    let received = inv.received(HookKind::SessionEnd, active);
    let store = match inv.open_journaling(Event::HookReceived(received)) {
        Journaled::Store(store) => Some(store),
        Journaled::Spilled => None,
        Journaled::Lost => return,
    };
    if !active {
        return;
    }
    let dir = ov_engine::ids::safe_part(&inv.session_id);
    if std::env::var_os("OVHOOK_NO_DETACH").is_some_and(|v| v == "1") {
        // Spilled: the lock is held, and an inline worker would wait for it past the budget.
        let Some(store) = store else {
            return;
        };
        drop(store);
        let _ = crate::worker::run_session(&inv.root, &dir, WorkerReason::SessionEnd);
        return;
    }
    crate::detach::spawn_self(&["worker", "--session", &dir, "--reason", "session-end"]);
}
