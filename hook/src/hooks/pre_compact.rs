//! PreCompact: the agent is about to compact (summarise) its context. The hook journals it,
//! then sends what the session holds and commits it, in this process, before it returns: the
//! server has every complete turn of the context being compacted, and extracts its memories
//! from them, before the agent replaces them with a summary. Everything it waits for (the
//! journal's lock, the worker lock, each request) ends inside the hook's budget
//! ([`super::budget`]); what does not fit stays journaled for the next worker or drain. While
//! the back-off every session's hooks share is on for the server ([`ov_engine::backoff`]), it
//! does not try, and a run that finds the server unreachable opens that back-off
//! ([`crate::worker::run_session_until`]): the agent does not wait on a server known to be down. The turn in progress
//! stays open (it goes on after the compaction). Prints nothing.

use ov_engine::event::{HookKind, WorkerReason};

use super::{load_config, Invocation, Journaled};

/// Handles a PreCompact.
pub fn handle(inv: &Invocation) {
    let cfg = load_config(&inv.cwd);
    let on = inv.capture(&cfg).is_on();
    // The payload holds no conversation: the receipt (with its trigger) is all there is.
    let journaled = inv.open_journaling_all(inv.received_events(HookKind::PreCompact, None));
    if !on || matches!(journaled, Journaled::Lost) {
        return;
    }
    drop(journaled);
    let dir = ov_engine::ids::safe_part(&inv.session_id);
    let deadline = inv.budget.network_deadline();
    match crate::worker::run_session_until(&inv.root, &dir, WorkerReason::PreCompact, deadline) {
        Ok(true) => log::info!("pre-compact {}: sent and committed", inv.session_id),
        Ok(false) => log::info!(
            "pre-compact {}: nothing reached the server: left for a later worker",
            inv.session_id
        ),
        Err(e) => log::warn!("pre-compact {}: {e:#}", inv.session_id),
    }
}
