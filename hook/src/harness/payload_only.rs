//! Agents that speak Claude Code's hook protocol and whose payloads carry everything a turn
//! needs (prompt, whole answer, turn id): no transcript is read, and output is Claude
//! Code's (`hookSpecificOutput`, fitted under its context limit). They differ only in
//! their name, their remote-session prefix and their payload's field names.

use std::path::Path;

use super::claude_code::output;
use super::{Harness, HarnessCap, HookEvent, HookInput, TranscriptFile};
use crate::doctor::presence::Presence;
use crate::install::target::InstallTarget;

/// One such agent.
pub struct PayloadOnly {
    /// Installed and journaled name.
    pub name: &'static str,
    /// Prefix of its OpenViking sessions (`cx-`, `qw-`).
    pub remote_prefix: &'static str,
    /// Its payload parser (its `wire::parse`).
    pub parse: fn(&[u8], bool) -> HookInput,
    /// Where it is installed (its `install_target`).
    pub install: &'static dyn InstallTarget,
    /// How to tell it is on this machine.
    pub presence: Presence,
}

impl Harness for PayloadOnly {
    fn name(&self) -> &'static str {
        self.name
    }

    fn install_target(&self) -> &'static dyn InstallTarget {
        self.install
    }

    fn presence(&self) -> Presence {
        self.presence
    }

    fn remote_session_id(&self, native: &str) -> String {
        ov_engine::ids::remote_session_id(self.remote_prefix, native)
    }

    fn parse(&self, raw: &[u8], truncated: bool) -> HookInput {
        (self.parse)(raw, truncated)
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
        _home: &Path,
        _session_id: &str,
        _cwd: Option<&str>,
        _named: Option<&Path>,
    ) -> Option<TranscriptFile> {
        None
    }
}
