//! Codex CLI's hook payloads, exactly as Codex sends them (snake_case, Claude Code's
//! shape; see `docs/agents.md`).
//!
//! | field | events | feeds |
//! |---|---|---|
//! | `session_id` (the thread id) | all | [`HookInput::session_id`] |
//! | `turn_id` | UserPromptSubmit, PreToolUse, PostToolUse, Stop | [`HookInput::turn_id`]: one turn's hooks share it |
//! | `cwd`, `transcript_path` | all | [`HookInput::cwd`], [`HookInput::transcript_path`] |
//! | `prompt` | UserPromptSubmit | [`HookInput::prompt`] |
//! | `last_assistant_message` | Stop: the final answer message, all its parts | [`HookInput::response_text`] |
//! | `source` | SessionStart (`startup`, `resume`, …) | [`HookInput::source`] |
//! | `tool_response` (the output text), `tool_use_id` | PostToolUse | [`HookInput::tool_output`], [`HookInput::tool_call_id`] |
//! | `tool_name`, `tool_input` | PreToolUse, PostToolUse: shell commands arrive as `Bash` with `{"command": …}`; MCP tools as `mcp__<server>__<tool>` | [`HookInput::tool_name`], [`HookInput::tool_input`] |
//!
//! Nothing here fails: a bad payload gives a [`HookInput`] with `malformed` set and
//! whatever fields could be read.

use crate::harness::input::{parse_fields, PayloadFields};
use crate::harness::HookInput;

/// Keys whose number value is used as text.
const ID_KEYS: &[&str] = &["session_id", "turn_id"];

/// Where this agent's payload keeps each field: Claude Code's shape.
const FIELDS: PayloadFields = PayloadFields::claude_shape(ID_KEYS, "turn_id");

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

    /// Payloads recorded from Codex CLI 0.169.0 (`scripts/record-agent.sh codex`).
    const RECORDED: &str = include_str!("../../../../testdata/agents/codex/hooks.jsonl");

    fn recorded(event: &str) -> Vec<HookInput> {
        crate::harness::input::recorded_payloads(RECORDED, event, parse)
    }

    #[test]
    fn recorded_turns_pair_by_turn_id() {
        let ups = recorded("UserPromptSubmit");
        let stops = recorded("Stop");
        assert_eq!(
            (ups.len(), stops.len()),
            (5, 4),
            "the failed turn has no Stop"
        );
        for i in ups.iter().chain(&stops) {
            assert!(i.malformed.is_none(), "{i:?}");
            assert!(i.session_id.is_some() && i.transcript_path.is_some());
            assert!(i.turn_id.as_deref().is_some_and(|t| t.len() == 36), "{i:?}");
        }
        let yes: Vec<_> = ups
            .iter()
            .filter(|i| i.prompt.as_deref() == Some("yes"))
            .collect();
        assert_eq!(yes.len(), 2);
        assert_ne!(yes[0].turn_id, yes[1].turn_id);
        assert!(stops
            .iter()
            .all(|s| ups.iter().any(|u| u.turn_id == s.turn_id)));
        let plain = stops.get(1).and_then(|s| s.response_text.as_deref());
        assert_eq!(plain, Some("PLAIN-ANSWER first part. Second part."));
        let sources: Vec<_> = recorded("SessionStart")
            .into_iter()
            .filter_map(|i| i.source)
            .collect();
        assert!(
            sources.contains(&"startup".to_string()) && sources.contains(&"resume".to_string())
        );
    }

    #[test]
    fn post_tool_use_gives_the_call_and_its_output() {
        let post = recorded("PostToolUse");
        let call = post.first().expect("a recorded PostToolUse");
        assert_eq!(call.tool_name.as_deref(), Some("Bash"));
        assert_eq!(
            call.tool_call_id.as_deref(),
            Some("call_f786c98c888c4e689fea")
        );
        assert_eq!(
            call.turn_id.as_deref(),
            Some("01a23a27-0a29-7bd0-9ecd-68ea7eec9a11")
        );
        assert_eq!(
            call.tool_output.as_ref().and_then(|o| o.as_str()),
            Some("# Notes\nNOTE-CONTENT-42: water the plants.\n")
        );
    }

    #[test]
    fn shell_commands_reach_the_guard_as_bash() {
        let pre = recorded("PreToolUse");
        assert!(pre.iter().all(|i| i.tool_name.as_deref() == Some("Bash")));
        let viking = pre.last().and_then(|i| i.tool_input.as_ref());
        assert_eq!(
            viking.and_then(|v| v["command"].as_str()),
            Some("cat viking://user/memories/profile.md")
        );
    }
}
