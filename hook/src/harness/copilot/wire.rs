//! GitHub Copilot CLI's hook payloads for its camelCase events, exactly as Copilot sends
//! them (see `docs/agents.md`).
//!
//! | field | events | feeds |
//! |---|---|---|
//! | `sessionId` | all | [`HookInput::session_id`] |
//! | — | no payload names a turn | [`HookInput::turn_id`] stays `None`: turns come from the transcript, keyed by the user message's id |
//! | `cwd` | all | [`HookInput::cwd`] |
//! | `transcriptPath` | agentStop | [`HookInput::transcript_path`] |
//! | `prompt` | userPromptSubmitted | [`HookInput::prompt`] |
//! | — | no payload of the main agent holds the answer | [`HookInput::response_text`] stays `None`: the transcript has it |
//! | `response` | subagentStop: the subagent's last message | [`HookInput::response_text`] |
//! | `agentId`, else `agentName` | subagentStop (the session is the parent's) | [`HookInput::agent_id`] |
//! | `trigger` | preCompact (`manual`, `auto`) | [`HookInput::trigger`] |
//! | `source` | sessionStart (`new`, `resume`, `startup`) | [`HookInput::source`] |
//! | `toolName`, `toolArgs` | preToolUse: `view` → `Read`, `glob` → `Glob`, `grep` → `Grep`, `bash` → `Bash` (the guard's names); others as sent | [`HookInput::tool_name`], [`HookInput::tool_input`] |
//!
//! Nothing here fails: a bad payload gives a [`HookInput`] with `malformed` set and
//! whatever fields could be read.

use crate::harness::input::{parse_fields, PayloadFields};
use crate::harness::HookInput;

/// Keys whose number value is used as text.
const ID_KEYS: &[&str] = &["sessionId"];

/// Copilot's tool names, and the names the guard knows them by.
const TOOLS: &[(&str, &str)] = &[
    ("view", "Read"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("bash", "Bash"),
];

/// Where this agent's payload keeps each field.
const FIELDS: PayloadFields = PayloadFields {
    id_keys: ID_KEYS,
    session_id: "sessionId",
    turn_id: None,
    cwd: "cwd",
    transcript_path: "transcriptPath",
    prompt: "prompt",
    response_text: Some("response"),
    source: "source",
    tool_name: "toolName",
    tool_input: "toolArgs",
    tool_output: None,
    tool_call_id: None,
    tools: TOOLS,
    agent_id: &["agentId", "agentName"],
    agent_transcript_path: None,
    parent_session_id: None,
    trigger: Some("trigger"),
};

/// Parses a raw payload. Never fails.
pub fn parse(raw: &[u8], truncated: bool) -> HookInput {
    parse_fields(raw, truncated, &FIELDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Payloads recorded from Copilot CLI 1.0.102 (`scripts/record-agent.sh copilot`).
    const RECORDED: &str = include_str!("../../../../testdata/agents/copilot/hooks.jsonl");

    fn recorded(event: &str) -> Vec<HookInput> {
        crate::harness::input::recorded_payloads(RECORDED, event, parse)
    }

    #[test]
    fn recorded_payloads_have_sessions_prompts_and_no_turns() {
        let ups = recorded("userPromptSubmitted");
        let stops = recorded("agentStop");
        assert_eq!(
            (ups.len(), stops.len()),
            (5, 4),
            "the failed turn has no agentStop"
        );
        for i in ups.iter().chain(&stops) {
            assert!(i.malformed.is_none(), "{i:?}");
            assert!(i.session_id.is_some() && i.turn_id.is_none() && i.response_text.is_none());
        }
        assert!(stops.iter().all(|s| s
            .transcript_path
            .as_deref()
            .is_some_and(|p| p.ends_with("/events.jsonl"))));
        let prompts: Vec<_> = ups.iter().filter_map(|i| i.prompt.as_deref()).collect();
        assert_eq!(
            prompts,
            [
                "Please read my notes",
                "yes",
                "yes",
                "Open my viking memory",
                "This call will boom"
            ]
        );
        let sources: Vec<_> = recorded("sessionStart")
            .into_iter()
            .filter_map(|i| i.source)
            .collect();
        assert!(sources.contains(&"new".to_string()) && sources.contains(&"resume".to_string()));
    }

    #[test]
    fn view_reaches_the_guard_as_read() {
        let pre = recorded("preToolUse");
        assert!(pre.iter().all(|i| i.tool_name.as_deref() == Some("Read")));
        let viking = pre.last().and_then(|i| i.tool_input.as_ref());
        assert_eq!(
            viking.and_then(|v| v["path"].as_str()),
            Some("viking://user/memories/profile.md")
        );
    }

    /// `subagentStop` and `preCompact` as Copilot CLI 1.0.102's SDK types describe them
    /// (`SubagentStopHookInput`: the parent's `sessionId`, `agentName`, `agentId` when the
    /// runtime has one, `response`; the pre-compaction input: `trigger`, `customInstructions`).
    #[test]
    fn subagent_stop_names_the_agent_and_its_answer_and_pre_compact_its_trigger() {
        let i = parse(
            br#"{"sessionId":"s1","timestamp":1760000000000,"workingDirectory":"/w","transcriptPath":"/t","agentName":"explore","agentType":"explore","agentId":"ag-7","stopReason":"end_turn","response":"Found it in src/lib.rs."}"#,
            false,
        );
        assert!(i.malformed.is_none(), "{i:?}");
        assert_eq!(i.session_id.as_deref(), Some("s1"));
        assert_eq!(i.agent_id.as_deref(), Some("ag-7"));
        assert_eq!(i.response_text.as_deref(), Some("Found it in src/lib.rs."));
        let i = parse(
            br#"{"sessionId":"s1","agentName":"explore","agentType":"explore","response":"x"}"#,
            false,
        );
        assert_eq!(i.agent_id.as_deref(), Some("explore"));
        let i = parse(
            br#"{"sessionId":"s1","transcriptPath":"/t","trigger":"auto","customInstructions":""}"#,
            false,
        );
        assert_eq!(i.trigger.as_deref(), Some("auto"));
        assert_eq!(i.agent_id, None);
    }
}
