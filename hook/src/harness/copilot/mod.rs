//! GitHub Copilot CLI: camelCase hook payloads, hook output, the session's events file.
//!
//! Copilot's payloads name no turn and carry no answer: every turn (key: its user
//! message's id), prompt and answer comes from `events.jsonl`; a userPromptSubmitted
//! prompt is paired with its transcript turn by its words (see the turn book).
pub mod output;
pub mod transcript_source;
pub mod wire;

use std::path::Path;

use ov_engine::delivery::TranscriptSource;
use ov_engine::turnbook::AnswerPrecedence;

use super::{Harness, HookEvent, HookInput};

/// GitHub's Copilot CLI.
pub struct Copilot;

impl Harness for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn remote_session_id(&self, native: &str) -> String {
        ov_engine::ids::remote_session_id("gh-", native)
    }

    fn parse(&self, raw: &[u8], truncated: bool) -> HookInput {
        wire::parse(raw, truncated)
    }

    fn context_output(&self, event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
        output::context(event, text, max_bytes)
    }

    fn deny_output(&self, reason: &str, max_bytes: usize) -> Option<String> {
        output::deny(reason, max_bytes)
    }

    fn output_cap(&self, _home: &Path) -> Option<usize> {
        Some(output::MAX_CONTEXT_CHARS)
    }

    fn transcript(
        &self,
        home: &Path,
        session_id: &str,
        _cwd: Option<&str>,
    ) -> Option<Box<dyn TranscriptSource>> {
        Some(Box::new(transcript_source::CopilotEvents::new(
            transcript_source::locate(home, session_id),
        )))
    }

    fn answer_precedence(&self) -> AnswerPrecedence {
        AnswerPrecedence::TranscriptFirst
    }
}
