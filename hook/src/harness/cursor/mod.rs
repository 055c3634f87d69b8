//! Cursor (the IDE's agent and `cursor-agent`): `hooks.json` command hooks with snake_case
//! payloads, its own output fields, the answer read from its transcript.
//!
//! Built from Cursor's published hook reference and OpenViking's Cursor plugin, with
//! recorded fixtures (`testdata/agents/cursor/`); untested against the real app, which does not
//! install here.
//!
//! | Cursor hook (our event) | turn | journaled | output |
//! |---|---|---|---|
//! | sessionStart (SessionStart) | — | the session | profile as `additional_context` |
//! | beforeSubmitPrompt (UserPromptSubmit) | `generation_id` | the prompt | recall as `additional_context`, always `continue: true` |
//! | beforeReadFile (PreToolUse, as `Read`) | `generation_id` | the guard's decision | deny a `viking://` path, else `permission: allow` |
//! | stop (Stop) | `generation_id` | the answer: the transcript's last assistant text | nothing |
//! | preCompact (PreCompact) | `generation_id` | the compaction, with its `trigger` | nothing |
//! | sessionEnd (SessionEnd) | — | the session's end | nothing |
//!
//! Cursor's `preCompact` is observational (it cannot block or inject) and may fire inside a
//! running turn: our PreCompact sends and commits the session's complete turns before it
//! returns and leaves the running turn open, so nothing of the compacted context is lost and
//! no turn is split.

pub mod install_target;
pub mod output;
pub mod transcript;
pub mod wire;

use std::path::Path;

use super::{Harness, HarnessCap, HookEvent, HookInput, TranscriptFile};
use crate::doctor::presence::Presence;
use crate::install::target::InstallTarget;

/// Cursor.
pub struct Cursor;

impl Harness for Cursor {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn remote_session_id(&self, native: &str) -> String {
        ov_engine::ids::remote_session_id("cu-", native)
    }

    fn install_target(&self) -> &'static dyn InstallTarget {
        &install_target::CURSOR
    }

    fn presence(&self) -> Presence {
        Presence {
            binaries: &["cursor-agent"],
            config_dir: install_target::cursor_dir,
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

    fn pass_output(&self, event: HookEvent) -> Option<String> {
        output::pass(event)
    }

    fn output_cap(&self, _home: &Path) -> Option<HarnessCap> {
        Some(HarnessCap::ContextChars(output::MAX_CONTEXT_CHARS))
    }

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
