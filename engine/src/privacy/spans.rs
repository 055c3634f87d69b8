//! `<private>…</private>` spans: the user's own marking of what never leaves the machine.
//!
//! Tags match ASCII case-insensitively. Spans nest: a private region starts at a `<private>`
//! at depth 0 and ends only where the nesting depth returns to 0, so in
//! `<private>a <private>b</private> c</private>` all of `a`, `b` and `c` are private. A
//! region left open runs to the end of the text. A `</private>` outside any region is kept
//! as text (it closes nothing).

use crate::text::find_ci;

const OPEN: &[u8] = b"<private>";
const CLOSE: &[u8] = b"</private>";

/// The text with every private region removed, then trimmed, and how many regions were
/// removed. `None` when the text holds no `<private>` tag (nothing to do, no copy).
pub fn strip(s: &str) -> Option<(String, u32)> {
    let bytes = s.as_bytes();
    let first = find_ci(bytes, OPEN, 0)?;
    let mut out = String::with_capacity(s.len());
    out.push_str(s.get(..first).unwrap_or_default());
    let mut regions = 0u32;
    // Invariant: an opening tag at depth 0 starts at `open_at`; tags are ASCII, so every
    // position computed from them is a char boundary.
    let mut open_at = first;
    loop {
        regions = regions.saturating_add(1);
        let Some(end) = region_end(bytes, open_at + OPEN.len()) else {
            // Unclosed: private to the end of the text.
            break;
        };
        match find_ci(bytes, OPEN, end) {
            Some(next) => {
                out.push_str(s.get(end..next).unwrap_or_default());
                open_at = next;
            }
            None => {
                out.push_str(s.get(end..).unwrap_or_default());
                break;
            }
        }
    }
    Some((out.trim().to_owned(), regions))
}

/// Where the region whose opening tag ends at `from` ends (one past its closing tag), or
/// `None` when the depth never returns to 0.
fn region_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut depth = 1usize;
    let mut at = from;
    // Each search result is kept until consumed, so the scan stays linear.
    let mut next_open = find_ci(bytes, OPEN, at);
    let mut next_close = find_ci(bytes, CLOSE, at);
    loop {
        match (next_open, next_close) {
            (Some(o), Some(c)) if o < c => {
                depth += 1;
                at = o + OPEN.len();
                next_open = find_ci(bytes, OPEN, at);
            }
            (_, Some(c)) => {
                depth -= 1;
                at = c + CLOSE.len();
                if depth == 0 {
                    return Some(at);
                }
                next_close = find_ci(bytes, CLOSE, at);
                if next_open.is_some_and(|o| o < at) {
                    next_open = find_ci(bytes, OPEN, at);
                }
            }
            (_, None) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn stripped(s: &str) -> String {
        strip(s).map_or_else(|| s.to_owned(), |(t, _)| t)
    }

    #[rstest]
    #[case::span("a <private>key=1</private> b", "a  b", 1)]
    #[case::unclosed("a <private>rest", "a", 1)]
    #[case::upper("<PRIVATE>x</Private>", "", 1)]
    #[case::two("<private>1</private>x<private>2</private>y", "xy", 2)]
    #[case::nested("<private>a <private>b</private> SECRET</private> ok", "ok", 1)]
    #[case::nested_unclosed("x <private>a <private>b</private> SECRET", "x", 1)]
    #[case::deep(
        "<private><private><private>s</private>s</private>s</private>k",
        "k",
        1
    )]
    #[case::stray_close("a </private> b", "a </private> b", 0)]
    #[case::close_then_open("a </private> <private>s</private> b", "a </private>  b", 1)]
    #[case::utf8("é<private>ü</private>ß", "éß", 1)]
    fn cases(#[case] input: &str, #[case] want: &str, #[case] regions: u32) {
        assert_eq!(stripped(input), want);
        assert_eq!(strip(input).map_or(0, |(_, n)| n), regions);
    }

    #[test]
    fn no_tag_is_no_copy() {
        assert!(strip("nothing here </private>").is_none());
    }
}
