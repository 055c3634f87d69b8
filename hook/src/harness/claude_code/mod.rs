//! Claude Code: hook payloads, hook output, the session transcript.
pub mod doctor;
pub mod install_target;
pub mod output;
pub mod plugin;
pub mod transcript;
pub mod wire;

use std::path::Path;

use ov_engine::turnbook::AnswerPrecedence;

use super::{Harness, HarnessCap, HookEvent, HookInput, TranscriptFile};
use crate::doctor::presence::Presence;
use crate::doctor::{Check, DoctorContext};
use crate::install::target::InstallTarget;

/// Anthropic's Claude Code CLI.
pub struct ClaudeCode;

impl Harness for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn install_target(&self) -> &'static dyn InstallTarget {
        &install_target::CLAUDE_CODE
    }

    fn presence(&self) -> Presence {
        Presence {
            binaries: &["claude"],
            config_dir: transcript::config_dir,
        }
    }

    /// Hooks in its user settings, or the ovhook plugin.
    fn installed(&self, home: &Path) -> bool {
        doctor::installed(home)
    }

    fn doctor_checks(&self, ctx: &DoctorContext<'_>) -> Vec<Check> {
        doctor::checks(ctx.home, false)
    }

    fn remote_session_id(&self, native: &str) -> String {
        ov_engine::ids::remote_session_id("cc-", native)
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
        let read = ov_engine::transcript::claude_code::read_chunk;
        Some(match named {
            Some(path) => TranscriptFile::at(path.to_owned(), read),
            None => TranscriptFile::found(
                |home, session_id, cwd| Some(transcript::locate(home, session_id, cwd)),
                home,
                session_id,
                cwd,
                read,
            ),
        })
    }

    fn names_transcript(&self, event: HookEvent) -> bool {
        matches!(event, HookEvent::SessionStart | HookEvent::Stop)
    }

    fn answer_precedence(&self) -> AnswerPrecedence {
        // `last_assistant_message` is only the answer's last text block.
        AnswerPrecedence::TranscriptFirst
    }
}
