//! Codex CLI: Claude Code's hook protocol with Codex's `turn_id`.
//!
//! The payloads carry everything capture needs (prompt, answer, `turn_id`), so no
//! transcript is read; output is Claude Code's (`hookSpecificOutput`). Codex runs our hooks
//! from `~/.codex/hooks.json` or from the ovhook Codex plugin ([`plugin`]), either only once the
//! user trusts them ([`trust`]); the doctor checks both ([`doctor`]).
pub mod doctor;
pub mod install_target;
pub mod plugin;
pub mod trust;
pub mod wire;

use std::path::Path;

use super::payload_only::PayloadOnly;
use crate::doctor::presence::Presence;
use super::{Harness, HarnessCap, HookEvent, HookInput, TranscriptFile};
use crate::doctor::{Check, DoctorContext};
use crate::install::target::InstallTarget;

/// Everything Codex shares with the other payload-only agents.
const PAYLOAD: PayloadOnly = PayloadOnly {
    name: "codex",
    remote_prefix: "cx-",
    parse: wire::parse,
    install: &install_target::CODEX,
    presence: Presence {
        binaries: &["codex"],
        config_dir: install_target::codex_home,
    },
};

/// OpenAI's Codex CLI.
pub const CODEX: Codex = Codex;

/// OpenAI's Codex CLI: a payload-only agent whose doctor also checks the ovhook plugin.
#[derive(Debug)]
pub struct Codex;

impl Harness for Codex {
    fn name(&self) -> &'static str {
        PAYLOAD.name()
    }

    fn remote_session_id(&self, native: &str) -> String {
        PAYLOAD.remote_session_id(native)
    }

    fn parse(&self, raw: &[u8], truncated: bool) -> HookInput {
        PAYLOAD.parse(raw, truncated)
    }

    fn context_output(&self, event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
        PAYLOAD.context_output(event, text, max_bytes)
    }

    fn deny_output(&self, reason: &str, max_bytes: usize) -> Option<String> {
        PAYLOAD.deny_output(reason, max_bytes)
    }

    fn transcript(
        &self,
        home: &Path,
        session_id: &str,
        cwd: Option<&str>,
    ) -> Option<TranscriptFile> {
        PAYLOAD.transcript(home, session_id, cwd)
    }

    fn output_cap(&self, home: &Path) -> Option<HarnessCap> {
        PAYLOAD.output_cap(home)
    }

    fn install_target(&self) -> &'static dyn InstallTarget {
        PAYLOAD.install_target()
    }

    fn presence(&self) -> Presence {
        PAYLOAD.presence()
    }

    fn installed(&self, home: &Path) -> bool {
        PAYLOAD.installed(home) || !plugin::installed(home).is_empty()
    }

    fn doctor_checks(&self, ctx: &DoctorContext<'_>) -> Vec<Check> {
        doctor::checks(ctx.home)
    }
}
