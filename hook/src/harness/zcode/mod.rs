//! ZCode: hook payloads, hook output, `~/.zcode/cli/config.json`.
pub mod config_file;
pub mod output;
pub mod rollout_source;
pub mod wire;

use std::path::Path;

use ov_engine::delivery::TranscriptSource;

use super::{Harness, HookEvent, HookInput};

/// ZCode (Z.ai's CLI agent).
pub struct ZCode;

impl Harness for ZCode {
    fn name(&self) -> &'static str {
        "zcode"
    }

    fn remote_session_id(&self, native: &str) -> String {
        ov_engine::ids::remote_session_id("zc-", native)
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

    fn transcript(&self, home: &Path, session_id: &str) -> Option<Box<dyn TranscriptSource>> {
        Some(Box::new(rollout_source::ZcodeRollout::new(
            ov_engine::paths::zcode_rollout(home, session_id),
        )))
    }
}
