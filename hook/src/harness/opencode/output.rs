//! What `ovhook` prints for the plugin shim (`plugin.js`), which acts on it inside the agent.
//!
//! | event | output | what the shim does, what the model gets |
//! |---|---|---|
//! | SessionStart, UserPromptSubmit | `{"context": …}` | pushes a `synthetic` text part onto the user message (`chat.message`'s `output.parts`): the model sees it with that message in this and every later request of the session |
//! | PreToolUse (deny) | `{"deny": …}` | throws an `Error` with the reason from `tool.execute.before`: the tool does not run and the model gets the error as the tool's result |
//! | Stop, SessionEnd | nothing | |
//!
//! Neither agent states a limit for a plugin's parts; context is held to
//! [`MAX_CONTEXT_CHARS`] characters, as for Claude Code.

use serde_json::json;

use crate::harness::context_fit::{fit, fit_reason};
use crate::harness::HookEvent;

/// Most characters of context injected at once.
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// The context output for SessionStart / UserPromptSubmit; None for other events or blank
/// text.
pub fn context(event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
    if !matches!(event, HookEvent::SessionStart | HookEvent::UserPromptSubmit) {
        return None;
    }
    fit(text, MAX_CONTEXT_CHARS, max_bytes, |t| {
        json!({ "context": t }).to_string()
    })
}

/// The PreToolUse deny output, the reason cut to fit by [`fit_reason`].
pub fn deny(reason: &str, max_bytes: usize) -> Option<String> {
    fit_reason(reason, max_bytes, |r| json!({ "deny": r }).to_string())
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn context_and_deny_shapes() {
        let line = context(HookEvent::UserPromptSubmit, "remember", 32768).expect("ctx");
        let v: Value = serde_json::from_str(&line).expect("json");
        assert_eq!(v["context"], "remember");
        assert!(context(HookEvent::Stop, "x", 32768).is_none());
        assert!(context(HookEvent::SessionStart, "  ", 32768).is_none());
        let big = context(HookEvent::SessionStart, &"a".repeat(20_000), 1 << 20).expect("cut");
        let v: Value = serde_json::from_str(&big).expect("json");
        assert!(v["context"].as_str().expect("str").chars().count() <= MAX_CONTEXT_CHARS);
        let d: Value =
            serde_json::from_str(&deny("use the MCP", 4096).expect("deny")).expect("json");
        assert_eq!(d["deny"], "use the MCP");
    }
}
