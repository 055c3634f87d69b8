//! ZCode's hook output rules.
//!
//! ZCode validates stdout strictly: exactly `{"hookSpecificOutput":{…}}` with the
//! keys of the event, nothing else (an extra key such as `decision` makes it
//! discard the whole output), and nothing over `hooks.maxOutputBytes` (larger
//! output is dropped). Every string this module returns satisfies both; the
//! caller prints it as one line or prints nothing.

use serde_json::json;

use crate::harness::context_fit::{fit, fit_reason};
use crate::harness::HookEvent;

/// The `additionalContext` output for SessionStart / UserPromptSubmit, cut to
/// fit `max_bytes` (newline included) by [`fit`]. None when `text` is empty or the event
/// takes no context (Stop must print nothing: ZCode would show it as an assistant
/// message).
pub fn context(event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
    if !matches!(event, HookEvent::SessionStart | HookEvent::UserPromptSubmit) {
        return None;
    }
    fit(text, usize::MAX, max_bytes, |t| {
        json!({"hookSpecificOutput": {"hookEventName": event.wire_name(), "additionalContext": t}})
            .to_string()
    })
}

/// The PreToolUse deny output, under `max_bytes` (newline included): the reason is cut to fit
/// by [`fit_reason`]; None when not even an empty reason fits.
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

    #[test]
    fn context_has_only_the_canonical_keys() {
        let line = context(HookEvent::UserPromptSubmit, "ctx", 32768).expect("output");
        let v: Value = serde_json::from_str(&line).expect("json");
        let obj = v.as_object().expect("object");
        assert_eq!(obj.len(), 1);
        let inner = obj["hookSpecificOutput"].as_object().expect("inner");
        let mut keys: Vec<&str> = inner.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["additionalContext", "hookEventName"]);
        assert_eq!(inner["hookEventName"], "UserPromptSubmit");
    }

    #[test]
    fn stop_and_empty_print_nothing() {
        assert!(context(HookEvent::Stop, "x", 32768).is_none());
        assert!(context(HookEvent::SessionStart, "  ", 32768).is_none());
    }

    #[test]
    fn oversized_context_is_cut_to_fit_including_escapes() {
        for text in [
            "a".repeat(100_000),
            "\"\\\n".repeat(40_000),
            "é日本\u{1}".repeat(20_000),
        ] {
            let line = context(HookEvent::SessionStart, &text, 32768).expect("fits");
            assert!(line.len() < 32768, "{} bytes", line.len());
            let v: Value = serde_json::from_str(&line).expect("valid json");
            let ctx = v["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .expect("str");
            assert!(ctx.ends_with(CUT_MARKER));
        }
    }

    #[test]
    fn deny_shape() {
        let v: Value = serde_json::from_str(&deny("no", 32768).expect("deny")).expect("json");
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert!(v.get("decision").is_none());
        assert!(v["hookSpecificOutput"].get("decision").is_none());
    }
}
