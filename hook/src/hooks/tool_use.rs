//! PreToolUse: deny `viking://` paths for Read/Glob/Grep, journaled.
//!
//! The hot path: no configuration, no HTTP client, no fold; one buffered append.

use ov_engine::event::{Event, HookKind};
use ov_journal::Durability;

use super::{journal, pre_tool_use, Invocation};

/// ZCode's default output cap; a deny reason is far below it.
const DEFAULT_MAX_OUTPUT: usize = 32768;

/// Handles a PreToolUse; returns the deny line, if any.
pub fn handle(inv: &Invocation) -> Option<String> {
    let denial = pre_tool_use::deny(
        inv.input.tool_name.as_deref(),
        inv.input.tool_input.as_ref(),
    );
    if let Some(store) = inv.open_store() {
        let mut received = inv.received(HookKind::PreToolUse, false);
        received.denied_uri = denial.as_ref().map(|d| d.uri.clone());
        journal(&store, Event::HookReceived(received), Durability::Buffered);
    }
    inv.harness.deny_output(&denial?.reason, DEFAULT_MAX_OUTPUT)
}
