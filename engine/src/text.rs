//! Text filters applied to captured messages.
//!
//! # Design
//!
//! | function | removes | used |
//! |---|---|---|
//! | [`clean_injected`] | `<openviking-context …>…</openviking-context>`, `<relevant-memories>…</relevant-memories>`, `<system-reminder>…</system-reminder>`, Gemini CLI's `<hook_context>…</hook_context>` (also HTML-escaped, `&lt;hook_context&gt;…&lt;/hook_context&gt;`), then trims | on every prompt and answer, before keys are computed |
//! | [`truncate_chars`] | everything past `max` chars | at send time (`capture.max_length`) |
//! | [`oversized::bounded`] | a whole text over [`oversized::MAX_MESSAGE_BYTES`], for its stand-in | where a text enters (rollout line, plan) |
//! | [`control::control_prompt`] | nothing: says whether a prompt only steers the work under way (`yes`, `continue`, a bare slash command), so recall skips it | on every prompt, before recall |
//! | [`classify_user`] / [`user_words`] | everything of a user-role message that the user did not type (injected blocks, task notifications, desktop wrappers, image paths) | on every prompt, from hooks and rollouts alike |
//!
//! `<private>` spans and secrets are [`crate::privacy`]'s, applied where text enters.
//!
//! Tags match ASCII case-insensitively, blocks are removed non-greedily (the first
//! closing tag after an opening tag ends the block) and an opening tag without a
//! closing tag is left as it is, exactly like the anchor's regular expressions
//! (`docs/anchor-behaviours.md` §5.3). The scanners are hand-written: no regex crate.

pub mod control;
pub mod oversized;
mod user;

pub use user::{classify_user, is_task_notification, user_words, UserText, IMAGE_PLACEHOLDER};

/// One injected block kind: the literal opening prefix, whether the opening tag may
/// carry attributes (`<openviking-context source="…">`), and the closing tag.
struct Block {
    open: &'static [u8],
    attrs: bool,
    close: &'static [u8],
}

/// The blocks removed by [`clean_injected`], in the anchor's order.
const INJECTED: [Block; 5] = [
    Block {
        open: b"<openviking-context",
        attrs: true,
        close: b"</openviking-context>",
    },
    Block {
        open: b"<relevant-memories>",
        attrs: false,
        close: b"</relevant-memories>",
    },
    Block {
        open: b"<system-reminder>",
        attrs: false,
        close: b"</system-reminder>",
    },
    // Gemini CLI wraps hook context in it (SessionStart's lands inside the prompt itself).
    Block {
        open: b"<hook_context>",
        attrs: false,
        close: b"</hook_context>",
    },
    Block {
        open: b"&lt;hook_context&gt;",
        attrs: false,
        close: b"&lt;/hook_context&gt;",
    },
];

/// Position of the first ASCII-case-insensitive occurrence of `needle` (lowercase)
/// in `hay` at or after `from`.
pub(crate) fn find_ci(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let upper = first.to_ascii_uppercase();
    let mut i = from;
    while i + needle.len() <= hay.len() {
        let window = hay.get(i..)?;
        let off = if first == upper {
            memchr::memchr(first, window)?
        } else {
            memchr::memchr2(first, upper, window)?
        };
        let at = i + off;
        let tail = hay.get(at + 1..at + needle.len())?;
        if tail.eq_ignore_ascii_case(rest) {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// Removes every complete `block` from `s`. Returns `None` when nothing matched
/// (so the caller can avoid a copy).
fn remove_blocks(s: &str, block: &Block) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out: Option<String> = None;
    // Invariant: `copied` is a char boundary; bytes before it are already in `out`.
    let mut copied = 0;
    let mut from = 0;
    while let Some(open_at) = find_ci(bytes, block.open, from) {
        let after_open = open_at + block.open.len();
        let body_at = if block.attrs {
            // `\b[^>]*>`: the name must end here, then anything up to the first `>`.
            let boundary = bytes
                .get(after_open)
                .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'));
            if !boundary {
                from = open_at + 1;
                continue;
            }
            match memchr::memchr(b'>', bytes.get(after_open..).unwrap_or_default()) {
                Some(gt) => after_open + gt + 1,
                None => break,
            }
        } else {
            after_open
        };
        let Some(close_at) = find_ci(bytes, block.close, body_at) else {
            break;
        };
        let end = close_at + block.close.len();
        let buf = out.get_or_insert_with(|| String::with_capacity(s.len()));
        // Tag bytes are ASCII, so `open_at` and `end` are char boundaries.
        buf.push_str(s.get(copied..open_at).unwrap_or_default());
        copied = end;
        from = end;
    }
    let mut buf = out?;
    buf.push_str(s.get(copied..).unwrap_or_default());
    Some(buf)
}

/// Removes injected context blocks (OpenViking recall and profile blocks, ZCode's
/// `<system-reminder>`s, Gemini CLI's `<hook_context>`s), then trims. Surrounding spaces are kept, so
/// `"a <system-reminder>x</system-reminder> b"` becomes `"a  b"`.
pub fn clean_injected(s: &str) -> String {
    let mut cur: Option<String> = None;
    for block in &INJECTED {
        let src = cur.as_deref().unwrap_or(s);
        if let Some(next) = remove_blocks(src, block) {
            cur = Some(next);
        }
    }
    match cur {
        Some(c) => c.trim().to_owned(),
        None => s.trim().to_owned(),
    }
}

/// True when nothing but injected blocks and whitespace is in `s` (an empty string
/// counts as only injected: it is no prompt).
pub fn is_only_injected(s: &str) -> bool {
    let t = s.trim();
    if t.is_empty() {
        return true;
    }
    // Fast path: a real prompt that does not start with a tag.
    if !t.starts_with('<') {
        return false;
    }
    clean_injected(t).is_empty()
}

/// The first `max` chars of `s` (whole chars: never splits a UTF-8 sequence).
pub fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => s.get(..at).unwrap_or(s).to_owned(),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    #[rstest]
    #[case::plain("  hello  ", "hello")]
    #[case::reminder("<system-reminder>x</system-reminder>\nreal", "real")]
    #[case::keeps_spaces(
        "hello <openviking-context a=\"1\">x</openviking-context> world",
        "hello  world"
    )]
    #[case::case_insensitive("<SYSTEM-Reminder>x\ny</System-REMINDER>p", "p")]
    #[case::memories("a<relevant-memories>m</relevant-memories>b", "ab")]
    #[case::non_greedy(
        "<system-reminder>1</system-reminder>mid<system-reminder>2</system-reminder>",
        "mid"
    )]
    #[case::unclosed_kept("<system-reminder>never closed", "<system-reminder>never closed")]
    #[case::word_boundary(
        "<openviking-contextual>x</openviking-context>",
        "<openviking-contextual>x</openviking-context>"
    )]
    #[case::bare_ov("<openviking-context>x</openviking-context>ok", "ok")]
    #[case::gemini_session_start(
        "<hook_context>&lt;openviking-context&gt;p&lt;/openviking-context&gt;</hook_context>\n\nyes\n<hook_context>r</hook_context>",
        "yes"
    )]
    #[case::gemini_escaped("&lt;hook_context&gt;x&lt;/hook_context&gt;ok", "ok")]
    #[case::utf8("é<system-reminder>ü</system-reminder>ß", "éß")]
    #[case::all_three("<openviking-context s=\"p\"><relevant-memories>r</relevant-memories></openviking-context> <system-reminder>s</system-reminder>", "")]
    fn clean(#[case] input: &str, #[case] want: &str) {
        assert_eq!(clean_injected(input), want);
    }

    #[rstest]
    #[case::empty("", true)]
    #[case::ws(" \n", true)]
    #[case::reminder("<system-reminder>x</system-reminder>\n", true)]
    #[case::two(
        "<system-reminder>x</system-reminder><relevant-memories>y</relevant-memories>",
        true
    )]
    #[case::prompt("do it", false)]
    #[case::mixed("<system-reminder>x</system-reminder> do it", false)]
    fn only_injected(#[case] input: &str, #[case] want: bool) {
        assert_eq!(is_only_injected(input), want);
    }

    #[rstest]
    #[case::short("abc", 5, "abc")]
    #[case::exact("abc", 3, "abc")]
    #[case::cut("abcdef", 2, "ab")]
    #[case::multibyte("日本語です", 2, "日本")]
    #[case::zero("abc", 0, "")]
    fn truncate(#[case] input: &str, #[case] max: usize, #[case] want: &str) {
        assert_eq!(truncate_chars(input, max), want);
    }

    proptest! {
        #[test]
        fn clean_is_idempotent_without_tags(s in "[^<]*") {
            prop_assert_eq!(clean_injected(&s), s.trim());
        }

        #[test]
        fn clean_removes_wrapped_block(a in "[a-z ]{0,8}", x in "[^<]{0,8}", b in "[a-z ]{0,8}") {
            let s = format!("{a}<system-reminder>{x}</system-reminder>{b}");
            let want = format!("{a}{b}");
            prop_assert_eq!(clean_injected(&s), want.trim());
        }

        #[test]
        fn truncate_never_panics(s in any::<String>(), max in 0usize..40) {
            let t = truncate_chars(&s, max);
            prop_assert!(t.chars().count() <= max);
            prop_assert!(s.starts_with(&t));
        }
    }
}
