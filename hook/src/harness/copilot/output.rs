//! Copilot CLI's hook output for its camelCase events.
//!
//! | event | output | what the model gets |
//! |---|---|---|
//! | sessionStart | `{"additionalContext": …}` | a user message at the start of the conversation |
//! | userPromptSubmitted | `{"additionalContext": …}` | `<system_reminder>…</system_reminder>` appended to the prompt |
//! | preToolUse (deny) | `{"permissionDecision":"deny","permissionDecisionReason": …}` | the tool result `Denied by preToolUse hook: <reason>` |
//! | agentStop, sessionEnd | nothing | |
//!
//! Copilot states no limit for injected context; it is held to
//! [`MAX_CONTEXT_CHARS`] characters, as for Claude Code.

use serde_json::json;

use crate::harness::context_fit::{fit, fit_reason};
use crate::harness::HookEvent;

/// Most characters of context injected at once.
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// The context output for sessionStart / userPromptSubmitted; None for other events or
/// blank text.
pub fn context(event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
    if !matches!(event, HookEvent::SessionStart | HookEvent::UserPromptSubmit) {
        return None;
    }
    fit(text, MAX_CONTEXT_CHARS, max_bytes, |t| {
        json!({ "additionalContext": t }).to_string()
    })
}

/// The preToolUse deny output, the reason cut to fit by [`fit_reason`].
pub fn deny(reason: &str, max_bytes: usize) -> Option<String> {
    fit_reason(reason, max_bytes, |r| {
        json!({"permissionDecision": "deny", "permissionDecisionReason": r}).to_string()
    })
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let v: serde_json::Value =
            serde_json::from_str(&context(HookEvent::UserPromptSubmit, "m", 1000).expect("out"))
                .expect("json");
        assert_eq!(v, json!({"additionalContext": "m"}));
        assert!(context(HookEvent::Stop, "m", 1000).is_none());
        let d: serde_json::Value =
            serde_json::from_str(&deny("no", 1000).expect("deny")).expect("json");
        assert_eq!(d["permissionDecision"], "deny");
        assert_eq!(d["permissionDecisionReason"], "no");
    }
}
