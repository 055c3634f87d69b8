//! Claude Code's hook payloads, exactly as Claude Code sends them (snake_case).
//!
//! | field | events | feeds |
//! |---|---|---|
//! | `session_id` | all | [`HookInput::session_id`] |
//! | `prompt_id` | UserPromptSubmit, PreToolUse, Stop, SessionEnd, SessionStart `compact` | [`HookInput::turn_id`]: one turn's hooks share it, and it is the transcript's `promptId` |
//! | `cwd`, `transcript_path` | all | [`HookInput::cwd`], [`HookInput::transcript_path`] |
//! | `prompt` | UserPromptSubmit | [`HookInput::prompt`] |
//! | `last_assistant_message` | Stop | [`HookInput::response_text`]: only the last text block of the answer; the transcript's whole answer wins over it |
//! | `source` | SessionStart (`startup`, `resume`, `clear`, `compact`) | [`HookInput::source`] |
//! | `tool_name`, `tool_input` | PreToolUse | [`HookInput::tool_name`], [`HookInput::tool_input`] |
//!
//! Nothing here fails: a payload that is empty, not JSON, not UTF-8, too large or of
//! the wrong shape gives a [`HookInput`] with `malformed` set and whatever fields
//! could be read.

use crate::harness::input::{parse_fields, PayloadFields};
use crate::harness::HookInput;

/// Keys whose number value is used as text.
const ID_KEYS: &[&str] = &["session_id", "prompt_id"];

/// Where this agent's payload keeps each field: Claude Code's shape.
const FIELDS: PayloadFields = PayloadFields::claude_shape(ID_KEYS, "prompt_id");

/// Parses a raw payload. Never fails.
pub fn parse(raw: &[u8], truncated: bool) -> HookInput {
    parse_fields(raw, truncated, &FIELDS)
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    /// Payloads recorded from Claude Code 2.1.332 (`testdata/agents/claude-code/recorded`).
    const RECORDED: &str =
        include_str!("../../../../testdata/agents/claude-code/recorded/hooks.jsonl");

    fn recorded(event: &str) -> Vec<HookInput> {
        RECORDED
            .lines()
            .filter(|l| l.contains(&format!("\"hook_event_name\":\"{event}\"")))
            .map(|l| parse(l.as_bytes(), false))
            .collect()
    }

    #[test]
    fn recorded_payloads_give_turn_ids_prompts_and_sources() {
        let ups = recorded("UserPromptSubmit");
        let stops = recorded("Stop");
        assert!(ups.len() >= 5 && stops.len() >= 4);
        for i in ups.iter().chain(&stops) {
            assert!(i.malformed.is_none(), "{i:?}");
            assert!(i.session_id.is_some() && i.transcript_path.is_some());
            assert!(i.turn_id.as_deref().is_some_and(|t| t.len() == 36), "{i:?}");
        }
        // "yes" twice: two turns, two prompt ids.
        let yes: Vec<_> = ups
            .iter()
            .filter(|i| i.prompt.as_deref() == Some("yes"))
            .collect();
        assert_eq!(yes.len(), 2);
        assert_ne!(yes[0].turn_id, yes[1].turn_id);
        // Stop and UserPromptSubmit of one turn share it.
        assert!(stops
            .iter()
            .all(|s| ups.iter().any(|u| u.turn_id == s.turn_id)));
        assert!(stops[0]
            .response_text
            .as_deref()
            .is_some_and(|t| t.starts_with("Block two.")));
        let sources: Vec<_> = recorded("SessionStart")
            .into_iter()
            .filter_map(|i| i.source)
            .collect();
        assert!(sources.contains(&"startup".to_string()));
        assert!(sources.contains(&"resume".to_string()));
        assert!(sources.contains(&"compact".to_string()));
        let pre = recorded("PreToolUse");
        assert_eq!(pre[0].tool_name.as_deref(), Some("Read"));
        assert!(pre[0].tool_input.is_some());
        assert!(recorded("SessionEnd").iter().all(|i| i.malformed.is_none()));
    }

    #[test]
    fn bad_payloads_are_described_not_fatal() {
        for (raw, what) in [
            (&b""[..], "empty"),
            (b"{not json", "not JSON"),
            (b"[1]", "not a JSON object"),
        ] {
            let i = parse(raw, false);
            assert!(
                i.malformed.as_deref().unwrap_or("").contains(what),
                "{what}"
            );
        }
        let i = parse(
            br#"{"session_id":"s","prompt_id":7,"prompt":{"x":1}}"#,
            false,
        );
        assert_eq!(i.turn_id.as_deref(), Some("7"));
        assert!(i.prompt.is_none());
        assert!(i
            .malformed
            .unwrap_or_default()
            .contains("prompt: expected a string"));
    }
}
