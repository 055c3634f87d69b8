//! Qwen Code: Claude Code's hook protocol with Qwen's turn ids and tool names.
//!
//! The payloads carry everything capture needs (prompt, whole answer, `prompt_id`), so no
//! transcript is read; output is Claude Code's (`hookSpecificOutput`).
pub mod install_target;
pub mod wire;

use super::payload_only::PayloadOnly;
use crate::doctor::presence::Presence;

/// Alibaba's Qwen Code CLI.
pub const QWEN: PayloadOnly = PayloadOnly {
    name: "qwen",
    remote_prefix: "qw-",
    parse: wire::parse,
    install: &install_target::QWEN,
    presence: Presence {
        binaries: &["qwen"],
        config_dir: |home| home.join(".qwen"),
    },
    doctor: None,
};
