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
    /// Stop's truncated preview of the answer.
    pub response_preview: Option<String>,
    /// The event the payload says it is (ZCode: `hookEventName`).
    pub event_name: Option<String>,
    /// SessionStart's `source`.
    pub source: Option<String>,
    /// PreToolUse's tool name.
    pub tool_name: Option<String>,
    /// PreToolUse's and PostToolUse's tool input.
    pub tool_input: Option<Value>,
    /// PostToolUse's tool output (`tool_response`).
    pub tool_output: Option<Value>,
    /// The tool call's id (`tool_use_id`).
    pub tool_call_id: Option<String>,
    /// Transcript path, if the harness gives one.
    pub transcript_path: Option<String>,
    /// Stop's tool call count.
    pub tool_call_count: Option<u64>,
    /// The subagent a hook is about (SubagentStop's agent id).
    pub agent_id: Option<String>,
    /// SubagentStop: the subagent's own transcript.
    pub agent_transcript_path: Option<String>,
    /// The native id of the session that spawned this one (a subagent's session).
    pub parent_session_id: Option<String>,
    /// PreCompact's `trigger` (`manual`, `auto`).
    pub trigger: Option<String>,
    /// Bytes of payload received.
    pub raw_len: u64,
    /// What was wrong with the payload, if anything.
    pub malformed: Option<String>,
}

/// What [`read_stdin`] got.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StdinPayload {
    /// The bytes: one complete JSON value when one arrived, else everything read.
    pub bytes: Vec<u8>,
    /// More than [`MAX_PAYLOAD`] bytes were offered; `bytes` is the head.
    pub truncated: bool,
    /// stdin was neither closed nor holding a complete JSON value at the deadline.
    pub open_at_deadline: bool,
}

/// Reads the payload from stdin, never waiting past `deadline`.
///
/// Reading stops at the first of: end of file; a complete JSON object or array (ZCode may
/// leave stdin open after writing it); input that cannot start one (`/dev/zero`); more than
/// [`MAX_PAYLOAD`] bytes; the deadline. stdin is polled, never switched to non-blocking mode
/// (its open file description may be shared with the agent or a terminal).
pub fn read_stdin(deadline: std::time::Instant) -> StdinPayload {
    read_fd(0, deadline)
}

fn read_fd(fd: libc::c_int, deadline: std::time::Instant) -> StdinPayload {
    let mut out = StdinPayload::default();
    let mut scan = JsonEnd::default();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            out.open_at_deadline = true;
            return out;
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = libc::c_int::try_from(left.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut pfd, 1, ms) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return out;
        }
        if ready == 0 {
            continue; // the loop head sees the deadline
        }
        if pfd.revents & libc::POLLNVAL != 0 {
            return out;
        }
        // SAFETY: `chunk` is a live buffer of `chunk.len()` bytes.
        let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return out;
        }
        let n = usize::try_from(n).unwrap_or(0);
        if n == 0 {
            return out; // end of file
        }
        let got = chunk.get(..n).unwrap_or_default();
        match scan.feed(got) {
            Scan::More => {}
            Scan::EndsAt(i) => {
                out.bytes.extend_from_slice(got.get(..i).unwrap_or(got));
                return out;
            }
            Scan::NotJson => {
                out.bytes.extend_from_slice(got);
                return out;
            }
        }
        let room = MAX_PAYLOAD.saturating_sub(out.bytes.len());
        if got.len() > room {
            out.bytes
                .extend_from_slice(got.get(..room).unwrap_or_default());
            out.truncated = true;
            return out;
        }
        out.bytes.extend_from_slice(got);
    }
}

/// Where a JSON object or array read in pieces ends.
#[derive(Debug, Default)]
struct JsonEnd {
    started: bool,
    depth: usize,
    in_string: bool,
    escaped: bool,
}

#[derive(Debug, PartialEq, Eq)]
enum Scan {
    /// Not complete yet.
    More,
    /// Complete: the value ends before this index of the piece just fed.
    EndsAt(usize),
    /// The input cannot start an object or an array.
    NotJson,
}

impl JsonEnd {
    fn feed(&mut self, piece: &[u8]) -> Scan {
        for (i, &b) in piece.iter().enumerate() {
            if !self.started {
                match b {
                    b' ' | b'\t' | b'\n' | b'\r' => continue,
                    0xEF | 0xBB | 0xBF => continue, // a UTF-8 byte order mark
                    b'{' | b'[' => {
                        self.started = true;
                        self.depth = 1;
                        continue;
                    }
                    _ => return Scan::NotJson,
                }
            }
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return Scan::EndsAt(i + 1);
                    }
                }
                _ => {}
            }
        }
        Scan::More
    }
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

/// Where one agent's hook payload keeps each field [`HookInput`] reads (`None`: the agent
/// never sends it). Agents with flat JSON payloads differ only in these names, so one
/// parser ([`parse_fields`]) reads them all.
pub struct PayloadFields {
    /// Keys whose number value is used as text (ids).
    pub id_keys: &'static [&'static str],
    /// The session id.
    pub session_id: &'static str,
    /// The turn id.
    pub turn_id: Option<&'static str>,
    /// The working directory.
    pub cwd: &'static str,
    /// The transcript file.
    pub transcript_path: &'static str,
    /// The user's prompt.
    pub prompt: &'static str,
    /// The agent's final answer.
    pub response_text: Option<&'static str>,
    /// SessionStart's source.
    pub source: &'static str,
    /// The tool's name.
    pub tool_name: &'static str,
    /// The tool's arguments.
    pub tool_input: &'static str,
    /// PostToolUse's tool output.
    pub tool_output: Option<&'static str>,
    /// The tool call's id.
    pub tool_call_id: Option<&'static str>,
    /// Native tool names and the guard's names for them (`read_file` → `Read`).
    pub tools: &'static [(&'static str, &'static str)],
    /// The subagent's id (SubagentStop), the first of these keys present.
    pub agent_id: &'static [&'static str],
    /// SubagentStop's transcript of the subagent.
    pub agent_transcript_path: Option<&'static str>,
    /// The id of the session that spawned this one.
    pub parent_session_id: Option<&'static str>,
    /// PreCompact's trigger.
    pub trigger: Option<&'static str>,
}

impl PayloadFields {
    /// Claude Code's snake_case payload, which Codex and Qwen Code copy: only the turn id's
    /// key (with the keys whose numbers read as text) and the tool names differ.
    pub const fn claude_shape(
        id_keys: &'static [&'static str],
        turn_id: &'static str,
    ) -> PayloadFields {
        PayloadFields {
            id_keys,
            session_id: "session_id",
            turn_id: Some(turn_id),
            cwd: "cwd",
            transcript_path: "transcript_path",
            prompt: "prompt",
            response_text: Some("last_assistant_message"),
            source: "source",
            tool_name: "tool_name",
            tool_input: "tool_input",
            tool_output: Some("tool_response"),
            tool_call_id: Some("tool_use_id"),
            tools: &[],
            agent_id: &["agent_id"],
            agent_transcript_path: Some("agent_transcript_path"),
            parent_session_id: None,
            trigger: Some("trigger"),
        }
    }
}

/// Parses a flat JSON hook payload by `fields`. Never fails: problems go to `malformed`.
pub fn parse_fields(raw: &[u8], truncated: bool, fields: &PayloadFields) -> HookInput {
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
    let mut s = |key: &str| string_field(&obj, &[key], fields.id_keys, &mut problems);
    input.session_id = s(fields.session_id);
    input.turn_id = fields.turn_id.and_then(&mut s);
    input.cwd = s(fields.cwd);
    input.transcript_path = s(fields.transcript_path);
    input.prompt = s(fields.prompt);
    input.response_text = fields.response_text.and_then(&mut s);
    input.source = s(fields.source);
    input.tool_call_id = fields.tool_call_id.and_then(&mut s);
    input.agent_id = string_field(&obj, fields.agent_id, fields.id_keys, &mut problems);
    let mut s = |key: &str| string_field(&obj, &[key], fields.id_keys, &mut problems);
    input.agent_transcript_path = fields.agent_transcript_path.and_then(&mut s);
    input.parent_session_id = fields.parent_session_id.and_then(&mut s);
    input.trigger = fields.trigger.and_then(&mut s);
    input.tool_name = s(fields.tool_name).map(|native| {
        fields
            .tools
            .iter()
            .find(|(name, _)| *name == native)
            .map_or(native, |(_, ours)| (*ours).to_owned())
    });
    // Taken, not copied: a Write's input holds a whole file.
    input.tool_input = obj.remove(fields.tool_input).filter(|v| !v.is_null());
    input.tool_output = fields
        .tool_output
        .and_then(|k| obj.remove(k))
        .filter(|v| !v.is_null());
    if !problems.is_empty() {
        input.malformed = Some(problems.join("; "));
    }
    input
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

/// The payloads of `event` in a hook log written by `scripts/record-agent.sh` (one
/// `{"event":…,"payload":…}` per line), parsed by `parse`: the recorded agents' tests.
#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
pub fn recorded_payloads(
    log: &str,
    event: &str,
    parse: fn(&[u8], bool) -> HookInput,
) -> Vec<HookInput> {
    log.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == event)
        .map(|v| parse(v["payload"].to_string().as_bytes(), false))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn scan_all(text: &[u8], piece: usize) -> Scan {
        let mut s = JsonEnd::default();
        let mut offset = 0;
        for p in text.chunks(piece) {
            match s.feed(p) {
                Scan::More => offset += p.len(),
                Scan::EndsAt(i) => return Scan::EndsAt(offset + i),
                Scan::NotJson => return Scan::NotJson,
            }
        }
        Scan::More
    }

    #[test]
    fn a_json_value_ends_where_it_closes_whatever_the_pieces() {
        let v = br#" {"a":"}{\"]","b":[1,{"c":"\\"}]} {"next":1}"#;
        let whole = br#" {"a":"}{\"]","b":[1,{"c":"\\"}]}"#.len();
        for piece in [1, 2, 3, 7, 100] {
            assert_eq!(scan_all(v, piece), Scan::EndsAt(whole), "piece {piece}");
        }
        assert_eq!(scan_all(br#"{"a":"#, 3), Scan::More);
        assert_eq!(scan_all(b"\0\0\0", 3), Scan::NotJson);
        assert_eq!(scan_all(b"  true", 3), Scan::NotJson);
    }

    fn pipe() -> (libc::c_int, libc::c_int) {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe fills two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        (fds[0], fds[1])
    }

    fn write_all(fd: libc::c_int, b: &[u8]) {
        // SAFETY: a live buffer and its length.
        let n = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        assert_eq!(usize::try_from(n).ok(), Some(b.len()));
    }

    #[test]
    fn an_open_pipe_is_read_until_the_value_or_the_deadline() {
        let (r, w) = pipe();
        write_all(w, br#"{"sessionId":"s"}"#);
        let got = read_fd(r, Instant::now() + Duration::from_secs(30));
        assert_eq!(got.bytes, br#"{"sessionId":"s"}"#);
        assert!(!got.open_at_deadline);

        write_all(w, br#"{"sessionId":"#);
        let got = read_fd(r, Instant::now() + Duration::from_millis(50));
        assert_eq!(got.bytes, br#"{"sessionId":"#);
        assert!(got.open_at_deadline);
        // SAFETY: closing our own descriptors.
        unsafe {
            libc::close(w);
            libc::close(r);
        }
    }
}
