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
//! | — | no payload holds the answer | [`HookInput::response_text`] stays `None`: the transcript has it |
//! | `source` | sessionStart (`new`, `resume`, `startup`) | [`HookInput::source`] |
//! | `toolName`, `toolArgs` | preToolUse: `view` → `Read`, `glob` → `Glob`, `grep` → `Grep`, `bash` → `Bash` (the guard's names); others as sent | [`HookInput::tool_name`], [`HookInput::tool_input`] |
//!
//! Nothing here fails: a bad payload gives a [`HookInput`] with `malformed` set and
//! whatever fields could be read.

use crate::harness::input::{decode, string_field, Decoded};
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

/// Parses a raw payload. Never fails.
pub fn parse(raw: &[u8], truncated: bool) -> HookInput {
    let mut input = HookInput {
        raw_len: raw.len() as u64,
        ..HookInput::default()
    };
    let Decoded {
        object,
        mut problems,
    } = decode(raw, truncated);
    let Some(obj) = object else {
        input.malformed = Some(problems.join("; "));
        return input;
    };
    let mut s = |key: &str| string_field(&obj, &[key], ID_KEYS, &mut problems);
    input.session_id = s("sessionId");
    input.cwd = s("cwd");
    input.transcript_path = s("transcriptPath");
    input.prompt = s("prompt");
    input.source = s("source");
    input.tool_name = s("toolName").map(|t| canonical_tool(&t));
    input.tool_input = obj.get("toolArgs").filter(|v| !v.is_null()).cloned();
    if !problems.is_empty() {
        input.malformed = Some(problems.join("; "));
    }
    input
}

fn canonical_tool(name: &str) -> String {
    TOOLS
        .iter()
        .find(|(native, _)| *native == name)
        .map_or_else(|| name.to_owned(), |(_, ours)| (*ours).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Payloads recorded from Copilot CLI 1.0.102 (`scripts/record-agent.sh copilot`).
    const RECORDED: &str = include_str!("../../../../testdata/agents/copilot/hooks.jsonl");

    fn recorded(event: &str) -> Vec<HookInput> {
        RECORDED
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["event"] == event)
            .map(|v| parse(v["payload"].to_string().as_bytes(), false))
            .collect()
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
}
