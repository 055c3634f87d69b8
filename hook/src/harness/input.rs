//! The harness-neutral shape of a hook payload: what every harness's wire
//! module fills in from its own field names.

use serde_json::Value;

/// Largest payload read from stdin; the rest is drained and ignored.
pub const MAX_PAYLOAD: usize = 16 << 20;

/// The fields ovhook uses from a hook payload (each harness's wire module
/// documents which of its keys feed which field).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookInput {
    /// The harness's session id.
    pub session_id: Option<String>,
    /// The turn id (ZCode: `turnId`).
    pub turn_id: Option<String>,
    /// The trace id (ZCode: `traceId`).
    pub trace_id: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// UserPromptSubmit's prompt.
    pub prompt: Option<String>,
    /// Stop's final answer.
    pub response_text: Option<String>,
    /// Stop's truncated preview of the answer.
    pub response_preview: Option<String>,
    /// The event the payload says it is (ZCode: `hookEventName`).
    pub event_name: Option<String>,
    /// SessionStart's `source`.
    pub source: Option<String>,
    /// PreToolUse's tool name.
    pub tool_name: Option<String>,
    /// PreToolUse's tool input.
    pub tool_input: Option<Value>,
    /// Transcript path, if the harness gives one.
    pub transcript_path: Option<String>,
    /// Stop's tool call count.
    pub tool_call_count: Option<u64>,
    /// Bytes of payload received.
    pub raw_len: u64,
    /// What was wrong with the payload, if anything.
    pub malformed: Option<String>,
}

/// Reads stdin up to [`MAX_PAYLOAD`] bytes, draining the rest. Returns the bytes
/// and whether the payload was cut.
pub fn read_stdin() -> (Vec<u8>, bool) {
    use std::io::Read;
    let mut buf = Vec::with_capacity(4096);
    let stdin = std::io::stdin();
    let mut lock = stdin.lock();
    let limit = u64::try_from(MAX_PAYLOAD).unwrap_or(u64::MAX);
    if lock.by_ref().take(limit).read_to_end(&mut buf).is_err() {
        return (buf, false);
    }
    let mut sink = [0u8; 8192];
    let mut truncated = false;
    while let Ok(n) = lock.read(&mut sink) {
        if n == 0 {
            break;
        }
        truncated = true;
    }
    (buf, truncated)
}
