//! A Droid turn's answer and turn id, from its session transcript.
//!
//! Droid's Stop payload carries no answer: its `message_id` is the id of the turn's final
//! assistant message, and its `transcript_path` names the session's transcript
//! (`~/.factory/sessions/<cwd, "/" as "-">/<session_id>.jsonl`), one JSON record a line:
//!
//! ```text
//! {"type":"session_start", …}
//! {"type":"message","id":"…","message":{"role":"user","content":[{"type":"text","text":"…"}]}}
//! {"type":"message","id":"…","message":{"role":"assistant","content":[{"type":"text",…},{"type":"tool_use",…}]}}
//! {"type":"message","id":"…","message":{"role":"user","content":[{"type":"tool_result",…}]}}
//! {"type":"agent_turn_outcome", …}
//! ```
//!
//! | rule | why |
//! |---|---|
//! | the answer is the text of the assistant message whose `id` is Stop's `message_id` | Droid names its final message; earlier assistant messages are its words between tool calls |
//! | the turn id is the `id` of the last real user message before it | UserPromptSubmit names the turn by that same id (its `message_id`) |
//! | a user message is real when it has text, no `tool_result`, and its text does not start with `<system-reminder>` | tool results come back as user messages; Droid writes a steering `<system-reminder>` user message when a prompt arrives mid-turn, never the user's prompt |
//! | only the transcript's last [`TAIL_BYTES`] are read ([`crate::harness::transcript_tail`]) | this runs in the Stop hook |

use std::path::Path;

use serde_json::Value;

use crate::harness::transcript_tail::contains;

/// How much of the transcript's end is read: the last turn's records.
const TAIL_BYTES: u64 = 8 << 20;

/// What the transcript says of the turn Stop closes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StopTurn {
    /// The id of the turn's user message.
    pub turn_id: Option<String>,
    /// The final assistant message's text.
    pub answer: Option<String>,
}

/// The turn whose final assistant message is `message_id`, read from the transcript at
/// `path`; `None` when the message is not among the transcript's last lines.
pub fn stop_turn(path: &Path, message_id: &str) -> Option<StopTurn> {
    let needle = serde_json::to_string(message_id).ok()?;
    // Read back from the end: only lines naming the id are parsed until the answer is
    // found, then the lines before it until the turn's prompt.
    let mut lines = crate::harness::transcript_tail::rev_lines(path, TAIL_BYTES)?;
    let answer = lines.by_ref().find_map(|l| {
        contains(&l, needle.as_bytes())
            .then(|| message(&l))
            .flatten()
            .filter(|m| m.id == message_id && m.role == "assistant")
    })?;
    // A tool result's line (often large) is never the prompt: not parsed.
    let user = lines
        .filter(|l| contains(l, b"\"user\"") && !contains(l, b"\"tool_result\""))
        .filter_map(|l| message(&l))
        .find(|m| m.role == "user" && m.is_real_prompt());
    Some(StopTurn {
        turn_id: user.map(|u| u.id),
        answer: answer.text(),
    })
}

/// One `message` record.
struct Message {
    id: String,
    role: String,
    content: Value,
}

impl Message {
    /// The text parts of its content, joined; `None` when there is none.
    fn text(&self) -> Option<String> {
        crate::harness::transcript_tail::text_parts(&self.content, None)
    }

    /// A user message the user wrote: text, no tool result, and words of the user's by the
    /// engine's one rule for injected text (a steering `<system-reminder>` is not).
    fn is_real_prompt(&self) -> bool {
        let tool_result = self.content.as_array().is_some_and(|parts| {
            parts
                .iter()
                .any(|p| p.get("type").and_then(Value::as_str) == Some("tool_result"))
        });
        !tool_result
            && self
                .text()
                .is_some_and(|t| ov_engine::text::user_words(&t).is_some())
    }
}

/// The line's `message` record, if it is one.
fn message(line: &[u8]) -> Option<Message> {
    if !contains(line, b"\"message\"") {
        return None;
    }
    let mut v = serde_json::from_slice::<Value>(line).ok()?;
    if v.get("type").and_then(Value::as_str) != Some("message") {
        return None;
    }
    let id = v.get("id").and_then(Value::as_str)?.to_owned();
    let m = v.get_mut("message")?;
    let role = m.get("role").and_then(Value::as_str)?.to_owned();
    let content = m.get_mut("content").map(Value::take).unwrap_or_default();
    Some(Message { id, role, content })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transcript of `testdata/agents/droid/hooks.jsonl`'s session.
    const RECORDED: &str = include_str!("../../../../testdata/agents/droid/transcript.jsonl");

    fn turn_of(text: &str, id: &str) -> Option<StopTurn> {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, text).expect("write");
        stop_turn(&p, id)
    }

    fn turn(id: &str, answer: &str) -> Option<StopTurn> {
        Some(StopTurn {
            turn_id: Some(id.into()),
            answer: Some(answer.into()),
        })
    }

    #[test]
    fn each_stop_finds_its_answer_and_its_users_message() {
        // After a tool call: the tool result's user message is not the prompt.
        assert_eq!(
            turn_of(RECORDED, "msg-a-0002"),
            turn("msg-u-0001", "You prefer tabs, width 4.")
        );
        // The steering reminder between the prompt and the answer is not the prompt.
        assert_eq!(
            turn_of(RECORDED, "msg-a-0003"),
            turn("msg-u-0002", "Yes: you prefer tabs.")
        );
        assert_eq!(
            turn_of(RECORDED, "msg-a-0004"),
            turn("msg-u-0004", "Still tabs.")
        );
    }

    #[test]
    fn no_answer_without_the_named_assistant_message() {
        // A user message's id, an unknown id, a missing file: nothing.
        assert_eq!(turn_of(RECORDED, "msg-u-0004"), None);
        assert_eq!(turn_of(RECORDED, "msg-a-9999"), None);
        assert_eq!(turn_of(RECORDED, "msg-a"), None, "a prefix names no message");
        assert!(stop_turn(Path::new("/nonexistent/t.jsonl"), "msg-a-0004").is_none());
        // A tool-only final message: the turn, no answer.
        let tool_only = concat!(
            r#"{"type":"message","id":"u","message":{"role":"user","content":[{"type":"text","text":"go"}]}}"#,
            "\n",
            r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"LS","input":{}}]}}"#,
            "\nnot json\n"
        );
        assert_eq!(
            turn_of(tool_only, "a"),
            Some(StopTurn {
                turn_id: Some("u".into()),
                answer: None
            })
        );
    }
}
