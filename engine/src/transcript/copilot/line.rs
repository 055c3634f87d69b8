//! One line of Copilot's `events.jsonl`: the few fields capture needs.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// What one line says, for capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A `user.message`: the user's words start a turn.
    Prompt {
        /// `data.messageId`: the turn's key.
        message_id: String,
        /// `data.content`.
        text: String,
        /// The event's `timestamp` (ms since the epoch), when readable.
        at_ms: Option<u64>,
    },
    /// An `assistant.message` of the main agent.
    Assistant(AssistantLine),
    /// A `tool.execution_complete`: the result of a call an `assistant.message` requested.
    ToolDone {
        /// `data.toolCallId`.
        call_id: String,
        /// `data.result.content` (any other `result` as it is), else `data.error.message`.
        output: Value,
        /// `data.success` is false.
        failed: bool,
    },
    /// A `session.error`: the model call of the turn it names failed for good.
    Failed {
        /// `data.originatingMessageId`.
        message_id: String,
    },
    /// Anything else.
    Skip,
}

/// An `assistant.message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssistantLine {
    /// `data.originatingMessageId`: the user message this answers.
    pub origin: Option<String>,
    /// `data.content`, as written (may be empty).
    pub text: String,
    /// `data.toolRequests` is not empty: the model called tools, the turn goes on.
    pub tool_requests: bool,
    /// The calls of `data.toolRequests` that name a tool: (`toolCallId`, `name`, `arguments`).
    pub tool_calls: Vec<crate::tool::RequestedCall>,
    /// The event's `timestamp` (ms since the epoch), when readable.
    pub at_ms: Option<u64>,
}

/// Why a complete line could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EntryError {
    /// Not JSON, or a needed field has the wrong type.
    #[error("invalid Copilot event line: {}", crate::transcript::json_error_shape(.0))]
    Json(#[from] serde_json::Error),
    /// A conversation event without the field that identifies it.
    #[error("Copilot {kind} event without data.{field}")]
    Missing {
        /// The event type.
        kind: &'static str,
        /// The missing field.
        field: &'static str,
    },
}

#[derive(Deserialize)]
struct WireEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
    #[serde(default)]
    timestamp: Option<Value>,
}

#[derive(Deserialize)]
struct WireUser {
    #[serde(rename = "messageId", default)]
    message_id: Option<String>,
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct WireAssistant {
    #[serde(rename = "originatingMessageId", default)]
    origin: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(rename = "toolRequests", default)]
    tool_requests: Option<Vec<Value>>,
    #[serde(rename = "parentToolCallId", default)]
    parent_tool_call_id: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct WireToolDone {
    #[serde(rename = "toolCallId", default)]
    call_id: Option<String>,
    #[serde(default)]
    success: Option<bool>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

/// A `toolRequests` item as (`toolCallId`, `name`, `arguments`), when it names a tool.
fn tool_request(v: &Value) -> Option<crate::tool::RequestedCall> {
    crate::tool::requested_call(v, "toolCallId", "arguments")
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "originatingMessageId", default)]
    origin: Option<String>,
}

const USER: &str = "user.message";
const ASSISTANT: &str = "assistant.message";
const ERROR: &str = "session.error";
const TOOL_DONE: &str = "tool.execution_complete";

/// The event type when the line starts with `{"type":"<kind>"` (how Copilot writes
/// every line), without parsing the rest.
fn leading_kind(line: &[u8]) -> Option<&[u8]> {
    const HEAD: &[u8] = b"{\"type\":\"";
    let rest = line.strip_prefix(HEAD)?;
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    (rest.get(end) == Some(&b'"'))
        .then(|| rest.get(..end))
        .flatten()
}

/// Parses one complete line (without its newline).
pub fn parse_entry(line: &[u8]) -> Result<Entry, EntryError> {
    if let Some(kind) = leading_kind(line) {
        if ![USER, ASSISTANT, ERROR, TOOL_DONE]
            .iter()
            .any(|k| k.as_bytes() == kind)
        {
            return Ok(Entry::Skip);
        }
    }
    let event: WireEvent<'_> = serde_json::from_slice(line)?;
    let Some(data) = event.data else {
        return Ok(Entry::Skip);
    };
    let at_ms = event.timestamp.as_ref().and_then(crate::time::json_ms);
    match event.kind.as_ref() {
        USER => {
            let u: WireUser = serde_json::from_str(data.get())?;
            let message_id = u.message_id.ok_or(EntryError::Missing {
                kind: USER,
                field: "messageId",
            })?;
            match u.content {
                Some(text) if !text.trim().is_empty() => Ok(Entry::Prompt {
                    message_id,
                    text,
                    at_ms,
                }),
                _ => Ok(Entry::Skip),
            }
        }
        ASSISTANT => {
            let a: WireAssistant = serde_json::from_str(data.get())?;
            if a.parent_tool_call_id.is_some() {
                return Ok(Entry::Skip);
            }
            let requests = a.tool_requests.unwrap_or_default();
            Ok(Entry::Assistant(AssistantLine {
                origin: a.origin,
                text: a.content.unwrap_or_default(),
                tool_requests: !requests.is_empty(),
                tool_calls: requests.iter().filter_map(tool_request).collect(),
                at_ms,
            }))
        }
        TOOL_DONE => {
            let d: WireToolDone = serde_json::from_str(data.get())?;
            let Some(call_id) = d.call_id.filter(|c| !c.is_empty()) else {
                return Ok(Entry::Skip);
            };
            let output = match d.result {
                Some(r) => r.get("content").cloned().unwrap_or(r),
                None => d
                    .error
                    .and_then(|e| e.get("message").cloned())
                    .unwrap_or(Value::Null),
            };
            Ok(Entry::ToolDone {
                call_id,
                output,
                failed: d.success == Some(false),
            })
        }
        ERROR => {
            let e: WireError = serde_json::from_str(data.get())?;
            Ok(e.origin
                .map_or(Entry::Skip, |message_id| Entry::Failed { message_id }))
        }
        _ => Ok(Entry::Skip),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bookkeeping_is_skipped_unparsed() {
        // Not valid JSON past the type: proves the rest is never parsed.
        let line = br#"{"type":"system.message","data":{"content": <22 KB>"#;
        assert_eq!(parse_entry(line).ok(), Some(Entry::Skip));
    }

    #[test]
    fn user_message_is_a_prompt_with_its_id() {
        let line = br#"{"type":"user.message","data":{"content":"yes","transformedContent":"<current_datetime>x</current_datetime>\n\nyes","messageId":"m1","turnId":"0"},"id":"e1","timestamp":"2026-07-02T03:02:56.413Z"}"#;
        assert_eq!(
            parse_entry(line).ok(),
            Some(Entry::Prompt {
                message_id: "m1".into(),
                text: "yes".into(),
                at_ms: Some(1_782_961_376_413),
            })
        );
    }

    #[test]
    fn type_not_first_is_still_read() {
        let line = br#"{"id":"e1","data":{"content":"hi","messageId":"m1"},"type":"user.message"}"#;
        assert!(matches!(parse_entry(line), Ok(Entry::Prompt { .. })));
    }

    #[test]
    fn assistant_with_tool_requests_is_not_final() {
        let line = br#"{"type":"assistant.message","data":{"messageId":"a1","originatingMessageId":"m1","content":"Let me read that file.","toolRequests":[{"toolCallId":"c","name":"view"}]}}"#;
        assert_eq!(
            parse_entry(line).ok(),
            Some(Entry::Assistant(AssistantLine {
                origin: Some("m1".into()),
                text: "Let me read that file.".into(),
                tool_requests: true,
                tool_calls: vec![(Some("c".into()), "view".into(), None)],
                at_ms: None,
            }))
        );
    }

    #[test]
    fn a_tool_result_names_its_call() {
        let ok = br#"{"type":"tool.execution_complete","data":{"toolCallId":"c","success":true,"result":{"content":"NOTE","detailedContent":"diff"}}}"#;
        assert_eq!(
            parse_entry(ok).ok(),
            Some(Entry::ToolDone {
                call_id: "c".into(),
                output: Value::String("NOTE".into()),
                failed: false,
            })
        );
        let denied = br#"{"type":"tool.execution_complete","data":{"toolCallId":"d","success":false,"error":{"message":"Denied","code":"denied"}}}"#;
        assert_eq!(
            parse_entry(denied).ok(),
            Some(Entry::ToolDone {
                call_id: "d".into(),
                output: Value::String("Denied".into()),
                failed: true,
            })
        );
    }

    #[test]
    fn subagent_messages_are_skipped() {
        let line = br#"{"type":"assistant.message","data":{"originatingMessageId":"m1","content":"sub","toolRequests":[],"parentToolCallId":"c9"}}"#;
        assert_eq!(parse_entry(line).ok(), Some(Entry::Skip));
    }

    #[test]
    fn session_error_names_the_failed_turn() {
        let line = br#"{"type":"session.error","data":{"errorType":"query","statusCode":500,"originatingMessageId":"m1"}}"#;
        assert_eq!(
            parse_entry(line).ok(),
            Some(Entry::Failed {
                message_id: "m1".into()
            })
        );
    }

    #[test]
    fn blank_prompt_and_missing_id() {
        let blank = br#"{"type":"user.message","data":{"content":"  ","messageId":"m1"}}"#;
        assert_eq!(parse_entry(blank).ok(), Some(Entry::Skip));
        let no_id = br#"{"type":"user.message","data":{"content":"hi"}}"#;
        assert!(matches!(
            parse_entry(no_id),
            Err(EntryError::Missing { .. })
        ));
        assert!(matches!(
            parse_entry(br#"{"type":"user.message","data":"#),
            Err(EntryError::Json(_))
        ));
    }
}
