//! Messages too large to journal or send: one limit, and the stand-in that takes their place.
//!
//! # Design
//!
//! A message text over [`MAX_MESSAGE_BYTES`] is never carried whole: wherever it enters (a
//! rollout line's prompt or answer, a Stop payload's answer at plan time) it is replaced by
//! its **stand-in**, a short text that starts with [`STAND_IN_PREFIX`] and gives the
//! original length in bytes. The stand-in travels through the turn book like any text, so a
//! journal event stays far below the 64 MiB frame cap and memory stays bounded; the projector
//! sets a planned message whose content holds a stand-in aside with its reason
//! ([`set_aside_reason`]), and it is never sent.
//!
//! The prefix starts with a NUL character, which no prompt or answer an agent writes begins
//! with; a text that carries one anyway is set aside too, never sent as a stand-in.

/// The largest message text carried and sent, in bytes of UTF-8.
pub const MAX_MESSAGE_BYTES: usize = 8 << 20;

/// What every stand-in starts with.
pub const STAND_IN_PREFIX: &str = "\u{0}ovhook:oversized:";

/// The stand-in of a text of `len` bytes.
pub fn stand_in(len: usize) -> String {
    format!("{STAND_IN_PREFIX}{len}")
}

/// Whether a message text is carried and sent as it is (at most [`MAX_MESSAGE_BYTES`]).
pub fn fits(text: &str) -> bool {
    text.len() <= MAX_MESSAGE_BYTES
}

/// `text` itself when it [`fits`], else its stand-in.
pub fn bounded(text: String) -> String {
    if fits(&text) {
        text
    } else {
        stand_in(text.len())
    }
}

/// The original length named by the stand-in inside `content` (it may follow a mark such as
/// `[interrupted] `), when there is one.
pub fn stand_in_len(content: &str) -> Option<u64> {
    let at = content.find(STAND_IN_PREFIX)?;
    let digits = content.get(at + STAND_IN_PREFIX.len()..)?;
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits.get(..end)?.parse().ok()
}

/// Whether `text` is exactly a stand-in (as a transcript reader leaves it), not a text that
/// merely contains the stand-in's prefix.
pub fn is_stand_in(text: &str) -> bool {
    text.strip_prefix(STAND_IN_PREFIX)
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Why a message whose content holds a stand-in is set aside.
pub fn set_aside_reason(len: u64) -> String {
    format!(
        "message of {len} bytes is over the {MAX_MESSAGE_BYTES}-byte limit of one message: set aside, not sent"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_over_the_limit_becomes_its_stand_in() {
        let fits = "x".repeat(MAX_MESSAGE_BYTES);
        assert_eq!(bounded(fits.clone()), fits);
        let over = "é".repeat(MAX_MESSAGE_BYTES / 2 + 1);
        let s = bounded(over);
        assert_eq!(stand_in_len(&s), Some(MAX_MESSAGE_BYTES as u64 + 2));
        assert!(s.len() < 64);
        assert_eq!(
            stand_in_len(&format!("[interrupted] {}", stand_in(99))),
            Some(99)
        );
        assert_eq!(stand_in_len("an ordinary answer"), None);
        assert!(is_stand_in(&stand_in(99)));
        assert!(!is_stand_in(&format!("quoted: {}", stand_in(99))));
        assert!(!is_stand_in(&format!("{} and more", stand_in(99))));
        assert!(!is_stand_in(STAND_IN_PREFIX));
        assert_eq!(stand_in_len(STAND_IN_PREFIX), None);
    }
}
