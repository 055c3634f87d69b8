//! One transcript line: the few fields capture needs, parsed without copying the rest.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::text;

/// What one transcript line says, for capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A user's prompt: a main-chain user entry with string content that is the
    /// user's words (injected blocks removed, never empty).
    Prompt {
        /// `promptId`.
        prompt_id: String,
        /// The prompt.
        text: String,
        /// The entry's `timestamp` (ms since the epoch), when readable.
        at_ms: Option<u64>,
    },
    /// Another main-chain user entry of a turn (tool results): the turn goes on.
    TurnContinues {
        /// `promptId`.
        prompt_id: String,
        /// Its `tool_result` blocks.
        results: Vec<ToolResult>,
    },
    /// A main-chain user entry that is not the user's words: a task notification,
    /// a compaction summary, an `isMeta` entry, a local command.
    NotUserWords {
        /// `promptId`, when the entry has one.
        prompt_id: Option<String>,
    },
    /// One line of an assistant message.
    Assistant(AssistantLine),
    /// Bookkeeping, sidechains, user entries without a `promptId`.
    Skip,
}

/// One line of an assistant message (Claude Code writes one line per content block).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AssistantLine {
    /// `message.id`, shared by the lines of one message.
    pub message_id: String,
    /// `apiBlockIndex`: the block's place in the message.
    pub block_index: Option<u32>,
    /// Text of the line's `text` blocks.
    pub texts: Vec<String>,
    /// The line holds a `tool_use` block, or `stop_reason` is `tool_use`.
    pub tool_use: bool,
    /// `isApiErrorMessage`: a failed model call, written as a synthetic message.
    pub api_error: bool,
    /// The line's `tool_use` blocks.
    pub tool_calls: Vec<ToolUse>,
    /// The line's `timestamp` (ms since the epoch), when readable.
    pub at_ms: Option<u64>,
}

/// A `tool_use` block of an assistant line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUse {
    /// `id`.
    pub id: Option<String>,
    /// `name`.
    pub name: String,
    /// `input`.
    pub input: Option<Value>,
}

/// A `tool_result` block of a user entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// `tool_use_id`: the call it answers.
    pub tool_use_id: String,
    /// `content`: a string, or the text of its `text` blocks joined by a newline, else the
    /// JSON as it is.
    pub output: Value,
    /// `is_error`.
    pub failed: bool,
}

/// Why a complete line could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EntryError {
    /// Not JSON, or a needed field has the wrong type.
    #[error("invalid transcript line: {}", crate::transcript::json_error_shape(.0))]
    Json(#[from] serde_json::Error),
    /// An assistant line without `message.id`.
    #[error("assistant line without message.id")]
    NoMessageId,
}

#[derive(Deserialize)]
struct WireEntry<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(rename = "promptId", borrow, default)]
    prompt_id: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(rename = "isMeta", default)]
    is_meta: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Option<bool>,
    #[serde(rename = "isApiErrorMessage", default)]
    is_api_error: Option<bool>,
    #[serde(rename = "apiBlockIndex", default)]
    api_block_index: Option<u32>,
    #[serde(rename = "promptSource", borrow, default)]
    prompt_source: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    origin: Option<WireOrigin<'a>>,
    #[serde(borrow, default)]
    message: Option<WireMessage<'a>>,
}

#[derive(Deserialize)]
struct WireOrigin<'a> {
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct WireMessage<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct WireBlock<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(default)]
    is_error: Option<bool>,
}

/// The `tool_result` blocks of a user entry's array content.
fn tool_results(content: &RawValue) -> Vec<ToolResult> {
    let Ok(blocks) = serde_json::from_str::<Vec<WireBlock<'_>>>(content.get()) else {
        return Vec::new();
    };
    blocks
        .into_iter()
        .filter(|b| b.kind.as_deref() == Some("tool_result"))
        .filter_map(|b| {
            let tool_use_id = b.tool_use_id.filter(|i| !i.is_empty())?.into_owned();
            Some(ToolResult {
                tool_use_id,
                output: b.content.map_or(Value::Null, result_output),
                failed: b.is_error == Some(true),
            })
        })
        .collect()
}

/// A `tool_result`'s content: its string, the text of its `text` blocks, else its JSON.
fn result_output(content: &RawValue) -> Value {
    let Ok(v) = serde_json::from_str::<Value>(content.get()) else {
        return Value::Null;
    };
    let Value::Array(blocks) = &v else {
        return v;
    };
    let texts: Option<Vec<&str>> = blocks
        .iter()
        .map(|b| {
            (b.get("type").and_then(Value::as_str) == Some("text"))
                .then(|| b.get("text").and_then(Value::as_str))
                .flatten()
        })
        .collect();
    match texts {
        Some(t) => Value::String(t.join("\n")),
        None => v,
    }
}

/// Opening tags of the entries Claude Code writes for a local (slash or bang) command.
const LOCAL_COMMAND_TAGS: [&str; 6] = [
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
];

/// Whether `line` may be a user or an assistant entry, without parsing it. Its `type` is then
/// the JSON string `"user"` or `"assistant"`, spelled as it is or with `\u` escapes, wherever
/// the key is and whatever whitespace surrounds it. A pre-filter only: it lets through every
/// line whose parse could be an entry (and some others), and never decides what a line is.
fn may_be_entry(line: &[u8]) -> bool {
    use memchr::memmem::find;
    find(line, br#""user""#).is_some()
        || find(line, br#""assistant""#).is_some()
        || find(line, br"\u").is_some()
}

/// Parses one complete line (without its newline).
pub fn parse_entry(line: &[u8]) -> Result<Entry, EntryError> {
    // Bookkeeping lines are most of the bytes: skip them without parsing.
    if !may_be_entry(line) {
        return Ok(Entry::Skip);
    }
    let wire: WireEntry<'_> = serde_json::from_slice(line)?;
    if wire.is_sidechain == Some(true) {
        return Ok(Entry::Skip);
    }
    match wire.kind.as_deref() {
        Some("user") => Ok(user_entry(&wire)?),
        Some("assistant") => Ok(assistant_entry(&wire)?),
        _ => Ok(Entry::Skip),
    }
}

fn user_entry(wire: &WireEntry<'_>) -> Result<Entry, EntryError> {
    let Some(prompt_id) = wire.prompt_id.as_deref().filter(|p| !p.is_empty()) else {
        return Ok(Entry::Skip);
    };
    let prompt_id = prompt_id.to_owned();
    let not_words = Entry::NotUserWords {
        prompt_id: Some(prompt_id.clone()),
    };
    if wire.is_meta == Some(true)
        || wire.is_compact_summary == Some(true)
        || wire.prompt_source.as_deref() == Some("system")
        || wire
            .origin
            .as_ref()
            .and_then(|o| o.kind.as_deref())
            .is_some_and(|k| k == "task-notification")
    {
        return Ok(not_words);
    }
    let Some(content) = wire.message.as_ref().and_then(|m| m.content) else {
        return Ok(Entry::TurnContinues {
            prompt_id,
            results: Vec::new(),
        });
    };
    // String content is a prompt; an array is tool results (or pasted blocks).
    let Ok(raw_text) = serde_json::from_str::<Cow<'_, str>>(content.get()) else {
        return Ok(Entry::TurnContinues {
            prompt_id,
            results: tool_results(content),
        });
    };
    let trimmed = raw_text.trim_start();
    if LOCAL_COMMAND_TAGS.iter().any(|t| trimmed.starts_with(t)) {
        return Ok(not_words);
    }
    match text::user_words(&raw_text) {
        Some(text) => Ok(Entry::Prompt {
            prompt_id,
            text,
            at_ms: wire.timestamp.as_deref().and_then(crate::time::parse_ms),
        }),
        None => Ok(not_words),
    }
}

fn assistant_entry(wire: &WireEntry<'_>) -> Result<Entry, EntryError> {
    let message = wire.message.as_ref();
    let message_id = message
        .and_then(|m| m.id.as_deref())
        .filter(|id| !id.is_empty())
        .ok_or(EntryError::NoMessageId)?
        .to_owned();
    let mut line = AssistantLine {
        message_id,
        block_index: wire.api_block_index,
        api_error: wire.is_api_error == Some(true),
        at_ms: wire.timestamp.as_deref().and_then(crate::time::parse_ms),
        tool_use: message
            .and_then(|m| m.stop_reason.as_deref())
            .is_some_and(|r| r == "tool_use"),
        ..AssistantLine::default()
    };
    if let Some(content) = message.and_then(|m| m.content) {
        match serde_json::from_str::<Vec<WireBlock<'_>>>(content.get()) {
            Ok(blocks) => {
                for b in blocks {
                    match b.kind.as_deref() {
                        Some("text") => {
                            if let Some(t) = b.text {
                                line.texts.push(t.into_owned());
                            }
                        }
                        Some("tool_use") => {
                            line.tool_use = true;
                            if let Some(name) = b.name.filter(|n| !n.is_empty()) {
                                line.tool_calls.push(ToolUse {
                                    id: b.id.map(Cow::into_owned),
                                    name: name.into_owned(),
                                    input: b.input.and_then(|i| serde_json::from_str(i.get()).ok()),
                                });
                            }
                        }
                        _ => {}
                    }
                }
            }
            Err(_) => {
                if let Ok(t) = serde_json::from_str::<Cow<'_, str>>(content.get()) {
                    line.texts.push(t.into_owned());
                }
            }
        }
    }
    Ok(Entry::Assistant(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bookkeeping_is_skipped_unparsed_even_when_broken() {
        assert_eq!(
            parse_entry(br#"{"type":"attachment","x":[1,2"#).expect("skip"),
            Entry::Skip
        );
    }

    #[test]
    fn whitespace_and_escapes_are_json_too() {
        let want = Entry::Prompt {
            prompt_id: "p1".into(),
            text: "hello".into(),
            at_ms: None,
        };
        for line in [
            &br#"{"type": "user", "promptId": "p1", "message": {"role": "user", "content": "hello"}}"#[..],
            br#"{ "promptId" : "p1" ,	"message":{"content":"hello"}, "type"	:"user" }"#,
            br#"{"type":"\u0075ser","promptId":"p1","message":{"content":"hello"}}"#,
        ] {
            assert_eq!(
                parse_entry(line).expect("ok"),
                want,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let Entry::Assistant(a) = parse_entry(
            br#"{"type" : "assistant" , "message" : {"id" : "m1", "content" : [{"type" : "text", "text" : "hi"}]}}"#,
        )
        .expect("ok") else {
            panic!("assistant")
        };
        assert_eq!(a.texts, ["hi"]);
    }

    #[test]
    fn prompt_tool_result_and_not_words() {
        let p = parse_entry(
            br#"{"type":"user","promptId":"p1","isSidechain":false,"timestamp":"2026-07-02T03:02:56.413Z","message":{"role":"user","content":"hello <system-reminder>x</system-reminder>"}}"#,
        )
        .expect("ok");
        assert_eq!(
            p,
            Entry::Prompt {
                prompt_id: "p1".into(),
                text: "hello".into(),
                at_ms: Some(1_782_961_376_413),
            }
        );
        let t = parse_entry(
            br#"{"type":"user","promptId":"p1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}}"#,
        )
        .expect("ok");
        assert_eq!(
            t,
            Entry::TurnContinues {
                prompt_id: "p1".into(),
                results: vec![ToolResult {
                    tool_use_id: "t".into(),
                    output: Value::String("x".into()),
                    failed: false,
                }],
            }
        );
        for line in [
            &br#"{"type":"user","promptId":"p2","isMeta":true,"message":{"content":"<local-command-caveat>c</local-command-caveat>"}}"#[..],
            br#"{"type":"user","promptId":"p2","isCompactSummary":true,"message":{"content":"This session is being continued"}}"#,
            br#"{"type":"user","promptId":"p2","message":{"content":"<command-name>/compact</command-name>"}}"#,
            br#"{"type":"user","promptId":"p2","message":{"content":"<local-command-stdout>Compacted</local-command-stdout>"}}"#,
            br#"{"type":"user","promptId":"p2","origin":{"kind":"task-notification"},"message":{"content":"done"}}"#,
            br#"{"type":"user","promptId":"p2","promptSource":"system","message":{"content":"done"}}"#,
            br#"{"type":"user","promptId":"p2","message":{"content":"<task-notification><task-id>a</task-id></task-notification>"}}"#,
        ] {
            assert_eq!(
                parse_entry(line).expect("ok"),
                Entry::NotUserWords {
                    prompt_id: Some("p2".into())
                },
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let side = parse_entry(
            br#"{"type":"user","promptId":"p3","isSidechain":true,"message":{"content":"sub"}}"#,
        )
        .expect("ok");
        assert_eq!(side, Entry::Skip);
    }

    #[test]
    fn assistant_block_lines() {
        let a = parse_entry(
            br#"{"type":"assistant","apiBlockIndex":1,"message":{"id":"m1","content":[{"type":"text","text":"two"}],"stop_reason":"end_turn"}}"#,
        )
        .expect("ok");
        assert_eq!(
            a,
            Entry::Assistant(AssistantLine {
                message_id: "m1".into(),
                block_index: Some(1),
                texts: vec!["two".into()],
                tool_use: false,
                api_error: false,
                tool_calls: Vec::new(),
                at_ms: None,
            })
        );
        let Entry::Assistant(tu) = parse_entry(
            br#"{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t","name":"Read","input":{}}],"stop_reason":null}}"#,
        )
        .expect("ok") else {
            panic!("assistant")
        };
        assert!(tu.tool_use);
        assert_eq!(
            tu.tool_calls,
            [ToolUse {
                id: Some("t".into()),
                name: "Read".into(),
                input: Some(serde_json::json!({})),
            }]
        );
        let Entry::Assistant(err) = parse_entry(
            br#"{"type":"assistant","isApiErrorMessage":true,"message":{"id":"m3","model":"<synthetic>","content":[{"type":"text","text":"API Error: 500"}],"stop_reason":"stop_sequence"}}"#,
        )
        .expect("ok") else {
            panic!("assistant")
        };
        assert!(err.api_error);
        assert!(parse_entry(br#"{"type":"assistant","message":{}}"#).is_err());
    }
}
