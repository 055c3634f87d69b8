//! Agents that speak Claude Code's hook protocol and whose payloads carry everything a turn
//! needs (prompt, whole answer, turn id): no transcript is read, and output is Claude
//! Code's (`hookSpecificOutput`, fitted under its context limit). They differ only in
//! their name, their remote-session prefix and their payload's field names.

use std::path::Path;

use super::claude_code::output;
use super::{Harness, HarnessCap, HookEvent, HookInput, TranscriptFile};
use crate::doctor::presence::Presence;
use crate::doctor::{agents, Check, DoctorContext};
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
    /// Its own doctor, for an agent that runs ovhook from more than its configuration files
    /// (Codex's plugin); `None`: the checks every agent gets.
    pub doctor: Option<OwnDoctor>,
}

/// The doctor of an agent that runs ovhook from more than its configuration files.
#[derive(Debug, Clone, Copy)]
pub struct OwnDoctor {
    /// Whether the agent runs ovhook for the user at `home` (a config file or the plugin).
    pub installed: fn(&Path) -> bool,
    /// Its doctor lines.
    pub checks: fn(&Path) -> Vec<Check>,
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

    fn installed(&self, home: &Path) -> bool {
        match self.doctor {
            Some(own) => (own.installed)(home),
            None => agents::holds_ours(self.install, home),
        }
    }

    fn doctor_checks(&self, ctx: &DoctorContext<'_>) -> Vec<Check> {
        match self.doctor {
            Some(own) => (own.checks)(ctx.home),
            None => agents::report(self.install, ctx.home),
        }
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
