//! Qwen Code: Claude Code's hook protocol with Qwen's turn ids and tool names.
//!
//! The payloads carry everything capture needs (prompt, whole answer, `prompt_id`), so no
//! transcript is read; output is Claude Code's (`hookSpecificOutput`).
pub mod install_target;
pub mod wire;

use std::path::Path;

use ov_engine::delivery::TranscriptSource;

use super::claude_code::output;
use super::{Harness, HookEvent, HookInput};

/// Alibaba's Qwen Code CLI.
pub struct Qwen;

impl Harness for Qwen {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn remote_session_id(&self, native: &str) -> String {
        ov_engine::ids::remote_session_id("qw-", native)
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

    fn output_cap(&self, _home: &Path) -> Option<usize> {
        Some(output::MAX_CONTEXT_CHARS)
    }

    fn transcript(
        &self,
        _home: &Path,
        _session_id: &str,
        _cwd: Option<&str>,
    ) -> Option<Box<dyn TranscriptSource>> {
        None
    }
}
