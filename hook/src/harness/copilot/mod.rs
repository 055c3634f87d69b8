//! GitHub Copilot CLI: camelCase hook payloads, hook output, the session's events file.
//!
//! Copilot's payloads name no turn and carry no answer. A turn is its user message in
//! `events.jsonl` (key: the message's `messageId`), and so are its prompt and answer:
//!
//! | hook | turn | journaled |
//! |---|---|---|
//! | userPromptSubmitted | none yet (the user message is written after the hook) | no prompt: it is used for recall only, the transcript's is captured |
//! | agentStop | the transcript's last user message ([`latest_prompt_id`]), read from the tail of `transcriptPath` | the Stop of that turn |
//!
//! Copilot writes `events.jsonl` in batches: under load `agentStop` and `sessionEnd` run
//! before the file holds their turn, and the last user message is the turn before. The book
//! then ends the running prompt turn all the same (a Stop naming a stopped turn while a later
//! wordless prompt turn runs), and the Stop's and SessionEnd's workers wait once, bounded,
//! for the file to show that turn ([`ov_engine::delivery::TRANSCRIPT_LAG_WAIT`]).
//!
//! A turn whose model calls all failed gets no agentStop: its prompt is captured alone,
//! marked, once a later turn (or a drain) reads the transcript past it.
pub mod install_target;
pub mod output;
pub mod transcript;
pub mod wire;

use std::path::Path;

use ov_engine::transcript::copilot::latest_prompt_id;
use ov_engine::turnbook::AnswerPrecedence;

use super::{Harness, HarnessCap, HookEvent, HookInput, TranscriptFile};
use crate::doctor::presence::Presence;
use crate::install::target::InstallTarget;

/// GitHub's Copilot CLI.
pub struct Copilot;

impl Harness for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn install_target(&self) -> &'static dyn InstallTarget {
        &install_target::COPILOT
    }

    fn presence(&self) -> Presence {
        Presence {
            binaries: &["copilot"],
            config_dir: transcript::state_dir,
        }
    }

    fn remote_session_id(&self, native: &str) -> String {
        ov_engine::ids::remote_session_id("gh-", native)
    }

    fn parse(&self, raw: &[u8], truncated: bool) -> HookInput {
        let mut input = wire::parse(raw, truncated);
        if input.turn_id.is_none() {
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
        _cwd: Option<&str>,
        named: Option<&Path>,
    ) -> Option<TranscriptFile> {
        Some(TranscriptFile::at(
            named.map_or_else(|| transcript::locate(home, session_id), Path::to_owned),
            |path, resume, _| ov_engine::transcript::copilot::read_chunk(path, resume),
        ))
    }

    fn names_transcript(&self, event: HookEvent) -> bool {
        event == HookEvent::Stop
    }

    fn answer_precedence(&self) -> AnswerPrecedence {
        AnswerPrecedence::TranscriptFirst
    }
}
