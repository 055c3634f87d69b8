//! Droid's hook payloads, exactly as Droid 0.215.0 sends them (snake_case, Claude Code's
//! shape; recorded shapes in `testdata/agents/droid/README.md`).
//!
//! | field | events | feeds |
//! |---|---|---|
//! | `session_id` | all | [`HookInput::session_id`] |
//! | `cwd`, `transcript_path` | all | [`HookInput::cwd`], [`HookInput::transcript_path`] |
//! | `hook_event_name` (Claude Code's names) | all | [`HookInput::event_name`], and which of the rows below apply |
//! | `source` | SessionStart (`startup`) | [`HookInput::source`] |
//! | `prompt` | UserPromptSubmit | [`HookInput::prompt`] |
//! | `message_id` | UserPromptSubmit: the user message's id | [`HookInput::turn_id`] |
//! | `message_id` | Stop: the id of the turn's final assistant message (Stop has no `last_assistant_message`) | [`HookInput::response_text`] and [`HookInput::turn_id`], read from the transcript ([`super::transcript::stop_turn`]) |
//! | `tool_execution_count` | Stop | [`HookInput::tool_call_count`] |
//! | `tool_name`, `tool_input` | PreToolUse, PostToolUse: `Read`, `Grep`, `Glob` as sent; `LS` → `Glob`, `Execute` → `Bash` (the guard's names) | [`HookInput::tool_name`], [`HookInput::tool_input`] |
//! | `tool_response`, `tool_use_id` | PostToolUse | [`HookInput::tool_output`], [`HookInput::tool_call_id`] |
//!
//! Tool payloads name no turn: their hooks belong to the session's running turn.
//! `permission_mode`, `has_images`, `stop_hook_active`, `elapsed_time`, SessionEnd's `reason`,
//! `session_duration_ms` and `message_count` are not used.
//!
//! Nothing here fails: a bad payload gives a [`HookInput`] with `malformed` set and
//! whatever fields could be read.

use std::path::Path;

use serde_json::Value;

use crate::harness::input::{decode, string_field, Decoded};
use crate::harness::HookInput;

/// Keys whose number value is used as text.
const ID_KEYS: &[&str] = &["session_id", "message_id", "tool_use_id"];

/// Droid's tool names, and the names the guard knows them by.
const TOOLS: &[(&str, &str)] = &[("LS", "Glob"), ("Execute", "Bash")];

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
    let mut s = |key: &str| string_field(&obj, &[key], ID_KEYS, &mut problems);
    input.session_id = s("session_id");
    input.cwd = s("cwd");
    input.transcript_path = s("transcript_path");
    input.event_name = s("hook_event_name");
    match input.event_name.as_deref() {
        Some("SessionStart") => input.source = s("source"),
        Some("UserPromptSubmit") => {
            input.prompt = s("prompt");
            input.turn_id = s("message_id");
        }
        Some("PreToolUse" | "PostToolUse") => {
            input.tool_name = s("tool_name").map(|native| {
                TOOLS
                    .iter()
                    .find(|(name, _)| *name == native)
                    .map_or(native, |(_, ours)| (*ours).to_owned())
            });
            input.tool_call_id = s("tool_use_id");
            // Taken, not copied: a Create's input holds a whole file.
            input.tool_input = obj.remove("tool_input").filter(|v| !v.is_null());
            input.tool_output = obj.remove("tool_response").filter(|v| !v.is_null());
        }
        Some("Stop") => {
            let final_message = s("message_id");
            input.tool_call_count = obj.get("tool_execution_count").and_then(Value::as_u64);
            let turn = input
                .transcript_path
                .as_deref()
                .zip(final_message.as_deref())
                .and_then(|(path, id)| super::transcript::stop_turn(Path::new(path), id));
            if let Some(turn) = turn {
                input.turn_id = turn.turn_id;
                input.response_text = turn.answer;
            }
        }
        _ => {}
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
    use serde_json::json;

    /// Payloads of Droid's recorded shapes (`testdata/agents/droid/README.md`).
    const RECORDED: &str = include_str!("../../../../testdata/agents/droid/hooks.jsonl");

    /// The recorded payloads of `event`, their `transcript_path` pointing at the recorded
    /// transcript (copied into `dir`).
    fn recorded(event: &str, dir: &Path) -> Vec<HookInput> {
        let transcript = dir.join("t.jsonl");
        std::fs::write(
            &transcript,
            include_str!("../../../../testdata/agents/droid/transcript.jsonl"),
        )
        .expect("write");
        let here = transcript.display().to_string();
        let text: String = RECORDED
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).expect("json");
                v["payload"]["transcript_path"] = json!(here);
                format!("{v}\n")
            })
            .collect();
        crate::harness::input::recorded_payloads(&text, event, parse)
    }

    #[test]
    fn prompts_name_their_turn_by_the_user_messages_id() {
        let dir = tempfile::tempdir().expect("tmp");
        let prompts = recorded("UserPromptSubmit", dir.path());
        assert_eq!(prompts.len(), 3);
        for i in &prompts {
            assert!(i.malformed.is_none(), "{i:?}");
            assert_eq!(
                i.session_id.as_deref(),
                Some("5e2b7c1a-3d4f-4e8a-9b6c-0a1b2c3d4e5f")
            );
            assert_eq!(i.cwd.as_deref(), Some("/home/dev/project"));
            assert_eq!(i.event_name.as_deref(), Some("UserPromptSubmit"));
            assert!(i.tool_name.is_none() && i.response_text.is_none());
        }
        let ids: Vec<_> = prompts.iter().filter_map(|i| i.turn_id.clone()).collect();
        assert_eq!(ids, ["msg-u-0001", "msg-u-0002", "msg-u-0004"]);
        assert_eq!(prompts[1].prompt, prompts[2].prompt, "the same prompt twice");
        let start = &recorded("SessionStart", dir.path())[0];
        assert_eq!(start.source.as_deref(), Some("startup"));
        assert!(start.turn_id.is_none());
    }

    #[test]
    fn stop_reads_its_turn_and_answer_from_the_transcript() {
        let dir = tempfile::tempdir().expect("tmp");
        let prompts = recorded("UserPromptSubmit", dir.path());
        let stops = recorded("Stop", dir.path());
        assert_eq!(stops.len(), 3);
        let answers: Vec<_> = stops
            .iter()
            .map(|s| s.response_text.as_deref().unwrap_or("-"))
            .collect();
        assert_eq!(
            answers,
            ["You prefer tabs, width 4.", "Yes: you prefer tabs.", "Still tabs."]
        );
        for (stop, prompt) in stops.iter().zip(&prompts) {
            assert!(stop.malformed.is_none(), "{stop:?}");
            assert_eq!(stop.turn_id, prompt.turn_id, "Stop closes its prompt's turn");
        }
        assert_eq!(stops[0].tool_call_count, Some(1));
        // No transcript, or none at the path: the Stop still parses, without a turn.
        for path in [Value::Null, json!("/nonexistent/t.jsonl")] {
            let p = json!({"session_id": "s", "hook_event_name": "Stop",
                           "message_id": "msg-a-0004", "transcript_path": path});
            let got = parse(p.to_string().as_bytes(), false);
            assert!(got.malformed.is_none(), "{got:?}");
            assert!(got.turn_id.is_none() && got.response_text.is_none());
        }
    }

    #[test]
    fn tools_reach_the_guard_by_its_names() {
        let dir = tempfile::tempdir().expect("tmp");
        let reads = recorded("PreToolUse", dir.path());
        assert_eq!(reads.len(), 2);
        for r in &reads {
            assert_eq!(r.tool_name.as_deref(), Some("Read"));
            assert!(r.turn_id.is_none(), "tool payloads name no turn");
        }
        assert_eq!(
            reads[1].tool_input.as_ref().expect("input")["file_path"],
            "viking://user/memories/profile.md"
        );
        let post = &recorded("PostToolUse", dir.path())[0];
        assert!(post.tool_output.is_some());
        for (native, ours) in [("LS", "Glob"), ("Execute", "Bash"), ("Grep", "Grep")] {
            let p = json!({"hook_event_name": "PreToolUse", "tool_name": native});
            let got = parse(p.to_string().as_bytes(), false);
            assert_eq!(got.tool_name.as_deref(), Some(ours));
        }
    }

    #[test]
    fn session_end_fires_twice_and_bad_payloads_are_malformed() {
        let dir = tempfile::tempdir().expect("tmp");
        let ends = recorded("SessionEnd", dir.path());
        assert_eq!(ends.len(), 2);
        assert!(ends.iter().all(|e| e.malformed.is_none()
            && e.session_id == ends[0].session_id
            && e.turn_id.is_none()));
        let bad = parse(b"{\"session_id\": 7, \"cwd\": [1]}", false);
        assert_eq!(bad.session_id.as_deref(), Some("7"));
        assert!(bad.malformed.is_some());
        assert!(parse(b"not json", false).malformed.is_some());
    }
}
