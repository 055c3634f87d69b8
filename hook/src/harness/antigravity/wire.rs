//! Antigravity CLI's (`agy`) hook payloads, exactly as it sends them (camelCase protobuf JSON;
//! see `docs/agents.md`).
//!
//! | field | events | feeds |
//! |---|---|---|
//! | `conversationId` | all | [`HookInput::session_id`] |
//! | first of `workspacePaths` | all | [`HookInput::cwd`] |
//! | `transcriptPath` | all | [`HookInput::transcript_path`]; PreInvocation and Stop read the turn from it ([`super::transcript::last_turn`]) |
//! | `invocationNum` (zero-based, per model call) | PreInvocation | tells PreInvocation: the transcript's last `USER_INPUT` gives [`HookInput::turn_id`] and [`HookInput::prompt`] |
//! | `executionNum`, `terminationReason`, `fullyIdle`, `error` | Stop | tells Stop: the last `USER_INPUT` gives [`HookInput::turn_id`], the last model text after it [`HookInput::response_text`] |
//! | `modelName`, `artifactDirectoryPath` | all | — |
//!
//! The payloads name no event, so the event is told by the keys only it sends (a
//! `hookEventName`, should a build send one, is read first). No event carries the user's or
//! the model's words: both come from the transcript. Nothing here fails: a bad payload gives
//! a [`HookInput`] with `malformed` set and whatever fields could be read.

use std::path::Path;

use serde_json::Value;

use crate::harness::input::{decode, string_field, Decoded};
use crate::harness::HookInput;

/// Keys whose number value is used as text.
const ID_KEYS: &[&str] = &["conversationId"];

/// How much of the transcript's end PreInvocation reads (before every model call): the
/// prompt's record is the latest user step.
const PRE_INVOCATION_TAIL: u64 = 1 << 20;

/// How much Stop reads: the whole last turn, tool results included.
const STOP_TAIL: u64 = 8 << 20;

/// Which event a payload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    PreInvocation,
    Stop,
    Other,
}

fn kind(obj: &serde_json::Map<String, Value>) -> Kind {
    match obj.get("hookEventName").and_then(Value::as_str) {
        Some("PreInvocation") => return Kind::PreInvocation,
        Some("Stop") => return Kind::Stop,
        Some(_) => return Kind::Other,
        None => {}
    }
    if obj.contains_key("invocationNum") {
        Kind::PreInvocation
    } else if ["executionNum", "terminationReason", "fullyIdle"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        Kind::Stop
    } else {
        Kind::Other
    }
}

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
    let Some(obj) = object else {
        input.malformed = Some(problems.join("; "));
        return input;
    };
    input.session_id = string_field(&obj, &["conversationId"], ID_KEYS, &mut problems);
    input.transcript_path = string_field(&obj, &["transcriptPath"], ID_KEYS, &mut problems);
    input.cwd = obj
        .get("workspacePaths")
        .and_then(Value::as_array)
        .and_then(|p| p.iter().filter_map(Value::as_str).find(|p| !p.is_empty()))
        .map(str::to_owned);
    let event = kind(&obj);
    let tail = match event {
        Kind::PreInvocation => PRE_INVOCATION_TAIL,
        Kind::Stop => STOP_TAIL,
        Kind::Other => 0,
    };
    let turn = input
        .transcript_path
        .as_deref()
        .filter(|_| event != Kind::Other)
        .and_then(|p| super::transcript::last_turn(Path::new(p), tail));
    if let Some(t) = turn {
        input.turn_id = Some(t.turn_id);
        if event == Kind::PreInvocation {
            input.prompt = t.prompt;
        } else {
            input.response_text = t.answer;
        }
    }
    if !problems.is_empty() {
        input.malformed = Some(problems.join("; "));
    }
    input
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    /// Payloads of the shapes Antigravity CLI sends (`testdata/agents/antigravity/README.md`).
    const RECORDED: &str = include_str!("../../../../testdata/agents/antigravity/hooks.jsonl");
    const TRANSCRIPT: &str =
        include_str!("../../../../testdata/agents/antigravity/transcript.jsonl");

    /// The recorded payloads of `event`, their `transcriptPath` pointing at `path`.
    fn payloads(event: &str, path: &Path) -> Vec<HookInput> {
        RECORDED
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["event"] == event)
            .map(|mut v| {
                v["payload"]["transcriptPath"] = path.display().to_string().into();
                parse(v["payload"].to_string().as_bytes(), false)
            })
            .collect()
    }

    #[test]
    fn pre_invocation_names_the_prompt_and_stop_the_answer() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("transcript.jsonl");
        std::fs::write(&path, TRANSCRIPT).expect("write");
        let pre = payloads("PreInvocation", &path);
        let stop = payloads("Stop", &path);
        let start = payloads("SessionStart", &path);
        assert!(!pre.is_empty() && !stop.is_empty() && !start.is_empty());
        for i in pre.iter().chain(&stop).chain(&start) {
            assert!(i.malformed.is_none(), "{i:?}");
            assert_eq!(
                i.session_id.as_deref(),
                Some("0b04d3f2-c231-4ee0-8337-076e220bd1ad")
            );
            assert_eq!(i.cwd.as_deref(), Some("/home/dev/project"));
        }
        for i in &pre {
            assert_eq!(i.turn_id.as_deref(), Some("step-0"));
            assert_eq!(i.prompt.as_deref(), Some("remember this"));
            assert!(i.response_text.is_none());
        }
        for i in &stop {
            assert_eq!(i.turn_id.as_deref(), Some("step-0"));
            assert_eq!(i.response_text.as_deref(), Some("done"));
            assert!(i.prompt.is_none());
        }
        for i in &start {
            assert!(i.turn_id.is_none() && i.prompt.is_none() && i.response_text.is_none());
        }
    }

    #[test]
    fn without_a_transcript_nothing_is_guessed() {
        let got = parse(
            br#"{"conversationId":"c","invocationNum":0,"transcriptPath":"/nonexistent/t.jsonl"}"#,
            false,
        );
        assert_eq!(got.session_id.as_deref(), Some("c"));
        assert!(got.turn_id.is_none() && got.prompt.is_none() && got.malformed.is_none());
        let bad = parse(br#"{"conversationId":5,"workspacePaths":"x"}"#, false);
        assert_eq!(bad.session_id.as_deref(), Some("5"));
        assert!(bad.cwd.is_none() && bad.malformed.is_some());
    }
}
