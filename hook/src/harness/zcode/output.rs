//! ZCode's hook output rules.
//!
//! ZCode validates stdout strictly: exactly `{"hookSpecificOutput":{…}}` with the
//! keys of the event, nothing else (an extra key such as `decision` makes it
//! discard the whole output), and nothing over `hooks.maxOutputBytes` (larger
//! output is dropped). Every string this module returns satisfies both; the
//! caller prints it as one line or prints nothing.

use serde_json::json;

use crate::harness::HookEvent;

/// Marker appended when context had to be cut to fit the output cap.
const CUT_MARKER: &str = "\n… [truncated to fit the hook output limit]";

/// The `additionalContext` output for SessionStart / UserPromptSubmit, cut to
/// fit `max_bytes` (newline included). None when `text` is empty or the event
/// takes no context (Stop must print nothing: ZCode would show it as an
/// assistant message).
pub fn context(event: HookEvent, text: &str, max_bytes: usize) -> Option<String> {
    if text.trim().is_empty()
        || !matches!(event, HookEvent::SessionStart | HookEvent::UserPromptSubmit)
    {
        return None;
    }
    let render = |t: &str| {
        json!({"hookSpecificOutput": {"hookEventName": event.wire_name(), "additionalContext": t}})
            .to_string()
    };
    let line = render(text);
    if line.len() < max_bytes {
        return Some(line);
    }
    // Escaping can expand a byte up to six times (`\u0001`), so search the
    // longest prefix whose rendering fits: O(log n) renders.
    let (mut lo, mut hi) = (0usize, text.len());
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let mut cut = mid;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let candidate = render(&format!("{}{CUT_MARKER}", &text[..cut]));
        if candidate.len() < max_bytes {
            best = Some(candidate);
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    best.filter(|_| lo > 0)
}

/// The PreToolUse deny output, under `max_bytes` (newline included): the reason is cut to fit
/// (a denial matters more than its full text); None when not even an empty reason fits.
pub fn deny(reason: &str, max_bytes: usize) -> Option<String> {
    let render = |r: &str| {
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": r,
        }})
        .to_string()
    };
    let line = render(reason);
    if line.len() < max_bytes {
        return Some(line);
    }
    let (mut lo, mut hi) = (0usize, reason.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let mut cut = mid;
        while !reason.is_char_boundary(cut) {
            cut -= 1;
        }
        if render(&reason[..cut]).len() < max_bytes {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut cut = lo;
    while !reason.is_char_boundary(cut) {
        cut -= 1;
    }
    let line = render(reason[..cut].trim_end());
    (line.len() < max_bytes).then_some(line)
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
