//! Cursor's hook payloads, exactly as Cursor sends them (snake_case; the fields Cursor
//! documents for its agent hooks, `docs/agents.md`).
//!
//! | field | events | feeds |
//! |---|---|---|
//! | `conversation_id` (stable across the conversation's turns; `sessionStart` also sends it as `session_id`) | all | [`HookInput::session_id`] |
//! | `generation_id` (new with every user message) | all | [`HookInput::turn_id`] |
//! | `cwd`, else the first of `workspace_roots` | all (`cwd` on tool events only) | [`HookInput::cwd`] |
//! | `transcript_path` (null when transcripts are off) | all | [`HookInput::transcript_path`] |
//! | `prompt` | beforeSubmitPrompt | [`HookInput::prompt`] |
//! | — | stop carries no answer: `status` and `loop_count` only | [`HookInput::response_text`] is the transcript's last assistant text ([`super::transcript::last_answer`]) |
//! | `file_path` | beforeReadFile: the guard sees it as `Read` of `{"file_path": …}` (the file's `content`, also sent, is never kept) | [`HookInput::tool_name`], [`HookInput::tool_input`] |
//! | `hook_event_name` (camelCase: `beforeSubmitPrompt`, …) | all | which of the rows above apply; never [`HookInput::event_name`], which names our events |
//!
//! Nothing here fails: a bad payload gives a [`HookInput`] with `malformed` set and
//! whatever fields could be read.

use std::path::Path;

use serde_json::{json, Value};

use crate::harness::input::{decode, string_field, Decoded};
use crate::harness::HookInput;

/// Keys whose number value is used as text.
const ID_KEYS: &[&str] = &["conversation_id", "session_id", "generation_id"];

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
    let mut s = |keys: &[&str]| string_field(&obj, keys, ID_KEYS, &mut problems);
    input.session_id = s(&["conversation_id", "session_id"]);
    input.turn_id = s(&["generation_id"]);
    input.cwd = s(&["cwd"]).or_else(|| {
        obj.get("workspace_roots")
            .and_then(Value::as_array)
            .and_then(|roots| {
                roots
                    .iter()
                    .filter_map(Value::as_str)
                    .find(|r| !r.is_empty())
            })
            .map(str::to_owned)
    });
    input.transcript_path = s(&["transcript_path"]);
    let event = s(&["hook_event_name"]);
    match event.as_deref() {
        Some("beforeSubmitPrompt") => input.prompt = s(&["prompt"]),
        Some("beforeReadFile") => {
            input.tool_name = Some("Read".into());
            input.tool_input = s(&["file_path"]).map(|p| json!({ "file_path": p }));
        }
        Some("preCompact") => input.trigger = s(&["trigger"]),
        Some("stop") => {
            input.response_text = input
                .transcript_path
                .as_deref()
                .and_then(|p| super::transcript::last_answer(Path::new(p)));
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

    /// Payloads of Cursor's documented shapes (`testdata/agents/cursor/README.md`).
    const RECORDED: &str = include_str!("../../../../testdata/agents/cursor/hooks.jsonl");

    fn recorded(event: &str) -> Vec<HookInput> {
        crate::harness::input::recorded_payloads(RECORDED, event, parse)
    }

    #[test]
    fn recorded_payloads_name_conversation_generation_and_folder() {
        let prompts = recorded("beforeSubmitPrompt");
        assert_eq!(prompts.len(), 3);
        for i in &prompts {
            assert!(i.malformed.is_none(), "{i:?}");
            assert_eq!(
                i.session_id.as_deref(),
                Some("7c0f3d2e-5b1a-4a9e-9c44-2f6d1e8b0a11")
            );
            assert!(i.turn_id.is_some());
            assert_eq!(i.cwd.as_deref(), Some("/home/dev/project"));
            assert!(i.tool_name.is_none() && i.response_text.is_none());
        }
        let ids: std::collections::BTreeSet<_> =
            prompts.iter().filter_map(|i| i.turn_id.clone()).collect();
        assert_eq!(ids.len(), 3, "every user message is a new generation");
        let words: Vec<_> = prompts.iter().filter_map(|i| i.prompt.clone()).collect();
        assert_eq!(words[1], words[2], "the same short prompt twice");
        let start = &recorded("sessionStart")[0];
        assert_eq!(start.session_id, prompts[0].session_id);
    }

    #[test]
    fn a_file_read_reaches_the_guard_as_read_without_the_files_content() {
        let reads = recorded("beforeReadFile");
        assert_eq!(reads.len(), 2);
        for r in &reads {
            assert_eq!(r.tool_name.as_deref(), Some("Read"));
            let input = r.tool_input.as_ref().expect("input");
            assert_eq!(input.as_object().map(|o| o.len()), Some(1), "{input}");
        }
        assert_eq!(
            reads[1].tool_input.as_ref().expect("input")["file_path"],
            "viking://user/memories/profile.md"
        );
    }

    #[test]
    fn pre_compact_names_its_trigger_and_the_running_generation() {
        let compactions = recorded("preCompact");
        assert_eq!(compactions.len(), 1);
        let c = &compactions[0];
        assert!(c.malformed.is_none(), "{c:?}");
        assert_eq!(c.trigger.as_deref(), Some("auto"));
        let last_prompt = recorded("beforeSubmitPrompt").pop().expect("prompt");
        assert_eq!(c.turn_id, last_prompt.turn_id, "it fires inside the last turn");
        assert!(c.prompt.is_none() && c.response_text.is_none());
    }

    #[test]
    fn stop_reads_the_answer_from_the_transcript_and_tolerates_none() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("t.jsonl");
        std::fs::write(
            &path,
            include_str!("../../../../testdata/agents/cursor/transcript.jsonl"),
        )
        .expect("write");
        let stop = json!({"conversation_id": "c", "generation_id": "g", "hook_event_name": "stop",
                          "status": "completed", "loop_count": 0,
                          "transcript_path": path.display().to_string()});
        let got = parse(stop.to_string().as_bytes(), false);
        assert_eq!(got.response_text.as_deref(), Some("Yes: you prefer tabs."));
        let no_transcript = json!({"conversation_id": "c", "hook_event_name": "stop",
                                   "transcript_path": null});
        let got = parse(no_transcript.to_string().as_bytes(), false);
        assert!(
            got.response_text.is_none() && got.malformed.is_none(),
            "{got:?}"
        );
        let bad = parse(b"{\"conversation_id\": 7, \"generation_id\": [1]}", false);
        assert_eq!(bad.session_id.as_deref(), Some("7"));
        assert!(bad.malformed.is_some());
    }
}
