//! PostToolUse (Codex, Qwen Code; installed only while `capture.tools` is on): journal the
//! tool call for the turn's answer, print nothing.
//!
//! The call (name, input, output, id) enters the engine through its one rule,
//! [`ov_engine::tool::ToolCall::capture`] (every string through the privacy rule, then
//! bounded), and is journaled as [`Event::ToolCalls`] with the counts of what the rule removed;
//! the worker sends it with the turn's assistant message. Nothing is journaled when
//! `capture.tools` is off, when the turn is not captured (paused, capture off, bypassed: the
//! Stop refuses the turn), or when the payload names no turn or no tool. Buffered, not synced:
//! one tool call is not worth an fsync on the agent's path (a power cut may lose it, never
//! the turn).

use ov_engine::event::Event;
use ov_engine::privacy::{Policy, Redactions};
use ov_engine::tool::{RawToolCall, ToolCall};
use ov_journal::Durability;

use super::{load_config, Invocation};

/// Handles a PostToolUse.
pub fn handle(inv: &Invocation) {
    let cfg = load_config(&inv.cwd);
    if !cfg.capture.tools || !inv.capture(&cfg).is_on() {
        return;
    }
    let Some(events) = events(inv, &Policy::from_config(&cfg)) else {
        return;
    };
    inv.open_journaling_within(events, inv.budget.lock_wait(), Durability::Buffered);
}

/// The events of this call: [`Event::ToolCalls`] and, when the rule removed something,
/// [`Event::Redacted`]. `None` without a turn or a tool name.
fn events(inv: &Invocation, policy: &Policy) -> Option<Vec<Event>> {
    let i = &inv.input;
    let turn_id = i.turn_id.clone()?;
    let mut counts = Redactions::default();
    let call = ToolCall::capture(
        policy,
        RawToolCall {
            id: i.tool_call_id.as_deref(),
            name: i.tool_name.as_deref()?,
            input: i.tool_input.as_ref(),
            output: i.tool_output.as_ref(),
            failed: false,
        },
        &mut counts,
    )?;
    let mut events = vec![Event::ToolCalls {
        turn_id: turn_id.clone(),
        origin: "hook".into(),
        calls: vec![call],
    }];
    if !counts.is_empty() {
        events.push(Event::Redacted {
            turn_id: Some(turn_id),
            origin: "tool".into(),
            counts,
        });
    }
    Some(events)
}
