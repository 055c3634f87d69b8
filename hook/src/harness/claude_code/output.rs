//! Claude Code's hook output rules.
//!
//! The shape is `{"hookSpecificOutput":{"hookEventName", "additionalContext"}}` for
//! context and `{"hookSpecificOutput":{"hookEventName":"PreToolUse",
//! "permissionDecision":"deny","permissionDecisionReason"}}` for a denial. Claude Code
//! replaces an `additionalContext` longer than [`MAX_CONTEXT_CHARS`] characters with a
//! short preview and a file path, so context is cut to fit that (and the byte cap);
//! Stop and SessionEnd print nothing.

use serde_json::json;

use crate::harness::context_fit::{fit, fit_reason};
use crate::harness::HookEvent;

/// Longest `additionalContext` Claude Code passes to the model as it is, in characters.
pub const MAX_CONTEXT_CHARS: usize = 10_000;

fn render(event: HookEvent, text: &str) -> String {
    json!({"hookSpecificOutput": {"hookEventName": event.wire_name(), "additionalContext": text}})
        .to_string()
}

/// The `additionalContext` output for SessionStart / UserPromptSubmit: at most
/// [`MAX_CONTEXT_CHARS`] characters of context, and a line shorter than `max_bytes`
/// (newline included), cut by [`fit`]. None when `text` is blank or the event takes no
/// context.
pub fn context(event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
    if !matches!(event, HookEvent::SessionStart | HookEvent::UserPromptSubmit) {
        return None;
    }
    fit(text, MAX_CONTEXT_CHARS, max_bytes, |t| render(event, t))
}

/// The PreToolUse deny output, the reason cut to fit by [`fit_reason`].
pub fn deny(reason: &str, max_bytes: usize) -> Option<String> {
    fit_reason(reason, max_bytes, |r| {
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": r,
        }})
        .to_string()
    })
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use crate::harness::context_fit::CUT_MARKER;
    use serde_json::Value;

    fn ctx_of(line: &str) -> String {
        let v: Value = serde_json::from_str(line).expect("json");
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("str")
            .to_owned()
    }

    #[test]
    fn context_fits_ten_thousand_characters() {
        let small = context(HookEvent::UserPromptSubmit, "ctx", 32768).expect("out");
        assert_eq!(ctx_of(&small), "ctx");
        for text in [
            "a".repeat(10_001),
            "日本語".repeat(5_000),
            "\"\\\n".repeat(9_000),
        ] {
            let line = context(HookEvent::SessionStart, &text, 32768).expect("fits");
            let c = ctx_of(&line);
            assert!(
                c.chars().count() <= MAX_CONTEXT_CHARS,
                "{}",
                c.chars().count()
            );
            assert!(c.ends_with(CUT_MARKER));
            assert!(line.len() < 32768);
        }
        let exact = "b".repeat(MAX_CONTEXT_CHARS);
        assert_eq!(
            ctx_of(&context(HookEvent::SessionStart, &exact, 32768).expect("out")),
            exact
        );
        let tight = context(HookEvent::SessionStart, &"c".repeat(5000), 1000).expect("fits");
        assert!(tight.len() < 1000);
    }

    #[test]
    fn stop_session_end_and_blank_print_nothing() {
        assert!(context(HookEvent::Stop, "x", 32768).is_none());
        assert!(context(HookEvent::SessionEnd, "x", 32768).is_none());
        assert!(context(HookEvent::SessionStart, " ", 32768).is_none());
    }

    #[test]
    fn deny_shape() {
        let v: Value = serde_json::from_str(&deny("no", 32768).expect("deny")).expect("json");
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(v["hookSpecificOutput"]["permissionDecisionReason"], "no");
    }
}
