//! The harness-neutral shape of a hook payload: what every harness's wire
//! module fills in from its own field names.

use serde_json::{Map, Value};

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

/// A payload decoded as far as it goes: the JSON object (None when the payload
/// is empty, not JSON or not an object) and what was wrong with it.
pub struct Decoded {
    /// The payload's object.
    pub object: Option<Map<String, Value>>,
    /// Problems found, in order.
    pub problems: Vec<String>,
}

/// Decodes a raw payload into its JSON object. Never fails: problems are listed.
pub fn decode(raw: &[u8], truncated: bool) -> Decoded {
    let mut problems: Vec<String> = Vec::new();
    if truncated {
        problems.push(format!("payload larger than {MAX_PAYLOAD} bytes"));
    }
    let text = match std::str::from_utf8(raw) {
        Ok(t) => std::borrow::Cow::Borrowed(t),
        Err(_) => {
            problems.push("payload is not UTF-8".into());
            String::from_utf8_lossy(raw)
        }
    };
    let object = if text.trim().is_empty() {
        problems.push("empty payload".into());
        None
    } else {
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(obj)) => Some(obj),
            Ok(_) => {
                problems.push("payload is not a JSON object".into());
                None
            }
            Err(e) => {
                problems.push(format!("not JSON: {e}"));
                None
            }
        }
    };
    Decoded { object, problems }
}

/// The first non-empty string among `keys`; a key present with another type is
/// noted in `problems` (a number under an id key is used as text).
pub fn string_field(
    obj: &Map<String, Value>,
    keys: &[&str],
    id_keys: &[&str],
    problems: &mut Vec<String>,
) -> Option<String> {
    for k in keys {
        match obj.get(*k) {
            Some(Value::String(s)) if !s.is_empty() => return Some(s.clone()),
            Some(Value::String(_)) | Some(Value::Null) | None => {}
            Some(Value::Number(n)) if id_keys.contains(k) => {
                problems.push(format!("{k}: a number, used as text"));
                return Some(n.to_string());
            }
            Some(other) => problems.push(format!("{k}: expected a string, got {}", kind(other))),
        }
    }
    None
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
