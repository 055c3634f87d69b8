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
pub mod transcript_source;
pub mod wire;

use std::path::Path;

use ov_engine::delivery::TranscriptSource;
use ov_engine::transcript::gemini::latest_prompt_id;
use ov_engine::turnbook::AnswerPrecedence;

use super::{Harness, HarnessCap, HookEvent, HookInput};

/// Google's Gemini CLI.
pub struct Gemini;

impl Harness for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
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
    ) -> Option<Box<dyn TranscriptSource>> {
        Some(Box::new(transcript_source::GeminiSession::new(
            home, session_id, cwd,
        )))
    }

    fn answer_precedence(&self) -> AnswerPrecedence {
        AnswerPrecedence::TranscriptFirst
    }
}
