//! ZCode's hook payloads, exactly as ZCode serializes them.
//!
//! Every event carries both camelCase and snake_case keys (`sessionId` and
//! `session_id`, …). Nothing here fails: a payload that is empty, not JSON,
//! not UTF-8, too large or of the wrong shape gives a [`HookInput`] with
//! `malformed` set and whatever fields could be read, so the hook can journal
//! it and pass through.

use serde_json::Value;

use crate::harness::input::{decode, string_field, Decoded};

pub use crate::harness::HookInput;

const SESSION_KEYS: &[&str] = &[
    "session_id",
    "sessionId",
    "conversation_id",
    "conversationId",
];
const TURN_KEYS: &[&str] = &["turnId", "turn_id"];
const TRACE_KEYS: &[&str] = &["traceId", "trace_id"];
const PROMPT_KEYS: &[&str] = &[
    "prompt",
    "user_prompt",
    "userPrompt",
    "userMessage",
    "user_message",
    "message",
];
const RESPONSE_KEYS: &[&str] = &[
    "responseText",
    "response_text",
    "last_assistant_message",
    "assistantMessage",
    "assistant_message",
    "text_content",
    "response",
];
const PREVIEW_KEYS: &[&str] = &["responsePreview", "response_preview"];
const EVENT_NAME_KEYS: &[&str] = &["hookEventName", "hook_event_name"];
const TOOL_NAME_KEYS: &[&str] = &["tool_name", "toolName", "name", "tool"];
const TOOL_INPUT_KEYS: &[&str] = &["tool_input", "toolInput", "input"];
const TRANSCRIPT_KEYS: &[&str] = &["transcript_path", "transcriptPath"];
const TOOL_COUNT_KEYS: &[&str] = &["toolCallCount", "tool_call_count"];

/// Keys whose number value is used as text.
const ID_KEYS: &[&str] = &["session_id", "sessionId", "turnId", "turn_id"];

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
    let Some(mut obj) = object else {
        input.malformed = Some(problems.join("; "));
        return input;
    };
    let mut s = |keys: &[&str]| string_field(&obj, keys, ID_KEYS, &mut problems);
    input.session_id = s(SESSION_KEYS);
    input.turn_id = s(TURN_KEYS);
    input.trace_id = s(TRACE_KEYS);
    input.cwd = s(&["cwd"]);
    input.prompt = s(PROMPT_KEYS);
    input.response_text = s(RESPONSE_KEYS);
    input.response_preview = s(PREVIEW_KEYS);
    input.event_name = s(EVENT_NAME_KEYS);
    input.source = s(&["source"]);
    input.tool_name = s(TOOL_NAME_KEYS);
    input.transcript_path = s(TRANSCRIPT_KEYS);
    if input.cwd.is_none() {
        input.cwd = ["workspace_roots", "workspaceRoots"].iter().find_map(|k| {
            obj.get(*k)?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .find(|s| !s.trim().is_empty())
                .map(str::to_string)
        });
    }
    // Taken, not copied: a Write's input holds a whole file.
    input.tool_input = TOOL_INPUT_KEYS
        .iter()
        .find_map(|k| obj.remove(*k).filter(|v| !v.is_null()));
    input.tool_call_count = TOOL_COUNT_KEYS
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_u64));
    if !problems.is_empty() {
        input.malformed = Some(problems.join("; "));
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_zcode_user_prompt_submit_payload() {
        let raw = br#"{"cwd":"/home/u/p","hookEventName":"UserPromptSubmit","hook_event_name":"UserPromptSubmit","mode":"yolo","sessionId":"sess_1","session_id":"sess_1","timestamp":"2026-07-03T03:02:56.413Z","traceId":"54125864","turnId":"turn_f0","prompt":"hello"}"#;
        let i = parse(raw, false);
        assert_eq!(i.session_id.as_deref(), Some("sess_1"));
        assert_eq!(i.turn_id.as_deref(), Some("turn_f0"));
        assert_eq!(i.trace_id.as_deref(), Some("54125864"));
        assert_eq!(i.prompt.as_deref(), Some("hello"));
        assert_eq!(i.cwd.as_deref(), Some("/home/u/p"));
        assert!(i.malformed.is_none());
    }

    #[test]
    fn stop_prefers_response_text_over_preview() {
        let i = parse(
            br#"{"sessionId":"s","responsePreview":"short","responseText":"full answer","toolCallCount":3}"#,
            false,
        );
        assert_eq!(i.response_text.as_deref(), Some("full answer"));
        assert_eq!(i.response_preview.as_deref(), Some("short"));
        assert_eq!(i.tool_call_count, Some(3));
        let j = parse(
            br#"{"sessionId":"s","hookEventName":"Stop","responsePreview":"short"}"#,
            false,
        );
        assert_eq!(j.response_text, None);
        assert_eq!(j.response_preview.as_deref(), Some("short"));
        assert_eq!(j.event_name.as_deref(), Some("Stop"));
    }

    #[test]
    fn bad_payloads_are_described_not_fatal() {
        for (raw, what) in [
            (&b""[..], "empty"),
            (b"{not json", "not JSON"),
            (b"[1,2]", "not a JSON object"),
            (b"\xff\xfe{}", "not UTF-8"),
        ] {
            let i = parse(raw, false);
            assert!(
                i.malformed.as_deref().unwrap_or("").contains(what),
                "{what}: {i:?}"
            );
        }
        let i = parse(
            br#"{"sessionId":{"x":1},"session_id":"sess_ok","prompt":7}"#,
            false,
        );
        assert_eq!(i.session_id.as_deref(), Some("sess_ok"));
        assert!(i.prompt.is_none());
        let m = i.malformed.unwrap_or_default();
        assert!(m.contains("prompt: expected a string, got a number"), "{m}");
        assert!(parse(b"{}", true)
            .malformed
            .unwrap_or_default()
            .contains("larger"));
    }

    #[test]
    fn alternate_tool_field_names() {
        let i = parse(
            br#"{"toolName":"Read","toolInput":{"file_path":"viking://x"}}"#,
            false,
        );
        assert_eq!(i.tool_name.as_deref(), Some("Read"));
        assert!(i.tool_input.is_some());
        let j = parse(br#"{"workspaceRoots":["", "/w"]}"#, false);
        assert_eq!(j.cwd.as_deref(), Some("/w"));
    }
}
