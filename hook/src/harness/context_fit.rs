//! Fitting injected context under a harness's limits: at most `max_chars` characters of
//! context (agents that show the model only so much, or swap longer context for a
//! preview) in an output line shorter than `max_bytes` (newline included).
//!
//! Context that does not fit is cut to its longest prefix that does, followed by
//! [`CUT_MARKER`]; the search renders O(log n) candidate lines.

/// Appended to context that had to be cut.
pub const CUT_MARKER: &str = "\n… [truncated to fit the hook output limit]";

/// The output line `render(context)` for `text`, or for its longest prefix (marker
/// included) that fits. None when `text` is blank or not even the marker fits.
pub fn fit(
    text: &str,
    max_chars: usize,
    max_bytes: usize,
    render: impl Fn(&str) -> String,
) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    let chars = text.chars().count();
    if chars <= max_chars {
        let line = render(text);
        if line.len() < max_bytes {
            return Some(line);
        }
    }
    let room = max_chars.saturating_sub(CUT_MARKER.chars().count());
    let byte_at = |n: usize| text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
    let (mut lo, mut hi) = (0usize, chars.min(room));
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let head = text.get(..byte_at(mid)).unwrap_or(text);
        let candidate = render(&format!("{head}{CUT_MARKER}"));
        if candidate.len() < max_bytes {
            best = Some(candidate);
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    best.filter(|_| lo > 0)
}

/// The deny line `render(reason)`, or with the longest prefix of `reason` whose line is
/// shorter than `max_bytes` (a denial matters more than its full text). None when not even an
/// empty reason fits.
pub fn fit_reason(
    reason: &str,
    max_bytes: usize,
    render: impl Fn(&str) -> String,
) -> Option<String> {
    let line = render(reason);
    if line.len() < max_bytes {
        return Some(line);
    }
    let byte_at = |n: usize| {
        reason
            .char_indices()
            .nth(n)
            .map_or(reason.len(), |(i, _)| i)
    };
    let (mut lo, mut hi) = (0usize, reason.chars().count());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if render(reason.get(..byte_at(mid)).unwrap_or(reason)).len() < max_bytes {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let line = render(reason.get(..byte_at(lo)).unwrap_or(reason).trim_end());
    (line.len() < max_bytes).then_some(line)
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_cut_to_fit_and_a_denial_is_never_dropped_for_its_length() {
        let reason = format!("Use OpenViking MCP grep instead: {}", "é".repeat(20_000));
        let line = fit_reason(&reason, 1000, plain).expect("a denial fits");
        assert!(line.len() < 1000);
        assert!(line.starts_with("{\"c\":\"Use OpenViking MCP grep instead: "));
        assert_eq!(
            fit_reason("short", 1000, plain).as_deref(),
            Some("{\"c\":\"short\"}")
        );
        assert_eq!(
            fit_reason("short", 5, plain),
            None,
            "not even an empty reason fits"
        );
        // Every harness's deny goes through it.
        assert!(crate::harness::claude_code::output::deny(&reason, 1000).is_some());
        assert!(crate::harness::copilot::output::deny(&reason, 1000).is_some());
        assert!(crate::harness::zcode::output::deny(&reason, 1000).is_some());
    }

    fn plain(t: &str) -> String {
        serde_json::json!({ "c": t }).to_string()
    }

    #[test]
    fn fits_characters_and_bytes() {
        assert_eq!(
            fit("ctx", 10, 100, plain).as_deref(),
            Some(r#"{"c":"ctx"}"#)
        );
        assert!(fit("  ", 10, 100, plain).is_none());
        for text in [
            "a".repeat(10_001),
            "日本語".repeat(5_000),
            "\"\\\n".repeat(9_000),
        ] {
            let line = fit(&text, 10_000, 32_768, plain).expect("fits");
            let v: serde_json::Value = serde_json::from_str(&line).expect("json");
            let c = v["c"].as_str().expect("str");
            assert!(c.chars().count() <= 10_000 && c.ends_with(CUT_MARKER));
            assert!(line.len() < 32_768);
        }
        let tight = fit(&"c".repeat(5000), 10_000, 1000, plain).expect("fits");
        assert!(tight.len() < 1000);
        assert!(fit(&"c".repeat(5000), 10_000, 20, plain).is_none());
    }
}
