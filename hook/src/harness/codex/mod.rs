//! Codex CLI: Claude Code's hook protocol with Codex's `turn_id`.
//!
//! The payloads carry everything capture needs (prompt, answer, `turn_id`), so no
//! transcript is read; output is Claude Code's (`hookSpecificOutput`).
pub mod install_target;
pub mod trust;
pub mod wire;

use super::payload_only::PayloadOnly;
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
};
