//! Harness-specific wire formats behind one interface.
//!
//! Each harness (ZCode today, Claude Code next) keeps its payload fields,
//! output rules, transcript reader and installer target in its own module and
//! implements [`Harness`]; the journal, projector, planner, client and outbox
//! never learn which harness fed them (events carry the harness's name as data).

pub mod input;
pub mod zcode;

use std::path::Path;

use ov_engine::delivery::TranscriptSource;

pub use input::HookInput;

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
    /// The session's transcript (ZCode: its rollout file).
    fn transcript(&self, home: &Path, session_id: &str) -> Option<Box<dyn TranscriptSource>>;
    /// The session is a subagent's own (spawned by the agent, not opened by the user).
    fn is_subagent_session(&self, native: &str) -> bool {
        let _ = native;
        false
    }
    /// The harness's own cap on hook output, when its configuration sets one
    /// (output over it is dropped by the harness).
    fn output_cap(&self, home: &Path) -> Option<usize>;
}

/// The harness that invoked this process. Only ZCode is wired today; a Claude
/// Code harness would be chosen here (its hooks run with `CLAUDECODE=1`).
pub fn current() -> &'static dyn Harness {
    &zcode::ZCode
}

/// The harness a journaled session came from (by its journaled name).
pub fn by_name(name: Option<&str>) -> &'static dyn Harness {
    match name {
        Some("zcode") | None => &zcode::ZCode,
        Some(_) => &zcode::ZCode,
    }
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
    /// `Stop`.
    Stop,
}

impl HookEvent {
    /// Maps an `ovhook` subcommand to its event.
    pub fn from_command(cmd: &str) -> Option<HookEvent> {
        Some(match cmd {
            "session-start" => HookEvent::SessionStart,
            "user-prompt-submit" => HookEvent::UserPromptSubmit,
            "pre-tool-use" => HookEvent::PreToolUse,
            "stop" => HookEvent::Stop,
            _ => return None,
        })
    }

    /// ZCode's event name (`hookEventName`).
    pub fn wire_name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::Stop => "Stop",
        }
    }
}
