//! The last turn of an Antigravity conversation, from its transcript.
//!
//! Antigravity's payloads carry no prompt and no answer; `transcriptPath` names the
//! conversation's transcript (`~/.gemini/antigravity-cli/brain/<conversationId>/.system_generated/logs/transcript.jsonl`
//! for the CLI), one flat JSON record a line:
//!
//! ```text
//! {"step_index":0,"source":"USER_EXPLICIT","type":"USER_INPUT","status":"DONE","content":"<USER_REQUEST>\n…\n</USER_REQUEST>\n<ADDITIONAL_METADATA>…</ADDITIONAL_METADATA>"}
//! {"step_index":1,"source":"SYSTEM_SDK","type":"EPHEMERAL_MESSAGE","content":"…our injected context…"}
//! {"step_index":2,"source":"MODEL","type":"PLANNER_RESPONSE","tool_calls":[{"name":"view_file"}]}
//! {"step_index":3,"source":"MODEL","type":"VIEW_FILE","content":"File Path: …"}
//! {"step_index":4,"source":"MODEL","type":"PLANNER_RESPONSE","content":"done"}
//! ```
//!
//! | rule | why |
//! |---|---|
//! | records are ordered by `step_index`, never by their place in the file | Antigravity flushes the transcript asynchronously: around `Stop` a step can land after a later one |
//! | a step written twice counts once, its later line | a record may be rewritten as it completes |
//! | a turn is a `USER_INPUT` record; its id is `step-<step_index>` | the step index is the conversation's own, stable order |
//! | the prompt is the text inside `<USER_REQUEST>…</USER_REQUEST>` (else the whole content), `<ADDITIONAL_METADATA>` removed | Antigravity wraps what the user typed and appends the local time |
//! | the answer is the last `PLANNER_RESPONSE` with text after the turn's step | earlier ones are the model's words between tool calls |
//! | tool results (`VIEW_FILE`, `RUN_COMMAND`, … under the model's source), IDE edit notices (`CODE_ACTION`) and injected context (`EPHEMERAL_MESSAGE`) are no message | they are not the conversation |

use std::path::Path;

use serde_json::Value;

use crate::harness::transcript_tail::contains;

/// The last turn found in a transcript's tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastTurn {
    /// `step-<step_index>` of its `USER_INPUT` record.
    pub turn_id: String,
    /// What the user typed.
    pub prompt: Option<String>,
    /// The model's last text after the prompt, if any yet.
    pub answer: Option<String>,
}

/// A conversational record.
enum Record {
    User(Option<String>),
    Answer(String),
}

/// The last turn among the records of the transcript's last `max` bytes.
pub fn last_turn(path: &Path, max: u64) -> Option<LastTurn> {
    let lines = crate::harness::transcript_tail::last_lines(path, max)?;
    let mut records: Vec<(u64, Record)> = Vec::new();
    for line in &lines {
        // Only records that may be a prompt or an answer are parsed (a file view's record
        // holds the whole file).
        let conversational = contains(line, b"USER_INPUT") || contains(line, b"PLANNER_RESPONSE");
        if !conversational || !contains(line, b"\"step_index\"") {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let Some(step) = v.get("step_index").and_then(Value::as_u64) else {
            continue;
        };
        let record = match v.get("type").and_then(Value::as_str) {
            Some("USER_INPUT") => {
                Record::User(v.get("content").and_then(text_of).map(|t| prompt_of(&t)))
            }
            Some("PLANNER_RESPONSE") => match v.get("content").and_then(text_of) {
                Some(t) => Record::Answer(t),
                None => continue,
            },
            _ => continue,
        };
        records.retain(|(s, _)| *s != step);
        records.push((step, record));
    }
    records.sort_by_key(|(s, _)| *s);
    let at = records
        .iter()
        .rposition(|(_, r)| matches!(r, Record::User(_)))?;
    let (step, prompt) = match records.get(at) {
        Some((s, Record::User(p))) => (*s, p.clone()),
        _ => return None,
    };
    let answer = records
        .get(at + 1..)
        .unwrap_or_default()
        .iter()
        .rev()
        .find_map(|(_, r)| match r {
            Record::Answer(t) => Some(t.clone()),
            Record::User(_) => None,
        });
    Some(LastTurn {
        turn_id: format!("step-{step}"),
        prompt: prompt.filter(|p| !p.is_empty()),
        answer,
    })
}

/// A record's text: a string, an object's `text`, or the `text` / `content` strings of a list
/// of parts, joined; `None` when blank.
fn text_of(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Object(o) => o.get("text").and_then(Value::as_str)?.to_owned(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| {
                p.get("text")
                    .or_else(|| p.get("content"))
                    .and_then(Value::as_str)
            })
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// What the user typed, out of Antigravity's wrapping of it.
fn prompt_of(content: &str) -> String {
    const OPEN: &str = "<USER_REQUEST>";
    const CLOSE: &str = "</USER_REQUEST>";
    const META_OPEN: &str = "<ADDITIONAL_METADATA>";
    const META_CLOSE: &str = "</ADDITIONAL_METADATA>";
    if let Some(start) = content.find(OPEN) {
        let rest = content.get(start + OPEN.len()..).unwrap_or_default();
        let end = rest.find(CLOSE).unwrap_or(rest.len());
        return rest.get(..end).unwrap_or(rest).trim().to_owned();
    }
    let mut out = content.to_owned();
    while let Some(start) = out.find(META_OPEN) {
        let end = out
            .get(start..)
            .and_then(|r| r.find(META_CLOSE))
            .map_or(out.len(), |i| start + i + META_CLOSE.len());
        out.replace_range(start..end, "");
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORDED: &str = include_str!("../../../../testdata/agents/antigravity/transcript.jsonl");

    fn turn_of(text: &str) -> Option<LastTurn> {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("transcript.jsonl");
        std::fs::write(&p, text).expect("write");
        last_turn(&p, 1 << 20)
    }

    #[test]
    fn the_recorded_shape_gives_prompt_and_answer_and_drops_tool_output() {
        let t = turn_of(RECORDED).expect("a turn");
        assert_eq!(t.turn_id, "step-0");
        assert_eq!(t.prompt.as_deref(), Some("remember this"));
        assert_eq!(t.answer.as_deref(), Some("done"));
    }

    #[test]
    fn steps_are_ordered_by_index_not_by_line() {
        let lines = [
            r#"{"step_index":11,"source":"MODEL","type":"PLANNER_RESPONSE","content":"second answer"}"#,
            r#"{"step_index":2,"source":"MODEL","type":"PLANNER_RESPONSE","content":"first answer"}"#,
            r#"{"step_index":10,"source":"USER_EXPLICIT","type":"USER_INPUT","content":"<USER_REQUEST>\nsecond\n</USER_REQUEST>"}"#,
            r#"{"step_index":0,"source":"USER_EXPLICIT","type":"USER_INPUT","content":"<USER_REQUEST>\nfirst\n</USER_REQUEST>"}"#,
        ];
        let t = turn_of(&format!("{}\n", lines.join("\n"))).expect("a turn");
        assert_eq!(t.turn_id, "step-10", "10 sorts after 2 as a number");
        assert_eq!(t.prompt.as_deref(), Some("second"));
        assert_eq!(t.answer.as_deref(), Some("second answer"));
        // The prompt's record is there, its answer not yet: no answer, never the last turn's.
        let t = turn_of(&format!("{}\n{}\n", lines[1], lines[2])).expect("a turn");
        assert_eq!((t.turn_id.as_str(), t.answer), ("step-10", None));
    }

    #[test]
    fn prompt_wrapping_is_removed() {
        assert_eq!(
            prompt_of("<USER_REQUEST>\nship it\n</USER_REQUEST>\n<ADDITIONAL_METADATA>\nThe current local time is: 2026.\n</ADDITIONAL_METADATA>"),
            "ship it"
        );
        assert_eq!(
            prompt_of("ship it\n<ADDITIONAL_METADATA>\ntime\n</ADDITIONAL_METADATA>"),
            "ship it"
        );
        assert_eq!(prompt_of("plain"), "plain");
        assert!(turn_of("").is_none());
    }
}
