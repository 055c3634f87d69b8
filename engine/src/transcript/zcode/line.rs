//! One rollout line: the few fields capture needs, parsed without copying the rest.
//!
//! A line is several MB (every call repeats the conversation, the tool schemas and the
//! system prompt). Only `type`, `querySource`, `turnId`/`traceId`, `requestId`,
//! `attempt`, `request.messages[*].role`, the user messages' `content`,
//! `request.messagesKind` and `response.{finishReason,text}` are read. Everything else is
//! skipped by serde (`IgnoredAny`); message contents are kept as borrowed [`RawValue`]s
//! and only the user messages walked backwards from the end are decoded.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::text::{self, UserText};

/// What one `model_io` line of the main conversation says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineFacts {
    /// `turnId`, else `traceId`.
    pub turn_id: String,
    /// `traceId`, when present.
    pub trace_id: Option<String>,
    /// `requestId`: retries of one model call share it.
    pub request_id: Option<String>,
    /// `attempt` (1 when absent).
    pub attempt: u32,
    /// The last user's words of the window ([`text::classify_user`]): the last
    /// `role:"user"` message of `request.messages` that is not only injected context,
    /// unless a synthetic message (a task notification) comes after it. On a turn's first
    /// line it is the prompt; on a later line, a message further on is steering. `None` when the window holds
    /// no such message (a `tail` window that starts after the prompt). Its stand-in when
    /// it is over the message limit.
    pub prompt: Option<String>,
    /// `response.finishReason`; `None` for an interrupted call.
    pub finish_reason: Option<String>,
    /// `response.text`, as written (may be empty); its stand-in when it is over the
    /// message limit ([`text::oversized`]).
    pub text: Option<String>,
    /// Index in the conversation of the message `prompt` came from: its place in the
    /// window plus `request.messageOffset` (a `tail` or `delta` window starts there).
    pub prompt_at: Option<u64>,
    /// `request.messagesKind == "tail"`.
    pub tail: bool,
    /// `startedAt`: when the call was made (ms since the epoch).
    pub started_ms: Option<u64>,
    /// `completedAt`: when the call's answer was complete (ms since the epoch).
    pub completed_ms: Option<u64>,
    /// The calls of `response.toolCalls` that name a tool: (`id`, `name`, `input`).
    pub tool_calls: Vec<crate::tool::RequestedCall>,
    /// The `role:"tool"` messages that end `request.messages` (the results of the previous
    /// call's tools): (`toolCallId`, content, `isError`).
    pub tool_results: Vec<(String, Value, bool)>,
}

impl LineFacts {
    /// The call ended the turn: a `finishReason` is present and is not `tool-calls`.
    pub fn is_terminal(&self) -> bool {
        self.finish_reason
            .as_deref()
            .is_some_and(|r| r != "tool-calls")
    }
}

/// Why a complete line could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// Not JSON, or a needed field has the wrong type.
    #[error("invalid rollout line: {}", crate::transcript::json_error_shape(.0))]
    Json(#[from] serde_json::Error),
    /// A main-turn `model_io` line with neither `turnId` nor `traceId`.
    #[error("rollout line has neither turnId nor traceId")]
    NoTurnId,
}

#[derive(Deserialize)]
struct WireLine<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(rename = "querySource", borrow, default)]
    query_source: Option<Cow<'a, str>>,
    #[serde(rename = "turnId", borrow, default)]
    turn_id: Option<Cow<'a, str>>,
    #[serde(rename = "traceId", borrow, default)]
    trace_id: Option<Cow<'a, str>>,
    #[serde(rename = "requestId", borrow, default)]
    request_id: Option<Cow<'a, str>>,
    #[serde(default)]
    attempt: Option<u32>,
    #[serde(rename = "startedAt", borrow, default)]
    started_at: Option<Cow<'a, str>>,
    #[serde(rename = "completedAt", borrow, default)]
    completed_at: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<WireModel<'a>>,
    #[serde(borrow, default)]
    request: Option<WireRequest<'a>>,
    #[serde(borrow, default)]
    response: Option<WireResponse<'a>>,
}

#[derive(Deserialize)]
struct WireModel<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct WireRequest<'a> {
    #[serde(borrow, default)]
    messages: Option<Vec<WireMessage<'a>>>,
    #[serde(rename = "messagesKind", borrow, default)]
    messages_kind: Option<Cow<'a, str>>,
    #[serde(rename = "messageOffset", default)]
    message_offset: Option<u64>,
}

#[derive(Deserialize)]
struct WireMessage<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(rename = "toolCallId", borrow, default)]
    tool_call_id: Option<Cow<'a, str>>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct WireResponse<'a> {
    #[serde(rename = "finishReason", borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(rename = "toolCalls", borrow, default)]
    tool_calls: Option<&'a RawValue>,
}

/// The calls of a `response.toolCalls` that name a tool: (`id`, `name`, `input`).
fn tool_calls(raw: &RawValue) -> Vec<crate::tool::RequestedCall> {
    let Ok(items) = serde_json::from_str::<Vec<Value>>(raw.get()) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|v| crate::tool::requested_call(v, "id", "input"))
        .collect()
}

/// The trailing `role:"tool"` messages of a request: (`toolCallId`, content, `isError`).
fn tool_results(messages: &[WireMessage<'_>]) -> Vec<(String, Value, bool)> {
    let mut out: Vec<(String, Value, bool)> = messages
        .iter()
        .rev()
        .take_while(|m| m.role.as_deref() == Some("tool"))
        .filter_map(|m| {
            let id = m.tool_call_id.as_deref().filter(|i| !i.is_empty())?;
            let output = match m.content {
                None => Value::Null,
                Some(raw) => match content_text(raw) {
                    Ok(t) if raw.get().starts_with(['"', '[']) => Value::String(t),
                    _ => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
                },
            };
            Some((id.to_owned(), output, m.is_error == Some(true)))
        })
        .collect();
    out.reverse();
    out
}

#[derive(Deserialize)]
struct WireBlock<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

/// Text of a message `content`: a string, or the `text` of its `{type:"text"}` blocks
/// joined with `\n`; anything else is empty.
fn content_text(raw: &RawValue) -> Result<String, serde_json::Error> {
    let s = raw.get();
    match s.as_bytes().first() {
        Some(b'"') => Ok(serde_json::from_str::<Cow<'_, str>>(s)?.into_owned()),
        Some(b'[') => {
            let blocks: Vec<WireBlock<'_>> = serde_json::from_str(s)?;
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.kind.as_deref() == Some("text"))
                .filter_map(|b| b.text.as_deref())
                .collect();
            Ok(texts.join("\n"))
        }
        _ => Ok(String::new()),
    }
}

/// What ZCode's session-title call's system prompt starts with.
const SESSION_TITLE_PROMPT: &str = "Generate a concise title for this coding session.";

/// The call belongs to the user's conversation: `querySource` is `main_turn`, or absent
/// while nothing else says otherwise (`model.role` `subagent` or `compact`, or a system
/// prompt asking for a session title). Every other `querySource` (`session_title`,
/// `compact`, `subagent`, workflow children, …) is the agent talking to itself.
fn is_main_conversation(wire: &WireLine<'_>) -> bool {
    match wire.query_source.as_deref() {
        Some(q) => q == "main_turn",
        None => {
            let role = wire.model.as_ref().and_then(|m| m.role.as_deref());
            if matches!(role, Some("subagent" | "compact")) {
                return false;
            }
            let first = wire
                .request
                .as_ref()
                .and_then(|r| r.messages.as_deref())
                .and_then(<[WireMessage<'_>]>::first);
            let title = first.is_some_and(|m| {
                m.role.as_deref() == Some("system")
                    && m.content.is_some_and(|c| {
                        serde_json::from_str::<Cow<'_, str>>(c.get())
                            .is_ok_and(|t| t.starts_with(SESSION_TITLE_PROMPT))
                    })
            });
            !title
        }
    }
}

/// Parses one line (without its newline). `Ok(None)`: a line ignored on purpose (not
/// `type:"model_io"`, or not the main conversation: see `is_main_conversation`).
pub fn parse_line(line: &[u8]) -> Result<Option<LineFacts>, LineError> {
    let wire: WireLine<'_> = serde_json::from_slice(line)?;
    if wire.kind.as_deref() != Some("model_io") {
        return Ok(None);
    }
    if !is_main_conversation(&wire) {
        return Ok(None);
    }
    let trace_id = wire.trace_id.filter(|t| !t.is_empty()).map(Cow::into_owned);
    let turn_id = match (wire.turn_id, &trace_id) {
        (Some(t), _) if !t.is_empty() => t.into_owned(),
        (_, Some(t)) => t.clone(),
        _ => return Err(LineError::NoTurnId),
    };
    let mut prompt = None;
    let mut prompt_at = None;
    let mut tail = false;
    let mut results = Vec::new();
    if let Some(req) = wire.request {
        tail = req.messages_kind.as_deref() == Some("tail");
        results = tool_results(req.messages.as_deref().unwrap_or_default());
        // `full` windows start at 0; `tail` and `delta` windows at `messageOffset`.
        let offset = match req.messages_kind.as_deref() {
            Some("tail" | "delta") => req.message_offset.unwrap_or(0),
            _ => 0,
        };
        for (i, m) in req
            .messages
            .as_deref()
            .unwrap_or_default()
            .iter()
            .enumerate()
            .rev()
        {
            if m.role.as_deref() != Some("user") {
                continue;
            }
            let Some(raw) = m.content else { continue };
            match text::classify_user(&content_text(raw)?) {
                UserText::Words(w) => {
                    prompt = Some(text::oversized::bounded(w));
                    prompt_at = Some(offset.saturating_add(i as u64));
                    break;
                }
                // The turn began with a message the user did not write: it has no
                // prompt, and an earlier user message belongs to an earlier turn.
                UserText::Synthetic => break,
                UserText::Injected => {}
            }
        }
    }
    let (finish_reason, text, calls) = match wire.response {
        Some(r) => (
            r.finish_reason.map(Cow::into_owned),
            r.text.map(|t| text::oversized::bounded(t.into_owned())),
            r.tool_calls.map(tool_calls).unwrap_or_default(),
        ),
        None => (None, None, Vec::new()),
    };
    Ok(Some(LineFacts {
        turn_id,
        trace_id,
        request_id: wire.request_id.map(Cow::into_owned),
        attempt: wire.attempt.unwrap_or(1),
        prompt,
        finish_reason,
        text,
        prompt_at,
        tail,
        started_ms: wire.started_at.as_deref().and_then(crate::time::parse_ms),
        completed_ms: wire.completed_at.as_deref().and_then(crate::time::parse_ms),
        tool_calls: calls,
        tool_results: results,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(v: Value) -> Vec<u8> {
        serde_json::to_vec(&v).unwrap_or_default()
    }

    #[test]
    fn real_prompt_skips_trailing_reminder_and_reads_blocks() {
        let l = line(serde_json::json!({
            "type": "model_io", "turnId": "turn_1", "traceId": "tr", "requestId": "r", "attempt": 2,
            "querySource": "main_turn",
            "request": {"body": {"tools": [{"x": 1}]}, "messagesKind": "tail", "messages": [
                {"role": "user", "content": "old prompt"},
                {"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "image"}, {"type": "text", "text": "<system-reminder>r</system-reminder>part two"}]},
                {"role": "assistant", "content": "", "toolCalls": []},
                {"role": "tool", "content": [{"type": "text", "text": "tool out"}]},
                {"role": "user", "content": "<system-reminder>later</system-reminder>\n"},
            ]},
            "response": {"finishReason": "stop", "text": "done", "usage": {}}
        }));
        let f = parse_line(&l).ok().flatten().unwrap_or_default();
        assert_eq!(f.started_ms, None);
        assert_eq!(f.turn_id, "turn_1");
        assert_eq!(f.request_id.as_deref(), Some("r"));
        assert_eq!(f.attempt, 2);
        assert_eq!(f.prompt.as_deref(), Some("part one\npart two"));
        assert_eq!(f.text.as_deref(), Some("done"));
        assert!(f.tail && f.is_terminal());
    }

    #[test]
    fn call_times_are_read() {
        let l = line(serde_json::json!({
            "type": "model_io", "turnId": "t", "startedAt": "2026-07-02T03:02:56.413Z",
            "completedAt": "2026-07-02T03:02:58.000Z", "response": {"finishReason": "stop", "text": "a"}
        }));
        let f = parse_line(&l).ok().flatten().unwrap_or_default();
        assert_eq!(f.started_ms, Some(1_782_961_376_413));
        assert_eq!(f.completed_ms, Some(1_782_961_378_000));
        let bad = line(serde_json::json!({"type": "model_io", "turnId": "t", "startedAt": "soon"}));
        let f = parse_line(&bad).ok().flatten().unwrap_or_default();
        assert_eq!(
            f.started_ms, None,
            "an unreadable time is no time, the line is still read"
        );
    }

    #[test]
    fn filters_and_fallbacks() {
        let title = line(
            serde_json::json!({"type": "model_io", "turnId": "t", "querySource": "session_title"}),
        );
        assert!(matches!(parse_line(&title), Ok(None)));
        for q in ["compact", "session_title", "subagent", "workflow_child"] {
            let l = line(serde_json::json!({"type": "model_io", "turnId": "t", "querySource": q}));
            assert!(matches!(parse_line(&l), Ok(None)), "{q}");
        }
        let absent = line(serde_json::json!({"type": "model_io", "turnId": "t"}));
        assert!(matches!(parse_line(&absent), Ok(Some(_))), "absent = main");
        for role in ["subagent", "compact"] {
            let l = line(
                serde_json::json!({"type": "model_io", "turnId": "t", "model": {"role": role}}),
            );
            assert!(matches!(parse_line(&l), Ok(None)), "{role}");
        }
        let titled = line(
            serde_json::json!({"type": "model_io", "turnId": "t", "request": {"messages": [
            {"role": "system", "content": "Generate a concise title for this coding session. Reply with…"}]}}),
        );
        assert!(matches!(parse_line(&titled), Ok(None)));
        let other = line(serde_json::json!({"type": "usage", "turnId": "t"}));
        assert!(matches!(parse_line(&other), Ok(None)));
        let trace = line(
            serde_json::json!({"type": "model_io", "traceId": "tr1", "response": {"finishReason": "tool-calls", "text": ""}}),
        );
        let f = parse_line(&trace).ok().flatten().unwrap_or_default();
        assert_eq!(f.turn_id, "tr1");
        assert_eq!(f.attempt, 1);
        assert!(f.prompt.is_none() && !f.is_terminal());
        let none = line(serde_json::json!({"type": "model_io"}));
        assert!(matches!(parse_line(&none), Err(LineError::NoTurnId)));
        assert!(matches!(parse_line(b"{\"type\":"), Err(LineError::Json(_))));
        let interrupted = line(
            serde_json::json!({"type": "model_io", "turnId": "t", "response": {"text": "partial"}}),
        );
        let f = parse_line(&interrupted).ok().flatten().unwrap_or_default();
        assert!(f.finish_reason.is_none() && !f.is_terminal());
    }
}
