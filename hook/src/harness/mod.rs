//! Harness-specific wire formats behind one interface.
//!
//! Each harness (the table below) keeps its payload fields, output rules, transcript reader,
//! install target and doctor checks in its own folder and implements [`Harness`]; the journal,
//! projector, planner, client and outbox never learn which harness fed them (events carry the
//! harness's name as data).
//!
//! [`ALL`] is the only list of harnesses: install, uninstall, doctor, `--harness` and the
//! hooks find every harness through it. The doctor finds the agent on the machine by its
//! [`Harness::presence`] (data in its folder: executable names, configuration folder).
//! Adding a harness is its folder and one line of [`ALL`]; a test fails while a folder under
//! `harness/` has no harness of its name in [`ALL`].
//!
//! # Where each harness lives
//!
//! | harness | wire (payloads) | output | transcript | install target | doctor |
//! |---|---|---|---|---|---|
//! | `zcode` | `zcode/wire.rs` | `zcode/output.rs` | `ov_engine::paths::zcode_rollout`, read by `ov_engine::transcript::zcode` | `zcode/install_target.rs`, `zcode/config_file.rs`, `zcode/installed.rs` | `zcode/doctor.rs`, `zcode/placement.rs` |
//! | `claude-code` | `claude_code/wire.rs` | `claude_code/output.rs` | `claude_code/transcript.rs`, read by `ov_engine::transcript::claude_code` | `claude_code/install_target.rs`, `claude_code/plugin.rs` | `claude_code/doctor.rs` |
//! | `qwen` | `qwen/wire.rs` | Claude Code's | none (payloads carry the turn) | `qwen/install_target.rs` | the default (`doctor/agents.rs`) |
//! | `codex` | `codex/wire.rs` | Claude Code's | none (payloads carry the turn) | `codex/install_target.rs`, `codex/trust.rs` (Codex's hook trust), `codex/plugin.rs` (the ovhook plugin) | `codex/doctor.rs` |
//! | `copilot` | `copilot/wire.rs` | `copilot/output.rs` | `copilot/transcript.rs`, read by `ov_engine::transcript::copilot` | `copilot/install_target.rs` | the default (`doctor/agents.rs`) |
//! | `gemini` | `gemini/wire.rs` | `gemini/output.rs` | `gemini/transcript.rs`, read by `ov_engine::transcript::gemini` | `gemini/install_target.rs` (its entry shape over `install/hook_groups.rs`) | the default (`doctor/agents.rs`) |
//! | `opencode`, `kilo` | `opencode/wire.rs` (what the shim `opencode/plugin.js` sends) | `opencode/output.rs` (what the shim acts on) | none (payloads carry the turn) | `opencode/install_target.rs` (the `plugin` list; the shim beside the binary) | the default (`doctor/agents.rs`) |
//! | `cursor` | `cursor/wire.rs` | `cursor/output.rs` | none: stop's answer is read from the transcript its payload names (`cursor/transcript.rs`) | `cursor/install_target.rs` | the default (`doctor/agents.rs`) |
//! | `antigravity` | `antigravity/wire.rs` | `antigravity/output.rs` | none: PreInvocation and Stop read their turn from the transcript the payload names, ordered by `step_index` (`antigravity/transcript.rs`) | `antigravity/install_target.rs` | the default (`doctor/agents.rs`) |
//! | `droid` | `droid/wire.rs` | Claude Code's | none: Stop's answer is the assistant message its `message_id` names in the transcript `transcript_path` names (`droid/transcript.rs`) | `droid/install_target.rs` (hooks only) | the default (`doctor/agents.rs`) |
//!
//! Shared by several: [`input`] (the flat JSON payload parser and its field tables),
//! [`payload_only`] (a harness whose payloads carry everything: Qwen, Codex), [`context_fit`]
//! (fitting injected text under a cap), [`transcript_file`] (a session's transcript file: the
//! harness says where it is and which engine reader parses it), [`transcript_tail`] (the last
//! whole lines of a transcript, for a harness whose hook reads its turn from the transcript its
//! payload names).

pub mod context_fit;
pub mod input;
pub mod payload_only;
pub mod transcript_file;
pub mod transcript_tail;

use std::path::Path;

use ov_engine::subagent::Subagent;
use ov_engine::turnbook::AnswerPrecedence;

use crate::doctor::presence::Presence;
use crate::doctor::{agents, Check, DoctorContext};
use crate::install::target::InstallTarget;

pub use input::HookInput;
pub use transcript_file::TranscriptFile;

/// What ovhook needs from a harness.
pub trait Harness: Sync {
    /// Stable name, journaled with every hook event (`"zcode"`).
    fn name(&self) -> &'static str;
    /// The OpenViking session id of a native session id.
    fn remote_session_id(&self, native: &str) -> String;
    /// Parses a raw hook payload. Never fails.
    fn parse(&self, raw: &[u8], truncated: bool) -> HookInput;
    /// The output line injecting `text` as context, fitted under `max_bytes`.
    fn context_output(&self, event: HookEvent, text: &str, max_bytes: usize) -> Option<String>;
    /// The output line denying a tool use.
    fn deny_output(&self, reason: &str, max_bytes: usize) -> Option<String>;
    /// The session's transcript file (ZCode: its rollout file; Claude Code: its
    /// session transcript), given the session's last known working directory and the file
    /// a hook's payload last named (journaled when [`Harness::names_transcript`]); `None`
    /// for a harness whose payloads carry the whole turn.
    fn transcript(
        &self,
        home: &Path,
        session_id: &str,
        cwd: Option<&str>,
        named: Option<&Path>,
    ) -> Option<TranscriptFile>;
    /// Whether the transcript path in `event`'s payload names the file
    /// [`Harness::transcript`] reads: the hook then journals it (`Event::TranscriptNamed`),
    /// and workers read that file instead of searching the agent's folders. (ZCode's Stop
    /// names a temporary copy of the last reply, not its rollout; a resumed Gemini
    /// session's SessionStart names a file holding only headers.)
    fn names_transcript(&self, event: HookEvent) -> bool {
        let _ = event;
        false
    }
    /// The subagent whose own session fired this hook (spawned by the agent, not opened by
    /// the user), when it is one: by default, a session whose payload names its parent.
    fn subagent(&self, input: &HookInput, session_id: &str) -> Option<Subagent> {
        input.parent_session_id.as_ref().map(|parent| Subagent {
            parent: Some(parent.clone()),
            agent: session_id.to_owned(),
        })
    }
    /// The harness's own cap on hook output, when it has one (output over it is
    /// dropped or replaced by the harness).
    fn output_cap(&self, home: &Path) -> Option<HarnessCap>;
    /// Which answer wins when the Stop payload and the transcript both have one.
    fn answer_precedence(&self) -> AnswerPrecedence {
        AnswerPrecedence::StopFirst
    }
    /// Whether a UserPromptSubmit payload's prompt is journaled as the turn's prompt.
    /// False for a harness whose prompts name no turn and whose transcript holds them
    /// (Copilot CLI): the prompt then serves recall only, and the transcript's is captured.
    fn payload_prompt_captured(&self) -> bool {
        true
    }
    /// The line a hook prints when it has nothing else to say, for a harness that reads
    /// silence as a failure (Cursor blocks a file read whose hook printed nothing). Printed
    /// on every path without output, a caught panic's included.
    fn pass_output(&self, event: HookEvent) -> Option<String> {
        let _ = event;
        None
    }
    /// Where ovhook is installed into this harness: its configuration files and how our
    /// entries live in them. Its [`InstallTarget::name`] is [`Harness::name`].
    fn install_target(&self) -> &'static dyn InstallTarget;
    /// How to tell the agent is on this machine (its executables, its configuration folder):
    /// the doctor lists every agent it finds.
    fn presence(&self) -> Presence;
    /// Whether this harness runs ovhook for the user at `home` (entries of ours in a user
    /// file of its install target; a harness with its own plugin says so too).
    fn installed(&self, home: &Path) -> bool {
        agents::holds_ours(self.install_target(), home)
    }
    /// The doctor's lines about this harness. The default checks every user file of its
    /// install target that exists (valid, holds our entries, the binary they run is there, the
    /// agent's hook trust); nothing when none exists.
    fn doctor_checks(&self, ctx: &DoctorContext<'_>) -> Vec<Check> {
        agents::report(self.install_target(), ctx.home)
    }
}

/// A harness's own limit on hook output, in the unit the harness counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HarnessCap {
    /// The whole output line, in bytes (ZCode's `hooks.maxOutputBytes`: a longer line is
    /// dropped).
    LineBytes(usize),
    /// The injected context, in characters (Claude Code passes 10,000 to the model and
    /// replaces longer context with a preview).
    ContextChars(usize),
}

/// The harness of hook commands that name none (installs before harnesses were named).
pub const DEFAULT: &dyn Harness = &zcode::ZCode;

/// Declares each harness's folder as a module and lists its harnesses in [`ALL`], in order:
/// one line per folder, `folder => [HARNESS, ...]` (a folder may hold a family, as OpenCode's
/// holds Kilo Code). Adding a harness is its folder and one line here.
macro_rules! harnesses {
    ($($folder:ident => [$($harness:ident),+ $(,)?]),+ $(,)?) => {
        $(pub mod $folder;)+

        /// Every harness, by the name it is installed and journaled under (the first is the
        /// default of hook commands that name none).
        pub const ALL: &[&dyn Harness] = &[$($(&$folder::$harness),+),+];
    };
}

harnesses! {
    zcode => [ZCode],
    claude_code => [ClaudeCode],
    qwen => [QWEN],
    codex => [CODEX],
    copilot => [Copilot],
    gemini => [Gemini],
    opencode => [OPENCODE, KILO],
    cursor => [Cursor],
    antigravity => [Antigravity],
    droid => [Droid],
}

/// The harness named `name` (one of [`names`]), if it is one.
pub fn named(name: &str) -> Option<&'static dyn Harness> {
    ALL.iter().copied().find(|h| h.name() == name)
}

/// The name of every harness, in [`ALL`]'s order (the first is the default).
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|h| h.name()).collect()
}

/// The harness a journaled session came from (by its journaled name); ZCode for
/// journals written before the name was recorded.
pub fn by_name(name: Option<&str>) -> &'static dyn Harness {
    name.and_then(named).unwrap_or(&zcode::ZCode)
}

/// The hook events ovhook answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// `SessionStart`.
    SessionStart,
    /// `UserPromptSubmit`.
    UserPromptSubmit,
    /// `PreToolUse`.
    PreToolUse,
    /// `PostToolUse` (installed for Codex and Qwen Code when `capture.tools` is on).
    PostToolUse,
    /// `Stop`.
    Stop,
    /// `SessionEnd` (Claude Code).
    SessionEnd,
    /// `PreCompact` (Claude Code, Codex; Copilot's `preCompact`; the OpenCode shim's
    /// `experimental.session.compacting`).
    PreCompact,
    /// `SubagentStop` (Claude Code, Codex; Copilot's `subagentStop`).
    SubagentStop,
}

impl HookEvent {
    /// Every hook event, in the order `ovhook --help` lists them.
    pub const ALL: [HookEvent; 8] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
        HookEvent::SessionEnd,
        HookEvent::PreCompact,
        HookEvent::SubagentStop,
    ];

    /// The `ovhook` subcommand that answers the event.
    pub fn command(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session-start",
            HookEvent::UserPromptSubmit => "user-prompt-submit",
            HookEvent::PreToolUse => "pre-tool-use",
            HookEvent::PostToolUse => "post-tool-use",
            HookEvent::Stop => "stop",
            HookEvent::SessionEnd => "session-end",
            HookEvent::PreCompact => "pre-compact",
            HookEvent::SubagentStop => "subagent-stop",
        }
    }

    /// Maps an `ovhook` subcommand to its event.
    pub fn from_command(cmd: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.command() == cmd)
    }

    /// The event's wire name (`hookEventName`, the same in ZCode and Claude Code).
    pub fn wire_name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SubagentStop => "SubagentStop",
        }
    }
}

#[cfg(test)]
mod hostile_payloads;

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::{Map, Value};

    use super::*;
    use crate::install::target::Scope;

    /// Every folder under `harness/` is one harness's (or one family's): [`ALL`] holds a
    /// harness of the folder's name, so a new harness left out of the list fails here.
    #[test]
    fn every_harness_folder_is_in_all() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/harness");
        let mut folders = 0;
        for entry in std::fs::read_dir(&dir).expect("read harness/") {
            let entry = entry.expect("entry");
            if !entry.file_type().expect("type").is_dir() {
                continue;
            }
            folders += 1;
            let folder = entry.file_name().to_string_lossy().replace('_', "-");
            assert!(
                named(&folder).is_some(),
                "src/harness/{}/ is a harness folder, but harness::ALL has no harness named \
                 {folder:?}: add it to ALL",
                entry.file_name().to_string_lossy()
            );
        }
        assert!(folders >= 7, "{folders} harness folders under {dir:?}");
    }

    #[test]
    fn names_are_unique_and_each_harness_installs_under_its_own() {
        let names = names();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        for h in ALL {
            assert_eq!(h.install_target().name(), h.name());
        }
        assert_eq!(names.first(), Some(&DEFAULT.name()));
    }

    #[test]
    fn targets_have_distinct_places() {
        let home = Path::new("/h");
        for t in ALL.iter().map(|h| h.install_target()) {
            for scope in [
                Scope::User,
                Scope::Project {
                    root: PathBuf::from("/r"),
                },
            ] {
                if matches!(scope, Scope::Project { .. }) && !t.supports_project() {
                    continue;
                }
                let places = t.places(home, &scope);
                assert!(!places.is_empty(), "{} {scope:?}", t.name());
                for p in &places {
                    assert!(p.path.is_absolute());
                    if let Scope::Project { root } = &scope {
                        assert!(p.path.starts_with(root), "{p:?}");
                        assert!(!p.holds.mcp, "a project file never names an MCP endpoint");
                    }
                }
            }
        }
    }

    #[test]
    fn every_format_merges_idempotently_and_removes_only_ours() {
        let exe = Path::new("/opt/bin/ovhook");
        for t in ALL.iter().map(|h| h.install_target()) {
            for p in t.places(Path::new("/h"), &Scope::User) {
                let mut root = Map::new();
                root.insert("foreign".into(), Value::from(1));
                p.format.merge(&mut root, exe, p.holds);
                let once = root.clone();
                p.format.merge(&mut root, exe, p.holds);
                assert_eq!(root, once, "{p:?}");
                assert!(p
                    .format
                    .binaries(&root)
                    .iter()
                    .all(|b| b == "/opt/bin/ovhook"));
                assert!(!p.format.binaries(&root).is_empty(), "{p:?}");
                assert!(p.format.remove(&mut root) > 0);
                assert!(p.format.binaries(&root).is_empty());
                assert_eq!(root.get("foreign"), Some(&Value::from(1)), "{p:?}");
            }
        }
    }
}
