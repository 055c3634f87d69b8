//! Antigravity CLI (`agy`, the successor of Gemini CLI for individual users): camelCase hook
//! payloads that carry no text, injection through `injectSteps`, turns read from its
//! transcript ordered by `step_index`.
//!
//! Built from the hook contract OpenViking's Antigravity integration (its open pull request
//! 4069) and other published integrations document, with recorded fixtures
//! (`testdata/agents/antigravity/`); untested against the real CLI, which is not on npm.
//!
//! | Antigravity hook (our event) | turn | journaled | output |
//! |---|---|---|---|
//! | SessionStart (SessionStart) | — | the session | profile as an `ephemeralMessage` |
//! | PreInvocation, before every model call (UserPromptSubmit) | the transcript's last `USER_INPUT`: `step-<step_index>` | its prompt (a later model call of the same turn is a repeat: no second recall) | recall as an `ephemeralMessage` |
//! | Stop (Stop) | the same | the last model text after the prompt | nothing |
//!
//! Antigravity loads no PreToolUse, PostToolUse or SessionEnd hook: there is no `viking://`
//! guard, and sessions are committed by the Stop worker's threshold, never at their end.

pub mod install_target;
pub mod output;
pub mod transcript;
pub mod wire;

use std::path::Path;

use super::{Harness, HarnessCap, HookEvent, HookInput, TranscriptFile};
use crate::doctor::presence::Presence;
use crate::install::target::InstallTarget;

/// Google's Antigravity CLI.
pub struct Antigravity;

impl Harness for Antigravity {
    fn name(&self) -> &'static str {
        "antigravity"
    }

    fn remote_session_id(&self, native: &str) -> String {
        ov_engine::ids::remote_session_id("ag-", native)
    }

    fn install_target(&self) -> &'static dyn InstallTarget {
        &install_target::ANTIGRAVITY
    }

    fn presence(&self) -> Presence {
        Presence {
            binaries: &["agy"],
            config_dir: |home| home.join(".gemini").join("antigravity-cli"),
        }
    }

    fn parse(&self, raw: &[u8], truncated: bool) -> HookInput {
        wire::parse(raw, truncated)
    }

    fn context_output(&self, event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
        output::context(event, text, max_bytes)
    }

    fn deny_output(&self, _reason: &str, _max_bytes: usize) -> Option<String> {
        None
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
