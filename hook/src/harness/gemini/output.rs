//! Gemini CLI's hook output.
//!
//! | event | output | what the model gets |
//! |---|---|---|
//! | SessionStart | `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext": …}}` | `<hook_context>…</hook_context>` prepended to the prompt text, on every invocation (`-p` mode) |
//! | BeforeAgent | `{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext": …}}` | a text part `<hook_context>…</hook_context>` after the prompt |
//! | BeforeTool (deny) | `{"decision":"deny","reason": …}` | the tool result `Tool execution blocked: <reason>` |
//! | AfterAgent, SessionEnd | nothing (stdout and stderr empty: Gemini shows plain text, reading stderr when stdout is empty) | |
//!
//! Gemini HTML-escapes `<` and `>` in `additionalContext`; the model reads our blocks as
//! `&lt;openviking-context&gt;…`. Gemini states no limit for injected context; it is held
//! to [`MAX_CONTEXT_CHARS`] characters, as for Claude Code.

use serde_json::json;

use crate::harness::context_fit::{fit, fit_reason};
use crate::harness::HookEvent;

/// Most characters of context injected at once.
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// The context output for SessionStart / BeforeAgent; None for other events or blank text.
pub fn context(event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
    let name = match event {
        HookEvent::SessionStart => "SessionStart",
        HookEvent::UserPromptSubmit => "BeforeAgent",
        _ => return None,
    };
    fit(text, MAX_CONTEXT_CHARS, max_bytes, |t| {
        json!({"hookSpecificOutput": {"hookEventName": name, "additionalContext": t}}).to_string()
    })
}

/// The BeforeTool deny output, the reason cut to fit by [`fit_reason`].
pub fn deny(reason: &str, max_bytes: usize) -> Option<String> {
    fit_reason(reason, max_bytes, |r| {
        json!({"decision": "deny", "reason": r}).to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let v: serde_json::Value =
            serde_json::from_str(&context(HookEvent::UserPromptSubmit, "m", 1000).expect("out"))
                .expect("json");
        assert_eq!(
            v,
            json!({"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "m"}})
        );
        assert!(context(HookEvent::Stop, "m", 1000).is_none());
        assert!(context(HookEvent::SessionEnd, "m", 1000).is_none());
        let d: serde_json::Value =
            serde_json::from_str(&deny("no", 1000).expect("deny")).expect("json");
        assert_eq!(d, json!({"decision": "deny", "reason": "no"}));
    }
}
