//! The answer of Cursor's last turn, from its conversation transcript.
//!
//! Cursor's `stop` payload carries no answer; its `transcript_path` names the conversation's
//! transcript (`~/.cursor/projects/<workspace>/agent-transcripts/…jsonl`), one JSON record a
//! line:
//!
//! ```text
//! {"role":"user","message":{"content":[{"type":"text","text":"<timestamp>…</timestamp>\n<user_query>\n…\n</user_query>"}]}}
//! {"role":"assistant","message":{"content":[{"type":"text","text":"…"},{"type":"tool_use","name":"Read","input":{…}}]}}
//! {"type":"turn_ended","status":"success"}
//! ```
//!
//! `content` may also be a plain string. The turn's answer is the text of its last assistant
//! record that has text, after the last `user` record: the model's final message (earlier
//! assistant records of the turn are its words between tool calls). `[REDACTED]` marks
//! reasoning Cursor withholds and is removed.

use std::path::Path;

use serde_json::Value;

use crate::harness::transcript_tail::contains;

/// How much of the transcript's end is read at most: the last turn's records.
const TAIL_BYTES: u64 = 8 << 20;

/// The text of the last assistant record after the last user record, if any.
pub fn last_answer(path: &Path) -> Option<String> {
    // Read back from the end, only as far as the last turn's records.
    for line in crate::harness::transcript_tail::rev_lines(path, TAIL_BYTES)? {
        // Only records that may be messages are parsed.
        if !contains(&line, b"\"role\"") {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        match v.get("role").and_then(Value::as_str) {
            Some("user") => return None,
            Some("assistant") => {
                let content = v.get("message").and_then(|m| m.get("content"));
                if let Some(text) = content.and_then(text_of) {
                    return Some(text);
                }
            }
            _ => {}
        }
    }
    None
}

/// The text parts of a record's `content`, joined, without the `[REDACTED]` marks; `None` when
/// there is no text.
fn text_of(content: &Value) -> Option<String> {
    crate::harness::transcript_tail::text_parts(content, Some("[REDACTED]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer_of(lines: &[&str]) -> Option<String> {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, format!("{}\n", lines.join("\n"))).expect("write");
        last_answer(&p)
    }

    #[test]
    fn the_last_assistant_text_of_the_last_turn() {
        let user = r#"{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nq\n</user_query>"}]}}"#;
        let working = r#"{"role":"assistant","message":{"content":[{"type":"text","text":"reading"},{"type":"tool_use","name":"Read","input":{}}]}}"#;
        let tool_only = r#"{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{}}]}}"#;
        let done = r#"{"role":"assistant","message":{"content":[{"type":"text","text":"done [REDACTED]"}]}}"#;
        let ended = r#"{"type":"turn_ended","status":"success"}"#;
        assert_eq!(
            answer_of(&[user, working, tool_only, done, ended]).as_deref(),
            Some("done")
        );
        assert_eq!(
            answer_of(&[user, working, tool_only]).as_deref(),
            Some("reading")
        );
        // A new prompt with no answer yet: nothing, never the previous turn's answer.
        assert_eq!(answer_of(&[user, done, user]), None);
        let plain = r#"{"role":"assistant","message":{"content":"plain"}}"#;
        assert_eq!(answer_of(&[user, plain]).as_deref(), Some("plain"));
        assert_eq!(answer_of(&["not json", plain]).as_deref(), Some("plain"));
    }
}
