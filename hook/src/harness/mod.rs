//! Harness-specific wire formats. Each harness (ZCode today, Claude Code next) keeps its payload
//! fields, output rules and installer target in its own module; the engine never sees them.
pub mod zcode;

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
