//! Every harness against payloads no agent should send: random bytes, JSON of the wrong
//! shape, every key any harness reads holding any JSON value, transcript paths that are
//! not files (a FIFO no one writes, a directory, `/dev/zero`, a path that does not exist).
//!
//! The properties, for every harness of [`super::ALL`] and every [`HookEvent`]:
//! - `parse` returns (it never panics, never blocks on a path it was given);
//! - the context, deny and pass outputs are each nothing or one JSON document, and a
//!   context or deny line is shorter than the byte cap it was given (`context_fit`'s
//!   contract).

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::{HookEvent, ALL};

/// Keys some harness reads from its payload (snake_case, camelCase, and the agents' own).
const KEYS: &[&str] = &[
    "session_id",
    "sessionId",
    "conversation_id",
    "conversationId",
    "generation_id",
    "turn_id",
    "turnId",
    "traceId",
    "message_id",
    "messageID",
    "prompt",
    "cwd",
    "workspace_roots",
    "transcript_path",
    "transcriptPath",
    "agent_transcript_path",
    "hook_event_name",
    "hookEventName",
    "tool_name",
    "toolName",
    "tool_input",
    "toolArgs",
    "tool_response",
    "tool_use_id",
    "last_assistant_message",
    "responseText",
    "response",
    "agent_id",
    "agentId",
    "agentName",
    "parent_session_id",
    "source",
    "trigger",
    "stop_hook_active",
    "invocationNum",
    "file_path",
    "event",
    "input",
    "output",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,40}",
        Just("viking://user/memories/profile.md".to_owned()),
        Just("../../../../etc/passwd".to_owned()),
        Just("\u{0}\u{202e}<private>x</private>\r\n".to_owned()),
        Just("a".repeat(70_000)),
    ]
}

fn path(fifo: String, dir: String) -> impl Strategy<Value = String> {
    prop_oneof![
        Just(fifo),
        Just(dir),
        Just("/dev/zero".to_owned()),
        Just("/nonexistent/events.jsonl".to_owned()),
        Just(String::new()),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..4).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

/// A payload: an object of harness keys (transcript keys naming a hostile path), or raw
/// bytes, or JSON that is not an object.
fn payload(fifo: String, dir: String) -> impl Strategy<Value = Vec<u8>> {
    let object = (
        prop::collection::vec((prop::sample::select(KEYS), value()), 0..12),
        path(fifo, dir),
    )
        .prop_map(|(kv, p)| {
            let mut m: Map<String, Value> =
                kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            for k in ["transcript_path", "transcriptPath", "agent_transcript_path"] {
                m.insert(k.to_owned(), Value::String(p.clone()));
            }
            serde_json::to_vec(&Value::Object(m)).unwrap_or_default()
        });
    prop_oneof![
        4 => object,
        1 => prop::collection::vec(any::<u8>(), 0..256),
        1 => value().prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
    ]
}

fn json_or_nothing(what: &str, out: Option<String>, max_bytes: Option<usize>) {
    let Some(line) = out else { return };
    if let Some(max) = max_bytes {
        assert!(line.len() < max, "{what}: {} bytes, cap {max}", line.len());
    }
    let parsed: Result<Value, _> = serde_json::from_str(line.trim_end());
    assert!(parsed.is_ok(), "{what}: not one JSON document: {line:?}");
}

/// A FIFO no one writes and a directory, made once for every case.
fn places() -> &'static (tempfile::TempDir, String, String) {
    static PLACES: std::sync::OnceLock<(tempfile::TempDir, String, String)> =
        std::sync::OnceLock::new();
    PLACES.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("tmp");
        let fifo = tmp.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let (fifo, dir) = (fifo.display().to_string(), tmp.path().display().to_string());
        (tmp, fifo, dir)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_harness_parses_and_answers_any_payload(
        raw in payload(places().1.clone(), places().2.clone()),
        truncated in any::<bool>(),
        reason in text(),
        cap in prop_oneof![Just(1024usize), Just(32_768usize), 1usize..4096],
    ) {
        for h in ALL {
            // Returns: never a panic, never a block on a path the payload named.
            let _ = h.parse(&raw, truncated);
            let what = format!("{} {:?}", h.name(), String::from_utf8_lossy(&raw));
            for event in HookEvent::ALL {
                json_or_nothing(&what, h.context_output(event, &reason, cap), Some(cap));
                json_or_nothing(&what, h.pass_output(event), None);
            }
            json_or_nothing(&what, h.deny_output(&reason, cap), Some(cap));
        }
    }
}
