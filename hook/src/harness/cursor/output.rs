//! Cursor's hook output.
//!
//! | event | output | what Cursor does |
//! |---|---|---|
//! | sessionStart | `{"additional_context": …}` | adds it to the conversation's initial system context (documented) |
//! | beforeSubmitPrompt | `{"continue": true, "additional_context": …}` | `continue` is documented; `additional_context` here is what OpenViking's Cursor plugin sends, not in Cursor's published schema (untested against the real app) |
//! | beforeSubmitPrompt, nothing to add | `{"continue": true}` | the prompt goes on |
//! | beforeReadFile (deny) | `{"permission": "deny", "user_message": …, "agent_message": …}` | the read is blocked; `user_message` is documented for this hook, `agent_message` for Cursor's other gates |
//! | beforeReadFile, allowed | `{"permission": "allow"}` | this hook fails closed: without a valid answer Cursor blocks the read |
//! | stop, preCompact, sessionEnd | nothing | |
//!
//! Cursor states no limit for injected context; it is held to [`MAX_CONTEXT_CHARS`]
//! characters, as for Claude Code.

use serde_json::json;

use crate::harness::context_fit::{fit, fit_reason};
use crate::harness::HookEvent;

/// Most characters of context injected at once.
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// The context output for sessionStart / beforeSubmitPrompt; None for other events or blank
/// text.
pub fn context(event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
    match event {
        HookEvent::SessionStart => fit(text, MAX_CONTEXT_CHARS, max_bytes, |t| {
            json!({"additional_context": t}).to_string()
        }),
        HookEvent::UserPromptSubmit => fit(text, MAX_CONTEXT_CHARS, max_bytes, |t| {
            json!({"continue": true, "additional_context": t}).to_string()
        }),
        _ => None,
    }
}

/// The beforeReadFile deny output, the reason cut to fit by [`fit_reason`].
pub fn deny(reason: &str, max_bytes: usize) -> Option<String> {
    fit_reason(reason, max_bytes, |r| {
        json!({"permission": "deny", "user_message": r, "agent_message": r}).to_string()
    })
}

/// What a hook with nothing else to say prints: the gates that read silence as a failure
/// get their "go on".
pub fn pass(event: HookEvent) -> Option<String> {
    match event {
        HookEvent::PreToolUse => Some(json!({"permission": "allow"}).to_string()),
        HookEvent::UserPromptSubmit => Some(json!({"continue": true}).to_string()),
        _ => None,
    }
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn v(line: Option<String>) -> Value {
        serde_json::from_str(&line.expect("a line")).expect("json")
    }

    #[test]
    fn shapes() {
        assert_eq!(
            v(context(HookEvent::SessionStart, "p", 1000)),
            json!({"additional_context": "p"})
        );
        assert_eq!(
            v(context(HookEvent::UserPromptSubmit, "m", 1000)),
            json!({"continue": true, "additional_context": "m"})
        );
        assert!(context(HookEvent::Stop, "m", 1000).is_none());
        assert_eq!(
            v(deny("no", 1000)),
            json!({"permission": "deny", "user_message": "no", "agent_message": "no"})
        );
        assert_eq!(
            v(pass(HookEvent::PreToolUse)),
            json!({"permission": "allow"})
        );
        assert_eq!(
            v(pass(HookEvent::UserPromptSubmit)),
            json!({"continue": true})
        );
        assert!(pass(HookEvent::Stop).is_none() && pass(HookEvent::SessionStart).is_none());
        let long = "x".repeat(20_000);
        let cut = v(context(HookEvent::SessionStart, &long, 1 << 20));
        assert!(
            cut["additional_context"]
                .as_str()
                .expect("text")
                .chars()
                .count()
                <= MAX_CONTEXT_CHARS
        );
    }
}
