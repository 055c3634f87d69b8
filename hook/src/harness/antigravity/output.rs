//! Antigravity CLI's hook output.
//!
//! | event | output | what the model gets |
//! |---|---|---|
//! | SessionStart, PreInvocation | `{"injectSteps": [{"ephemeralMessage": …}]}` | a transient system notice for the turn, never written to the transcript |
//! | Stop | nothing | |
//!
//! Antigravity runs no pre-tool hook (its `PreToolUse` entries do not load), so nothing is
//! denied. It states no limit for injected context; it is held to [`MAX_CONTEXT_CHARS`]
//! characters, as for Claude Code.

use serde_json::json;

use crate::harness::context_fit::fit;
use crate::harness::HookEvent;

/// Most characters of context injected at once.
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// The context output for SessionStart / PreInvocation; None for other events or blank text.
pub fn context(event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
    match event {
        HookEvent::SessionStart | HookEvent::UserPromptSubmit => {
            fit(text, MAX_CONTEXT_CHARS, max_bytes, |t| {
                json!({"injectSteps": [{"ephemeralMessage": t}]}).to_string()
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let v: serde_json::Value =
            serde_json::from_str(&context(HookEvent::UserPromptSubmit, "m", 1000).expect("out"))
                .expect("json");
        assert_eq!(v, json!({"injectSteps": [{"ephemeralMessage": "m"}]}));
        assert!(context(HookEvent::SessionStart, "p", 1000).is_some());
        assert!(context(HookEvent::Stop, "m", 1000).is_none());
        assert!(context(HookEvent::PreToolUse, "m", 1000).is_none());
    }
}
