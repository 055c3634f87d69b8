//! Gemini CLI: snake_case hook payloads (Claude Code's field names, its own event names),
//! its hook output, its session file.
//!
//! Gemini's payloads name no turn, and AfterAgent's `prompt_response` is not the answer. A
//! turn is its user message in the session file (key: the message's `id`, stable across
//! `--resume`), and so are its prompt and answer:
//!
//! | hook (our event) | turn | journaled |
//! |---|---|---|
//! | BeforeAgent (UserPromptSubmit) | none yet (the user message is written after the hook) | no prompt: it is used for recall only, the session file's is captured |
//! | BeforeTool (PreToolUse) | the session file's last user message ([`latest_prompt_id`]) | the guard's decision |
//! | AfterAgent (Stop) | the session file's last user message, read from the tail of `transcript_path` | the Stop of that turn |
//!
//! PreCompress is not installed: Gemini fires it before every main model call, whether or
//! not it compresses, so it marks nothing a drain or commit could use.
pub mod install_target;
pub mod output;
pub mod transcript;
pub mod wire;

use std::path::Path;

use ov_engine::transcript::gemini::latest_prompt_id;
use ov_engine::turnbook::AnswerPrecedence;

use super::transcript_file::Reader;
use super::{Harness, HarnessCap, HookEvent, HookInput, TranscriptFile};
use crate::doctor::presence::Presence;
use crate::install::target::InstallTarget;

/// Google's Gemini CLI.
pub struct Gemini;

impl Harness for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn install_target(&self) -> &'static dyn InstallTarget {
        &install_target::GEMINI
    }

    fn presence(&self) -> Presence {
        Presence {
            binaries: &["gemini"],
            config_dir: transcript::gemini_dir,
        }
    }

    fn remote_session_id(&self, native: &str) -> String {
        ov_engine::ids::remote_session_id("gm-", native)
    }

    fn parse(&self, raw: &[u8], truncated: bool) -> HookInput {
        let mut input = wire::parse(raw, truncated);
        if wire::after_prompt_written(raw) {
            if let Some(path) = &input.transcript_path {
                input.turn_id = latest_prompt_id(Path::new(path)).ok().flatten();
            }
        }
        input
    }

    fn payload_prompt_captured(&self) -> bool {
        false
    }

    fn context_output(&self, event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
        output::context(event, text, max_bytes)
    }

    fn deny_output(&self, reason: &str, max_bytes: usize) -> Option<String> {
        output::deny(reason, max_bytes)
    }

    fn output_cap(&self, _home: &Path) -> Option<HarnessCap> {
        Some(HarnessCap::ContextChars(output::MAX_CONTEXT_CHARS))
    }

    fn transcript(
        &self,
        home: &Path,
        session_id: &str,
        cwd: Option<&str>,
        named: Option<&Path>,
    ) -> Option<TranscriptFile> {
        let read: Reader =
            |path, resume, _| ov_engine::transcript::gemini::read_chunk(path, resume);
        Some(match named {
            Some(path) => TranscriptFile::at(path.to_owned(), read),
            None => TranscriptFile::found(transcript::locate, home, session_id, cwd, read),
        })
    }

    fn names_transcript(&self, event: HookEvent) -> bool {
        event == HookEvent::Stop
    }

    fn answer_precedence(&self) -> AnswerPrecedence {
        AnswerPrecedence::TranscriptFirst
    }
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    const HOOKS: &str = include_str!("../../../../testdata/agents/gemini/hooks.jsonl");
    const SESSION: &str = include_str!("../../../../testdata/agents/gemini/transcript.jsonl");

    /// The recorded payloads of `event`, their `transcript_path` pointing at `path`.
    fn payloads(event: &str, path: &Path) -> Vec<Vec<u8>> {
        HOOKS
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["event"] == event)
            .map(|mut v| {
                v["payload"]["transcript_path"] = path.display().to_string().into();
                v["payload"].to_string().into_bytes()
            })
            .collect()
    }

    #[test]
    fn after_agent_and_before_tool_name_the_files_last_prompt_and_before_agent_none() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("session.jsonl");
        std::fs::write(&path, SESSION).expect("write");
        let last = latest_prompt_id(&path).expect("read").expect("a prompt");
        for event in ["AfterAgent", "BeforeTool"] {
            let raw = payloads(event, &path);
            assert!(!raw.is_empty(), "{event}");
            for r in raw {
                assert_eq!(
                    Gemini.parse(&r, false).turn_id.as_deref(),
                    Some(last.as_str())
                );
            }
        }
        for r in payloads("BeforeAgent", &path) {
            assert_eq!(Gemini.parse(&r, false).turn_id, None);
        }
    }
}
