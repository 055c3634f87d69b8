//! Qwen Code's hook payloads, exactly as Qwen Code sends them (snake_case, Claude Code's
//! shape; see `docs/agents.md`).
//!
//! | field | events | feeds |
//! |---|---|---|
//! | `session_id` | all | [`HookInput::session_id`] |
//! | `prompt_id` (`<session_id>########<n>`) | UserPromptSubmit, PreToolUse, PostToolUse, Stop | [`HookInput::turn_id`]: one turn's hooks share it |
//! | `cwd`, `transcript_path` | all | [`HookInput::cwd`], [`HookInput::transcript_path`] |
//! | `prompt` | UserPromptSubmit; `""` on the second UserPromptSubmit Qwen fires after a turn's tool calls, which is then no prompt at all | [`HookInput::prompt`] |
//! | `last_assistant_message` | Stop: the whole final answer | [`HookInput::response_text`] |
//! | `source` | SessionStart (`startup`, `resume`, …) | [`HookInput::source`] |
//! | `tool_response` (`{llmContent, returnDisplay}`: `llmContent` is kept), `tool_use_id` | PostToolUse | [`HookInput::tool_output`], [`HookInput::tool_call_id`] |
//! | `tool_name`, `tool_input` | PreToolUse, PostToolUse: `read_file` → `Read`, `glob` → `Glob`, `grep_search` → `Grep`, `run_shell_command` → `Bash` (the guard's names); others as sent | [`HookInput::tool_name`], [`HookInput::tool_input`] |
//!
//! Nothing here fails: a bad payload gives a [`HookInput`] with `malformed` set and
//! whatever fields could be read.

use crate::harness::input::{parse_fields, PayloadFields};
use crate::harness::HookInput;

/// Keys whose number value is used as text.
const ID_KEYS: &[&str] = &["session_id", "prompt_id"];

/// Qwen's tool names, and the names the guard knows them by.
const TOOLS: &[(&str, &str)] = &[
    ("read_file", "Read"),
    ("glob", "Glob"),
    ("grep_search", "Grep"),
    ("run_shell_command", "Bash"),
];

/// Where this agent's payload keeps each field: Claude Code's shape, with its own tool names.
const FIELDS: PayloadFields = PayloadFields {
    tools: TOOLS,
    ..PayloadFields::claude_shape(ID_KEYS, "prompt_id")
};

/// Parses a raw payload. Never fails.
pub fn parse(raw: &[u8], truncated: bool) -> HookInput {
    let mut input = parse_fields(raw, truncated, &FIELDS);
    // An empty prompt (after tool calls) reads as none: no recall, nothing captured.
    input.prompt = input.prompt.filter(|p| !p.trim().is_empty());
    // PostToolUse's `tool_response` is `{llmContent, returnDisplay}`: what the model saw is
    // the output.
    if let Some(Some(text)) = input
        .tool_output
        .as_ref()
        .map(|o| o.get("llmContent").and_then(serde_json::Value::as_str))
    {
        input.tool_output = Some(serde_json::Value::String(text.to_owned()));
    }
    input
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    /// Payloads recorded from Qwen Code 0.24.4 (`scripts/record-agent.sh qwen`).
    const RECORDED: &str = include_str!("../../../../testdata/agents/qwen/hooks.jsonl");

    fn recorded(event: &str) -> Vec<HookInput> {
        crate::harness::input::recorded_payloads(RECORDED, event, parse)
    }

    #[test]
    fn post_tool_use_gives_the_call_with_what_the_model_saw() {
        let post = recorded("PostToolUse");
        let call = post.first().expect("a recorded PostToolUse");
        assert_eq!(call.tool_name.as_deref(), Some("Read"));
        assert_eq!(
            call.tool_call_id.as_deref(),
            Some("toolu_1796271813069_p2l8y4e1b")
        );
        assert!(call.turn_id.is_some());
        assert_eq!(
            call.tool_output.as_ref().and_then(|o| o.as_str()),
            Some("# Notes\nNOTE-CONTENT-42: water the plants.\n")
        );
    }

    #[test]
    fn recorded_turns_pair_by_prompt_id_and_the_empty_prompt_is_none() {
        let ups = recorded("UserPromptSubmit");
        let stops = recorded("Stop");
        assert!(
            ups.len() >= 7 && stops.len() >= 5,
            "{} {}",
            ups.len(),
            stops.len()
        );
        for i in ups.iter().chain(&stops) {
            assert!(i.malformed.is_none(), "{i:?}");
            let sid = i.session_id.as_deref().unwrap_or("-");
            let tid = i.turn_id.as_deref().unwrap_or("");
            assert!(tid.starts_with(&format!("{sid}########")), "{tid}");
        }
        // After tool calls Qwen fires UserPromptSubmit again with "": no prompt.
        let empty: Vec<_> = ups.iter().filter(|i| i.prompt.is_none()).collect();
        assert_eq!(empty.len(), 3);
        assert!(empty.iter().all(|e| ups
            .iter()
            .any(|u| u.prompt.is_some() && u.turn_id == e.turn_id)));
        // "yes" twice: two turns.
        let yes: Vec<_> = ups
            .iter()
            .filter(|i| i.prompt.as_deref() == Some("yes"))
            .collect();
        assert_eq!(yes.len(), 2);
        assert_ne!(yes[0].turn_id, yes[1].turn_id);
        // Every Stop's turn had a prompt, and the answer is whole.
        assert!(stops.iter().all(|s| ups
            .iter()
            .any(|u| u.prompt.is_some() && u.turn_id == s.turn_id)));
        let first = stops
            .first()
            .and_then(|s| s.response_text.as_deref())
            .unwrap_or("");
        assert!(
            first.starts_with("NOTES-ANSWER part one. Part two."),
            "{first}"
        );
    }

    #[test]
    fn tool_names_become_the_guards() {
        let pre = recorded("PreToolUse");
        let names: Vec<_> = pre.iter().filter_map(|i| i.tool_name.as_deref()).collect();
        assert_eq!(names, ["Read", "Glob"]);
        let glob = pre.get(1).and_then(|i| i.tool_input.as_ref());
        assert_eq!(
            glob.and_then(|v| v["pattern"].as_str()),
            Some("viking://user/memories/*.md")
        );
        let i = parse(br#"{"tool_name":"web_fetch"}"#, false);
        assert_eq!(i.tool_name.as_deref(), Some("web_fetch"));
    }
}
