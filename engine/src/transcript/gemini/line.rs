//! One line of Gemini CLI's session file: the few fields capture needs.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

/// What one line says, for capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A `user` message with text: the user's words start a turn.
    Prompt {
        /// The message's `id`: the turn's key.
        id: String,
        /// The text parts of `content`, joined with newlines (injected blocks included).
        text: String,
        /// The record's `timestamp` (ms since the epoch), when readable.
        at_ms: Option<u64>,
    },
    /// A `gemini` message: one model call of the turn the latest prompt began.
    Answer(AnswerLine),
    /// Anything else: the header, `$set` patches, tool results, the CLI's own setup message.
    Skip,
}

/// A `gemini` message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerLine {
    /// The message's `id` (the same id is written again when the record is updated).
    pub id: String,
    /// `content`: the whole text of that model call (may be empty).
    pub text: String,
    /// `toolCalls` is not empty: the model called tools, the turn goes on.
    pub tool_calls: bool,
    /// The record's `timestamp` (ms since the epoch), when readable.
    pub at_ms: Option<u64>,
}

/// Why a complete line could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EntryError {
    /// Not JSON, or a needed field has the wrong type.
    #[error("invalid Gemini session line: {}", crate::transcript::json_error_shape(.0))]
    Json(#[from] serde_json::Error),
    /// A message record without the id that identifies it.
    #[error("Gemini {kind} message without an id")]
    MissingId {
        /// The message type.
        kind: &'static str,
    },
}

#[derive(Deserialize)]
struct WireMessage<'a> {
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(rename = "toolCalls", default)]
    tool_calls: Option<Vec<IgnoredAny>>,
    #[serde(default, borrow)]
    timestamp: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum WireContent {
    Text(String),
    Parts(Vec<WirePart>),
}

#[derive(Deserialize)]
struct WirePart {
    #[serde(default)]
    text: Option<String>,
}

const USER: &str = "user";
const GEMINI: &str = "gemini";

/// The opening of the message the CLI writes before the first prompt (date, OS, folder
/// listing): never the user's words.
const SETUP_OPEN: &str = "<session_context>";

/// Lines the CLI writes with these openings are never messages: `$set` patches (a
/// resume's `$set` of `messages` restates history already read as message records) and
/// session headers.
const NOT_MESSAGES: [&[u8]; 2] = [b"{\"$set\":", b"{\"sessionId\":"];

fn text_of(content: Option<&RawValue>) -> Result<String, serde_json::Error> {
    let Some(raw) = content else {
        return Ok(String::new());
    };
    Ok(match serde_json::from_str::<WireContent>(raw.get())? {
        WireContent::Text(t) => t,
        WireContent::Parts(parts) => parts
            .into_iter()
            .filter_map(|p| p.text)
            .collect::<Vec<_>>()
            .join("\n"),
    })
}

/// Parses one complete line (without its newline).
pub fn parse_entry(line: &[u8]) -> Result<Entry, EntryError> {
    if NOT_MESSAGES.iter().any(|p| line.starts_with(p)) {
        return Ok(Entry::Skip);
    }
    let m: WireMessage<'_> = serde_json::from_slice(line)?;
    let kind = match m.kind.as_deref() {
        Some(USER) => USER,
        Some(GEMINI) => GEMINI,
        _ => return Ok(Entry::Skip),
    };
    let Some(id) = m.id.map(Cow::into_owned) else {
        return Err(EntryError::MissingId { kind });
    };
    let text = text_of(m.content)?;
    let at_ms = m.timestamp.as_deref().and_then(crate::time::parse_ms);
    if kind == GEMINI {
        return Ok(Entry::Answer(AnswerLine {
            id,
            text,
            tool_calls: m.tool_calls.is_some_and(|t| !t.is_empty()),
            at_ms,
        }));
    }
    let trimmed = text.trim_start();
    if trimmed.is_empty() || trimmed.starts_with(SETUP_OPEN) {
        // A tool result (`functionResponse` parts only) or the CLI's setup message.
        return Ok(Entry::Skip);
    }
    Ok(Entry::Prompt { id, text, at_ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_and_headers_are_skipped_unparsed() {
        // Not valid JSON past the opening: proves the rest is never parsed.
        assert_eq!(
            parse_entry(br#"{"$set":{"messages":[ <whole history>"#).ok(),
            Some(Entry::Skip)
        );
        assert_eq!(
            parse_entry(br#"{"sessionId":"s", <header>"#).ok(),
            Some(Entry::Skip)
        );
    }

    #[test]
    fn user_text_parts_are_the_prompt_with_its_id() {
        let line = br#"{"id":"u1","timestamp":"t","type":"user","content":[{"text":"<hook_context>a</hook_context>\n\nyes"},{"text":"<hook_context>b</hook_context>"}],"displayContent":[{"text":"x"}]}"#;
        assert_eq!(
            parse_entry(line).ok(),
            Some(Entry::Prompt {
                id: "u1".into(),
                text: "<hook_context>a</hook_context>\n\nyes\n<hook_context>b</hook_context>"
                    .into(),
                at_ms: None,
            })
        );
    }

    #[test]
    fn tool_results_and_the_setup_message_are_no_prompts() {
        let result = br#"{"id":"u2","type":"user","content":[{"functionResponse":{"id":"c","name":"read_file","response":{"output":"x"}}}]}"#;
        assert_eq!(parse_entry(result).ok(), Some(Entry::Skip));
        let setup = br#"{"id":"u0","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI."}]}"#;
        assert_eq!(parse_entry(setup).ok(), Some(Entry::Skip));
    }

    #[test]
    fn gemini_records_with_and_without_tool_calls() {
        let call = br#"{"id":"g1","timestamp":"2026-12-04T16:16:14.318Z","type":"gemini","content":"Let me read that file.","thoughts":[],"toolCalls":[{"id":"c","name":"read_file"}]}"#;
        assert_eq!(
            parse_entry(call).ok(),
            Some(Entry::Answer(AnswerLine {
                id: "g1".into(),
                text: "Let me read that file.".into(),
                tool_calls: true,
                at_ms: crate::time::parse_ms("2026-12-04T16:16:14.318Z"),
            }))
        );
        let done = br#"{"id":"g2","type":"gemini","content":"A.","toolCalls":[]}"#;
        assert!(matches!(
            parse_entry(done),
            Ok(Entry::Answer(AnswerLine {
                tool_calls: false,
                ..
            }))
        ));
    }

    #[test]
    fn bad_lines() {
        assert!(matches!(
            parse_entry(br#"{"type":"user","content":"hi"}"#),
            Err(EntryError::MissingId { .. })
        ));
        assert!(matches!(
            parse_entry(br#"{"id":"x","type":"user","content":5}"#),
            Err(EntryError::Json(_))
        ));
        assert_eq!(
            parse_entry(br#"{"id":"i","type":"info","content":"x"}"#).ok(),
            Some(Entry::Skip)
        );
    }
}
