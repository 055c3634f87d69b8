//! The payloads ovhook's plugin shim (`plugin.js`) sends from inside OpenCode or Kilo Code.
//!
//! Neither agent runs command hooks; its plugin API hands JavaScript objects to a plugin in
//! process. The shim turns each event it forwards into one flat JSON object on `ovhook`'s
//! stdin, with these keys (this module and the shim are the two ends of one format):
//!
//! | key | sent with | feeds |
//! |---|---|---|
//! | `session_id` (`ses_…`) | every event | [`HookInput::session_id`] |
//! | `parent_id` | every event of a session the agent spawned (its `parentID`): a subagent's | [`HookInput::parent_session_id`] ([`ov_engine::subagent`] decides where its turns go) |
//! | `cwd` | every event (the plugin context's `directory`) | [`HookInput::cwd`] |
//! | `event` | every event (`SessionStart`, `UserPromptSubmit`, `PreToolUse`, `Stop`, `SessionEnd`) | not read: the subcommand names the event; it makes a payload readable in a log |
//! | `message_id` (`msg_…`) | UserPromptSubmit, Stop: the turn's user message | [`HookInput::turn_id`] |
//! | `event` `PreCompact` | before the agent compacts a session (`experimental.session.compacting`) | the subcommand `pre-compact` |
//! | `prompt` | UserPromptSubmit: the user message's own text parts, joined; also Stop of a subagent's session (its turn is then one event) | [`HookInput::prompt`] |
//! | `answer` | Stop: the text parts of the turn's last assistant message | [`HookInput::response_text`] |
//! | `source` | SessionStart: `startup` (created in this process) or `resume` | [`HookInput::source`] |
//! | `tool`, `args` | PreToolUse: `read` → `Read`, `glob` → `Glob`, `grep` → `Grep`, `bash` → `Bash` (the guard's names); others as sent | [`HookInput::tool_name`], [`HookInput::tool_input`] |
//!
//! Nothing here fails: a bad payload gives a [`HookInput`] with `malformed` set and whatever
//! fields could be read.

use crate::harness::input::{parse_fields, PayloadFields};
use crate::harness::HookInput;

/// The agents' tool names, and the names the guard knows them by.
const TOOLS: &[(&str, &str)] = &[
    ("read", "Read"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("bash", "Bash"),
];

const FIELDS: PayloadFields = PayloadFields {
    id_keys: &[],
    session_id: "session_id",
    turn_id: Some("message_id"),
    cwd: "cwd",
    transcript_path: "transcript_path",
    prompt: "prompt",
    response_text: Some("answer"),
    source: "source",
    tool_name: "tool",
    tool_input: "args",
    tool_output: None,
    tool_call_id: None,
    tools: TOOLS,
    agent_id: &[],
    agent_transcript_path: None,
    parent_session_id: Some("parent_id"),
    trigger: None,
};

/// Parses a raw payload. Never fails.
pub fn parse(raw: &[u8], truncated: bool) -> HookInput {
    let mut input = parse_fields(raw, truncated, &FIELDS);
    // A prompt of only whitespace is no prompt: no recall, nothing captured.
    input.prompt = input.prompt.filter(|p| !p.trim().is_empty());
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_names_its_turn_by_the_user_message() {
        let i = parse(
            br#"{"event":"UserPromptSubmit","session_id":"ses_1","cwd":"/w","message_id":"msg_a","prompt":"hello"}"#,
            false,
        );
        assert_eq!(i.session_id.as_deref(), Some("ses_1"));
        assert_eq!(i.turn_id.as_deref(), Some("msg_a"));
        assert_eq!(i.prompt.as_deref(), Some("hello"));
        assert_eq!(i.cwd.as_deref(), Some("/w"));
        assert!(i.malformed.is_none());
    }

    #[test]
    fn stop_carries_the_whole_answer() {
        let i = parse(
            br#"{"event":"Stop","session_id":"ses_1","message_id":"msg_a","answer":"part one. part two."}"#,
            false,
        );
        assert_eq!(i.turn_id.as_deref(), Some("msg_a"));
        assert_eq!(i.response_text.as_deref(), Some("part one. part two."));
    }

    #[test]
    fn a_session_with_a_parent_names_it() {
        let i = parse(br#"{"session_id":"ses_2","parent_id":"ses_1"}"#, false);
        assert_eq!(i.session_id.as_deref(), Some("ses_2"));
        assert_eq!(i.parent_session_id.as_deref(), Some("ses_1"));
        assert!(i.malformed.is_none());
        let i = parse(br#"{"session_id":"ses_2","parent_id":""}"#, false);
        assert_eq!(i.parent_session_id, None);
        let i = parse(br#"{"session_id":"ses_2","parent_id":7}"#, false);
        assert_eq!(i.parent_session_id, None);
        assert!(i.malformed.is_some_and(|m| m.contains("parent_id")));
    }

    #[test]
    fn tool_names_become_the_guards() {
        let i = parse(
            br#"{"event":"PreToolUse","session_id":"s","tool":"read","args":{"filePath":"viking://x"}}"#,
            false,
        );
        assert_eq!(i.tool_name.as_deref(), Some("Read"));
        assert_eq!(
            i.tool_input.as_ref().map(|a| a["filePath"].clone()),
            Some("viking://x".into())
        );
        for (native, ours) in TOOLS {
            let raw = format!(r#"{{"tool":"{native}"}}"#);
            assert_eq!(
                parse(raw.as_bytes(), false).tool_name.as_deref(),
                Some(*ours)
            );
        }
        let i = parse(br#"{"tool":"webfetch"}"#, false);
        assert_eq!(i.tool_name.as_deref(), Some("webfetch"));
    }

    #[test]
    fn bad_payloads_never_fail() {
        for raw in [&b""[..], b"[]", b"{\"session_id\":5,\"event\":[]}", b"\xff"] {
            let i = parse(raw, false);
            assert!(i.malformed.is_some(), "{raw:?}");
        }
        assert!(parse(br#"{"prompt":"  \n"}"#, false).prompt.is_none());
    }
}
