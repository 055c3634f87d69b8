//! Sizing a block of injected text to a harness's output limit.

/// Length of `s` once escaped as a JSON string body by serde_json (without the quotes).
///
/// Hook output limits apply to the serialised JSON, so blocks are sized with this, not `len()`.
pub fn json_escaped_len(s: &str) -> usize {
    s.chars().map(escaped_char_len).sum()
}

/// Length of `c` once escaped as part of a JSON string body by serde_json.
fn escaped_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// What a block may hold: its JSON-escaped length in bytes and its length in characters (a
/// harness may count either).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockLimit {
    /// Most JSON-escaped bytes.
    pub bytes: usize,
    /// Most characters.
    pub chars: usize,
}

impl BlockLimit {
    /// A limit in bytes only.
    #[cfg(test)]
    fn bytes(bytes: usize) -> BlockLimit {
        BlockLimit {
            bytes,
            chars: usize::MAX,
        }
    }

    /// The limit left after `s`, or `None` when `s` does not fit.
    fn take(self, s: &str) -> Option<BlockLimit> {
        Some(BlockLimit {
            bytes: self.bytes.checked_sub(json_escaped_len(s))?,
            chars: self.chars.checked_sub(s.chars().count())?,
        })
    }
}

/// Keeps whole lines of `text` so that `prefix + kept + suffix` fits `limit` (its JSON-escaped
/// length and its characters).
///
/// When lines had to be dropped, a final `[truncated]` line is added (it is counted). When not
/// even the first line fits, its longest head that does is kept, cut at a character boundary.
pub(crate) fn fit_block(
    prefix: &str,
    text: &str,
    suffix: &str,
    limit: BlockLimit,
) -> Option<String> {
    let whole = format!("{prefix}{text}{suffix}");
    if limit.take(&whole).is_some() {
        return Some(whole);
    }
    const MARK: &str = "\n[truncated]";
    let mut room = limit.take(prefix)?.take(suffix)?.take(MARK)?;
    let mut kept = String::new();
    for (i, line) in text.split('\n').enumerate() {
        let sep = if i > 0 { "\n" } else { "" };
        let Some(left) = room.take(sep).and_then(|r| r.take(line)) else {
            if kept.trim().is_empty() {
                // One line longer than the room: its head, cut at a character boundary.
                if let Some(mut left) = room.take(sep) {
                    kept.push_str(sep);
                    for c in line.chars() {
                        let Some(after) = left.take(c.encode_utf8(&mut [0u8; 4])) else {
                            break;
                        };
                        left = after;
                        kept.push(c);
                    }
                }
            }
            break;
        };
        kept.push_str(sep);
        kept.push_str(line);
        room = left;
    }
    if kept.trim().is_empty() {
        return None;
    }
    Some(format!("{prefix}{kept}{MARK}{suffix}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn escaped_len_matches_serde_json() {
        for s in [
            "plain",
            "quote \" back \\ nl \n tab \t",
            "ctl \u{1} é 中",
            "<tag>&",
        ] {
            let json = serde_json::to_string(s).unwrap_or_default();
            assert_eq!(json_escaped_len(s), json.len() - 2, "{s:?}");
        }
    }

    #[test]
    fn fit_block_keeps_whole_lines_under_the_limit() {
        let text = (0..100)
            .map(|i| format!("line {i} \"quoted\""))
            .collect::<Vec<_>>()
            .join("\n");
        let block = fit_block("<a>\n", &text, "\n</a>", BlockLimit::bytes(300)).unwrap_or_default();
        assert!(json_escaped_len(&block) <= 300);
        assert!(block.starts_with("<a>\nline 0 "));
        assert!(block.ends_with("\n[truncated]\n</a>"));
        assert_eq!(fit_block("<a>", "x", "</a>", BlockLimit::bytes(5)), None);
    }

    #[test]
    fn one_line_over_the_limit_is_cut_at_a_character_boundary() {
        let line = "日本語 \"quoted\" ".repeat(2_000);
        for limit in [
            BlockLimit::bytes(1_000),
            BlockLimit {
                bytes: 30_000,
                chars: 500,
            },
        ] {
            let block = fit_block("<a>\n", &line, "\n</a>", limit).expect("a head of the line");
            assert!(json_escaped_len(&block) <= limit.bytes, "{limit:?}");
            assert!(block.chars().count() <= limit.chars, "{limit:?}");
            assert!(block.ends_with("\n[truncated]\n</a>"));
            let head = block
                .strip_prefix("<a>\n")
                .and_then(|b| b.strip_suffix("\n[truncated]\n</a>"))
                .expect("framed");
            assert!(head.len() > 100 && line.starts_with(head), "{head}");
        }
    }

    proptest::proptest! {
        /// Whatever the text and the limit: the block fits both counts, is the frame around a
        /// head of the text, and is there whenever the text's first character fits.
        #[test]
        fn a_block_fits_and_is_a_head_of_the_text(
            text in "[a-z é日\n\"\\\\\u{1}]{0,300}",
            bytes in 0usize..1_500,
            chars in 0usize..500,
        ) {
            let limit = BlockLimit { bytes, chars };
            let block = fit_block("<a>\n", &text, "\n</a>", limit);
            if let Some(b) = &block {
                proptest::prop_assert!(json_escaped_len(b) <= bytes);
                proptest::prop_assert!(b.chars().count() <= chars);
                let body = b
                    .strip_prefix("<a>\n")
                    .and_then(|b| b.strip_suffix("\n</a>"))
                    .expect("framed");
                let head = body.strip_suffix("\n[truncated]").unwrap_or(body);
                proptest::prop_assert!(text.starts_with(head), "{:?}", head);
            }
            let fixed = "<a>\n\n</a>\n[truncated]";
            let first_fits = text.chars().next().is_some_and(|c| {
                !c.is_whitespace()
                    && limit
                        .take(fixed)
                        .and_then(|l| l.take(c.encode_utf8(&mut [0u8; 4])))
                        .is_some()
            });
            if first_fits {
                proptest::prop_assert!(block.is_some());
            }
        }
    }

    #[test]
    fn whole_lines_are_kept_under_a_character_limit() {
        let text = "日本語日本語\n".repeat(100);
        let limit = BlockLimit {
            bytes: 100_000,
            chars: 200,
        };
        let block = fit_block("<a>\n", &text, "</a>", limit).expect("fits");
        assert!(block.chars().count() <= 200);
        assert!(block.contains("日本語日本語\n日本語日本語\n[truncated]"));
    }
}
