//! How tool calls fold: the calls of a turn wait for its assistant message, move onto it when
//! it is planned as a new message still to be sent, and go once it is settled.

use super::delivered::key_identity;
use super::State;
use crate::turn::{DedupKey, Role};

impl State {
    /// Tool calls of a turn wait only while its answer is neither planned nor known delivered
    /// (only planning and [`crate::event::Event::ServerHolds`] change that).
    pub(super) fn drop_answered_tools(&mut self) {
        if !self.tool_calls.is_empty() {
            let (messages, delivered) = (&self.messages, &self.delivered);
            self.tool_calls.retain(|(turn, _)| {
                let answer = DedupKey::for_turn(turn, Role::Assistant);
                !messages.contains_key(&answer) && !delivered.contains(key_identity(&answer))
            });
        }
    }

    /// Whether tool calls of turn `turn_id` are still taken: its answer is neither planned nor
    /// delivered, and the session is not forgotten.
    pub fn takes_tool_calls(&self, turn_id: &str) -> bool {
        let answer = DedupKey::for_turn(turn_id, Role::Assistant);
        !(self.messages.contains_key(&answer)
            || self.delivered.contains(key_identity(&answer))
            || self.forgotten_at_ms.is_some())
    }

    /// The tool calls kept for turn `turn_id` (not planned yet).
    pub fn kept_tool_calls(&self, turn_id: &str) -> &[crate::tool::ToolCall] {
        self.tool_calls
            .iter()
            .find(|(t, _)| t == turn_id)
            .map_or(&[], |(_, c)| c.as_slice())
    }

    /// Tool calls of `turn_id` wait for its assistant message; ignored once that message was
    /// planned (or delivered): they go with it or not at all.
    pub(super) fn add_tool_calls(&mut self, turn_id: &str, calls: &[crate::tool::ToolCall]) {
        if !self.takes_tool_calls(turn_id) {
            return;
        }
        match self.tool_calls.iter_mut().find(|(t, _)| t == turn_id) {
            Some((_, kept)) => crate::tool::add_calls(kept, calls),
            None => {
                let mut kept = Vec::new();
                crate::tool::add_calls(&mut kept, calls);
                self.tool_calls.push((turn_id.to_owned(), kept));
                if self.tool_calls.len() > super::KEPT_TOOL_TURNS {
                    self.tool_calls.remove(0);
                }
            }
        }
    }

    /// The assistant message `key` of turn `turn_id` was planned: the turn's tool calls move
    /// onto it when it is a new message still to be sent.
    pub(super) fn plan_tools(&mut self, turn_id: &str, key: &DedupKey, new: bool) {
        let Some(pos) = self.tool_calls.iter().position(|(t, _)| t == turn_id) else {
            return;
        };
        let (_, calls) = self.tool_calls.remove(pos);
        let sendable = self
            .messages
            .get(key)
            .is_some_and(|r| !r.status.is_settled() && r.content.is_some());
        if new && sendable && !calls.is_empty() {
            self.planned_tools.insert(key.clone(), calls);
        }
    }
}
