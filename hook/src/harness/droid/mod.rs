//! Factory Droid (`droid`): Claude Code's hook protocol in `~/.factory/settings.json`, with
//! the turn named by its user message's id and the answer read from its transcript.
//!
//! Built from payloads and transcripts recorded from the real Droid 0.215.0 CLI
//! (`testdata/agents/droid/`); untested against the real CLI here, which continues sessions
//! only through its vendor's servers or its TUI.
//!
//! | Droid hook (our event) | turn | journaled | output |
//! |---|---|---|---|
//! | SessionStart | — | the session | profile, Claude Code's `hookSpecificOutput.additionalContext` |
//! | UserPromptSubmit | `message_id` (the user message's id) | the prompt | recall, as Claude Code's |
//! | PreToolUse (`Read`, `LS`, `Grep`, `Glob`, `Execute`) | the running turn | the guard's decision | deny a `viking://` path, as Claude Code's |
//! | Stop | the last real user message before the final assistant message Stop's `message_id` names | the answer: that message's text, from `transcript_path` | nothing |
//! | SessionEnd (may fire twice at exit) | — | the session's end | nothing |

pub mod install_target;
pub mod transcript;
pub mod wire;

use std::path::Path;

use super::claude_code::output;
use super::{Harness, HarnessCap, HookEvent, HookInput, TranscriptFile};
use crate::doctor::presence::Presence;
use crate::install::target::InstallTarget;

/// Factory Droid.
pub struct Droid;

impl Harness for Droid {
    fn name(&self) -> &'static str {
        "droid"
    }

    fn remote_session_id(&self, native: &str) -> String {
        ov_engine::ids::remote_session_id("dr-", native)
    }

    fn install_target(&self) -> &'static dyn InstallTarget {
        &install_target::DROID
    }

    fn presence(&self) -> Presence {
        Presence {
            binaries: &["droid"],
            config_dir: install_target::factory_dir,
        }
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

    /// None: Stop's payload names the transcript, read at hook time.
    fn transcript(
        &self,
        _home: &Path,
        _session_id: &str,
        _cwd: Option<&str>,
        _named: Option<&Path>,
    ) -> Option<TranscriptFile> {
        None
    }
}
