//! Gemini CLI's hook payloads, exactly as Gemini CLI sends them (snake_case; see
//! `docs/agents.md`).
//!
//! | field | events | feeds |
//! |---|---|---|
//! | `session_id` (the same across `--resume`) | all | [`HookInput::session_id`] |
//! | — | no payload names a turn | [`HookInput::turn_id`] stays `None` here: turns come from the session file, keyed by the user message's `id` |
//! | `cwd`, `transcript_path` | all | [`HookInput::cwd`], [`HookInput::transcript_path`] |
//! | `prompt` | BeforeAgent, AfterAgent: the user's text, SessionStart context prepended as `<hook_context>…</hook_context>` (removed where prompts are cleaned) | [`HookInput::prompt`] |
//! | `prompt_response` | AfterAgent: every model call's text joined, streamed chunks repeated: **not** the answer, never read | — |
//! | `source` | SessionStart (`startup`, `resume`) | [`HookInput::source`] |
//! | `tool_name`, `tool_input` | BeforeTool: `read_file` → `Read`, `glob` → `Glob`, `grep_search` → `Grep`, `run_shell_command` → `Bash` (the guard's names); others as sent | [`HookInput::tool_name`], [`HookInput::tool_input`] |
//! | `hook_event_name` | all | [`after_prompt_written`] |
//!
//! Nothing here fails: a bad payload gives a [`HookInput`] with `malformed` set and
//! whatever fields could be read.

use crate::harness::input::{parse_fields, PayloadFields};
use crate::harness::HookInput;

/// Keys whose number value is used as text.
const ID_KEYS: &[&str] = &["session_id"];

/// Gemini's tool names, and the names the guard knows them by.
const TOOLS: &[(&str, &str)] = &[
    ("read_file", "Read"),
    ("glob", "Glob"),
    ("grep_search", "Grep"),
    ("run_shell_command", "Bash"),
];

/// Where this agent's payload keeps each field: Claude Code's shape, without a turn id or
/// an answer.
const FIELDS: PayloadFields = PayloadFields {
    turn_id: None,
    response_text: None,
    tools: TOOLS,
    ..PayloadFields::claude_shape(ID_KEYS, "")
};

/// Parses a raw payload. Never fails.
pub fn parse(raw: &[u8], truncated: bool) -> HookInput {
    parse_fields(raw, truncated, &FIELDS)
}

/// Whether the payload is of an event that fires after the turn's prompt is in the session
/// file (AfterAgent, BeforeTool): the file's last prompt is then this turn's. BeforeAgent
/// fires before the prompt is written. Gemini CLI writes compact JSON, so the key and value
/// are matched as bytes, without a second parse of the payload.
pub fn after_prompt_written(raw: &[u8]) -> bool {
    const KEYS: [&[u8]; 2] = [
        b"\"hook_event_name\":\"AfterAgent\"",
        b"\"hook_event_name\":\"BeforeTool\"",
    ];
    KEYS.iter().any(|k| crate::harness::transcript_tail::contains(raw, k))
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    /// Payloads recorded from Gemini CLI 0.61.0 (`testdata/agents/gemini/hooks.jsonl`).
    const RECORDED: &str = include_str!("../../../../testdata/agents/gemini/hooks.jsonl");

    fn recorded(event: &str) -> Vec<HookInput> {
        crate::harness::input::recorded_payloads(RECORDED, event, parse)
    }

    #[test]
    fn recorded_payloads_have_sessions_prompts_and_no_turns() {
        let before = recorded("BeforeAgent");
        let after = recorded("AfterAgent");
        // The last turn's model calls all failed: no AfterAgent.
        assert_eq!((before.len(), after.len()), (5, 4));
        for i in before.iter().chain(&after) {
            assert!(i.malformed.is_none(), "{i:?}");
            assert!(i.session_id.is_some() && i.turn_id.is_none());
            // prompt_response is not the answer and is never read.
            assert!(i.response_text.is_none());
            assert!(i
                .transcript_path
                .as_deref()
                .is_some_and(|p| p.contains("/.gemini/tmp/work/chats/session-")));
        }
        let words: Vec<_> = before
            .iter()
            .filter_map(|i| i.prompt.as_deref().and_then(ov_engine::text::user_words))
            .collect();
        assert_eq!(
            words,
            [
                "Please read my notes",
                "yes",
                "yes",
                "Open my viking memory",
                "This call will boom"
            ]
        );
        let sources: Vec<_> = recorded("SessionStart")
            .into_iter()
            .filter_map(|i| i.source)
            .collect();
        assert_eq!(sources, ["startup", "resume", "resume", "resume", "resume"]);
    }

    #[test]
    fn read_file_reaches_the_guard_as_read() {
        let pre = recorded("BeforeTool");
        assert!(pre.iter().all(|i| i.tool_name.as_deref() == Some("Read")));
        let viking = pre.last().and_then(|i| i.tool_input.as_ref());
        assert_eq!(
            viking.and_then(|v| v["file_path"].as_str()),
            Some("viking://user/memories/profile.md")
        );
    }

    #[test]
    fn which_events_follow_the_prompt_record() {
        let flags: Vec<(String, bool)> = RECORDED
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .map(|v| {
                let raw = v["payload"].to_string();
                (
                    v["event"].as_str().unwrap_or("").to_owned(),
                    after_prompt_written(raw.as_bytes()),
                )
            })
            .collect();
        assert!(flags
            .iter()
            .all(|(e, f)| *f == matches!(e.as_str(), "AfterAgent" | "BeforeTool")));
    }
}
