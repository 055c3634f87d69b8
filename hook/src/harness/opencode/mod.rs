//! OpenCode and Kilo Code (a fork of OpenCode with the same plugin API): no command hooks, so
//! ovhook installs a small JavaScript plugin, the shim ([`SHIM`], `plugin.js`), that runs
//! `ovhook --harness <name> <event>` with the event as JSON on stdin and acts on its output.
//! Every decision stays in this binary; the shim only forwards.
//!
//! | agent event (plugin API) | ovhook event | the shim sends |
//! |---|---|---|
//! | `chat.message`, first of a session in this process | SessionStart | `source` |
//! | `chat.message` | UserPromptSubmit | the user message id (the turn) and its text |
//! | `tool.execute.before` | PreToolUse | tool name and arguments; a deny is thrown |
//! | `event` `session.idle` (Kilo also: `session.drained`) | Stop | the turn's id and the text of its last assistant message (and, in a subagent's session, its prompt) |
//! | `experimental.session.compacting` (before the agent summarises a session) | PreCompact | the session (ovhook sends and commits it before it returns) |
//! | `dispose` (process exit) | Stop of a finished turn whose `session.idle` was missed, then SessionEnd, for each session seen | |
//!
//! Both agents' `run` exits right after `session.idle` and drop async work still pending in
//! an event handler; the shim runs `ovhook` synchronously (`spawnSync`, whose hot paths take
//! milliseconds; Stop hands the send to a detached worker), and `dispose`, which the agents
//! await, runs the last events. The payloads carry the whole turn: no transcript is read
//! (both keep their sessions in SQLite).
pub mod install_target;
pub mod output;
pub mod wire;

use std::path::Path;

use super::{Harness, HarnessCap, HookEvent, HookInput, TranscriptFile};
use crate::doctor::presence::Presence;
use crate::install::target::InstallTarget;

/// The plugin shim, with `__OVHOOK_HARNESS__` standing for the harness's name.
pub const SHIM: &str = include_str!("plugin.js");

/// The shim's text for the agent `name`.
pub fn shim_for(name: &str) -> String {
    SHIM.replace("__OVHOOK_HARNESS__", name)
}

/// One agent of the OpenCode family.
pub struct OpenCodeFamily {
    /// Installed and journaled name.
    pub name: &'static str,
    /// Prefix of its OpenViking sessions.
    pub remote_prefix: &'static str,
    /// Where it is installed.
    pub install: &'static install_target::FamilyTarget,
    /// How to tell it is on this machine.
    pub presence: Presence,
}

/// OpenCode (`opencode-ai`).
pub const OPENCODE: OpenCodeFamily = OpenCodeFamily {
    name: "opencode",
    remote_prefix: "oc-",
    install: &install_target::OPENCODE,
    presence: Presence {
        binaries: &["opencode"],
        config_dir: |home| home.join(".config").join("opencode"),
    },
};

/// Kilo Code CLI (`@kilocode/cli`).
pub const KILO: OpenCodeFamily = OpenCodeFamily {
    name: "kilo",
    remote_prefix: "kc-",
    install: &install_target::KILO,
    presence: Presence {
        binaries: &["kilo", "kilocode"],
        config_dir: |home| home.join(".config").join("kilo"),
    },
};

impl Harness for OpenCodeFamily {
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
        wire::parse(raw, truncated)
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

#[cfg(test)]
mod tests {
    use super::*;
    use ov_engine::subagent::Subagent;

    #[test]
    fn subagent_sessions_are_those_with_a_parent() {
        for h in [&OPENCODE, &KILO] {
            let input = h.parse(br#"{"session_id":"ses_2","parent_id":"ses_1"}"#, false);
            assert_eq!(input.session_id.as_deref(), Some("ses_2"));
            assert_eq!(
                h.subagent(&input, "ses_2"),
                Some(Subagent {
                    parent: Some("ses_1".into()),
                    agent: "ses_2".into()
                })
            );
            let input = h.parse(br#"{"session_id":"ses_1","parent_id":""}"#, false);
            assert_eq!(h.subagent(&input, "ses_1"), None);
        }
    }

    #[test]
    fn the_shim_names_its_agent_and_nothing_is_left_to_fill() {
        for (h, name) in [(&OPENCODE, "opencode"), (&KILO, "kilo")] {
            let shim = shim_for(h.name);
            assert!(
                shim.contains(&format!("const HARNESS = \"{name}\";")),
                "{name}"
            );
            assert!(!shim.contains("__OVHOOK_"));
        }
    }
}
