//! SessionEnd: journal it, start the detached worker that closes the session's
//! open turns, sends them and commits the session, return. Prints nothing.

use ov_engine::event::{Event, HookKind, WorkerReason};
use ov_journal::Durability;

use super::{journal, load_config, Invocation};

/// Handles a SessionEnd.
pub fn handle(inv: &Invocation) {
    let cfg = load_config(&inv.cwd);
    let Some(store) = inv.open_store() else {
        return;
    };
    let active = cfg.memory_enabled && !cfg.bypass.matches(&inv.session_id, &inv.cwd);
    let received = inv.received(HookKind::SessionEnd, active);
    if !journal(&store, Event::HookReceived(received), Durability::Sync) || !active {
        return;
    }
    let dir = ov_engine::ids::safe_part(&inv.session_id);
    if std::env::var_os("OVHOOK_NO_DETACH").is_some_and(|v| v == "1") {
        drop(store);
        let _ = crate::worker::run_session(&inv.root, &dir, WorkerReason::SessionEnd);
        return;
    }
    crate::detach::spawn_self(&["worker", "--session", &dir, "--reason", "session-end"]);
}
