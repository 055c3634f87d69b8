//! The PreToolUse handler (the guard): deny `viking://` paths for local file tools, journaled.
//! What counts as such a path is [`detect`].
//!
//! The hot path: no HTTP client, no fold; one buffered append. Only a denial loads our
//! configuration, for the output cap every hook honours ([`Invocation::output_cap`]: ours,
//! `hooks.max_output_bytes`, lowered to the harness's own): the reason is cut to fit, and a
//! denial that cannot fit at all is not printed (the harness would drop it anyway).

use std::path::Path;

use ov_engine::event::{Event, HookKind};
use ov_journal::Durability;

mod detect;

use super::consent::Capture;
use super::Invocation;

/// The longest the guard waits for the journal's lock: the agent's tool call waits on it, and
/// a denial does not need the journal.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// Handles a PreToolUse; returns the deny line, if any.
pub fn handle(inv: &Invocation) -> Option<String> {
    let denial = detect::deny(
        inv.input.tool_name.as_deref(),
        inv.input.tool_input.as_ref(),
    );
    // Never the tool's input (a Write's holds a whole file): only its name and the denial.
    let mut received = inv.received(HookKind::PreToolUse);
    received.denied_uri = denial.as_ref().map(|d| d.uri.clone());
    let mut events = vec![Event::HookReceived(received)];
    // One `stat` when nothing is paused; the project is looked up only when something is.
    if let Some(scope) = inv.paused(|| ov_engine::config::project_slot(Path::new(&inv.cwd))) {
        events.extend(inv.refusal(&Capture::Paused(scope)));
    }
    // A held lock sends the events to a spill file the next writer ingests.
    inv.open_journaling_within(events, LOCK_WAIT, Durability::Buffered);
    let denial = denial?;
    let cap = inv.output_cap(&super::load_config(&inv.cwd));
    inv.harness.deny_output(&denial.reason, cap.bytes)
}
