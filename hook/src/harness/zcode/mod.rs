//! ZCode: hook payloads, hook output, `~/.zcode/cli/config.json`.
pub mod config_file;
pub mod doctor;
pub mod install_target;
pub mod installed;
pub mod output;
pub mod placement;
pub mod plugin;
pub mod wire;

use std::path::Path;

use ov_engine::subagent::Subagent;

use super::{Harness, HarnessCap, HookEvent, HookInput, TranscriptFile};
use crate::doctor::presence::Presence;
use crate::doctor::{Check, DoctorContext};
use crate::install::target::InstallTarget;

/// ZCode (Z.ai's CLI agent).
pub struct ZCode;

impl Harness for ZCode {
    fn name(&self) -> &'static str {
        "zcode"
    }

    fn install_target(&self) -> &'static dyn InstallTarget {
        &install_target::ZCODE
    }

    /// ZCode is an app: it is found by its folder.
    fn presence(&self) -> Presence {
        Presence {
            binaries: &[],
            config_dir: |home| home.join(".zcode"),
        }
    }

    /// Entries of ours in the user files, or an enabled ovhook plugin install.
    fn installed(&self, home: &Path) -> bool {
        crate::doctor::agents::holds_ours(self.install_target(), home)
            || installed::plugin_installs(home).iter().any(|p| p.enabled)
    }

    /// The user `config.json` (required unless the workspace, a plugin or another agent runs
    /// ovhook) and where ZCode runs our hooks from in the current folder.
    fn doctor_checks(&self, ctx: &DoctorContext<'_>) -> Vec<Check> {
        doctor::report(ctx)
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

    /// `sess_subagent_<…>` (e.g. `sess_subagent_agent_<uuid>`) and a workflow actor's
    /// `sess_dwf-<…>-actor_<…>`; their payloads do not name the parent.
    fn subagent(&self, _input: &HookInput, session_id: &str) -> Option<Subagent> {
        is_subagent_session(session_id).then(|| Subagent {
            parent: None,
            agent: session_id.to_owned(),
        })
    }

    fn output_cap(&self, home: &Path) -> Option<HarnessCap> {
        // `hooks.maxOutputBytes` in ~/.zcode/cli/config.json; a small regular
        // file (a FIFO or a huge file there is ignored, never waited on).
        let raw = ov_engine::regular_file::read(&home.join(".zcode/cli/config.json"), 4 << 20)
            .ok()
            .flatten()?;
        let v: serde_json::Value = serde_json::from_slice(&raw).ok()?;
        let cap = v.get("hooks")?.get("maxOutputBytes")?.as_u64()?;
        usize::try_from(cap)
            .ok()
            .filter(|c| *c > 0)
            .map(HarnessCap::LineBytes)
    }

    fn transcript(
        &self,
        home: &Path,
        session_id: &str,
        _cwd: Option<&str>,
        _named: Option<&Path>,
    ) -> Option<TranscriptFile> {
        Some(TranscriptFile::at(
            ov_engine::paths::zcode_rollout(home, session_id),
            |path, resume, _| ov_engine::transcript::zcode::read_chunk(path, resume),
        ))
    }
}

/// A ZCode session id of a subagent's own session.
fn is_subagent_session(native: &str) -> bool {
    native.starts_with("sess_subagent_")
        || (native.starts_with("sess_dwf-") && native.contains("-actor_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subagent_sessions() {
        for id in [
            "sess_subagent_agent_0b8e2c44-93c4-4a57-9d0e-6f1f0c2a7b11",
            "sess_subagent_7f3a",
            "sess_dwf-3f1c-actor_reviewer",
        ] {
            assert!(is_subagent_session(id), "{id}");
            let sub = ZCode
                .subagent(&HookInput::default(), id)
                .expect("a subagent");
            assert_eq!((sub.parent, sub.agent.as_str()), (None, id));
        }
        for id in ["sess_0b8e2c44-93c4", "sess_dwf-3f1c", "subagent"] {
            assert!(ZCode.subagent(&HookInput::default(), id).is_none(), "{id}");
        }
    }

    #[test]
    fn output_cap_comes_from_zcode_config() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path();
        assert_eq!(ZCode.output_cap(home), None);
        std::fs::create_dir_all(home.join(".zcode/cli")).expect("mkdir");
        let cfg = home.join(".zcode/cli/config.json");
        std::fs::write(&cfg, r#"{"hooks":{"enabled":true,"maxOutputBytes":1500}}"#).expect("w");
        assert_eq!(ZCode.output_cap(home), Some(HarnessCap::LineBytes(1500)));
        std::fs::write(&cfg, r#"{"hooks":{"maxOutputBytes":0}}"#).expect("w");
        assert_eq!(ZCode.output_cap(home), None);
        std::fs::write(&cfg, "{not json").expect("w");
        assert_eq!(ZCode.output_cap(home), None);
    }
}
