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

use super::payload_only::{OwnDoctor, PayloadOnly};
use crate::doctor::agents;
use crate::doctor::presence::Presence;

/// OpenAI's Codex CLI.
pub const CODEX: PayloadOnly = PayloadOnly {
    name: "codex",
    remote_prefix: "cx-",
    parse: wire::parse,
    install: &install_target::CODEX,
    presence: Presence {
        binaries: &["codex"],
        config_dir: install_target::codex_home,
    },
    doctor: Some(OwnDoctor {
        installed: |home| {
            agents::holds_ours(&install_target::CODEX, home) || !plugin::installed(home).is_empty()
        },
        checks: doctor::checks,
    }),
};
