//! The user's own words in a user-role message.
//!
//! A harness puts more than the user's typing into user-role messages. This is the one
//! rule that says what of such a message the user wrote; every reader of prompts (hook
//! payloads, the ZCode rollout, the Claude Code transcript, recall queries) calls it.
//!
//! | in the message | what [`classify_user`] makes of it |
//! |---|---|
//! | injected context ([`clean_injected`]'s blocks) | removed |
//! | starts with `<task-notification` (a background task's result fed back to the agent) | [`UserText::Synthetic`]: not the user's words, whatever follows |
//! | `<task-notification>…</task-notification>` inside the text | removed |
//! | `<in-app-browser-context …>…</in-app-browser-context>`, `<execution-target-context …>…</execution-target-context>` (desktop wrappers; they hold URLs and paths) | removed; an unclosed one is removed to the end; then the text after the first `## My request for ZCode:` heading, when there is one, is the typed text |
//! | `[Image: source: <local path>]` (an attachment's marker) | [`IMAGE_PLACEHOLDER`]: a local path never leaves the machine |
//! | nothing left | [`UserText::Injected`] |
//!
//! Tags match ASCII case-insensitively. The result is trimmed.

use super::{clean_injected, find_ci};

/// What a user-role message holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserText {
    /// The user's own words, cleaned.
    Words(String),
    /// A message the harness wrote in the user's place that starts a turn of its own
    /// (a background task's `<task-notification>`): the turn has no user message, and
    /// readers must not look further back for one.
    Synthetic,
    /// Nothing but injected context and whitespace: not a message; a reader looking
    /// for a turn's prompt keeps looking further back.
    Injected,
}

/// Stands in for an image attachment's local path.
pub const IMAGE_PLACEHOLDER: &str = "[image]";

const TASK_NOTIFICATION_OPEN: &[u8] = b"<task-notification";
const TASK_NOTIFICATION_CLOSE: &[u8] = b"</task-notification>";

/// Desktop wrappers: opening prefix (attributes may follow) and closing tag.
const WRAPPERS: [(&[u8], &[u8]); 2] = [
    (b"<in-app-browser-context", b"</in-app-browser-context>"),
    (b"<execution-target-context", b"</execution-target-context>"),
];

/// The heading the desktop app puts before the typed text.
const REQUEST_HEADING: &[u8] = b"## my request for zcode:";

const IMAGE_MARKER: &[u8] = b"[image: source:";

/// True when `raw` (after injected context) is a background task's
/// `<task-notification>`: never the user's words.
pub fn is_task_notification(raw: &str) -> bool {
    starts_with_ci(clean_injected(raw).as_bytes(), TASK_NOTIFICATION_OPEN)
}

/// Classifies a user-role message; see the module table.
pub fn classify_user(raw: &str) -> UserText {
    let cleaned = clean_injected(raw);
    if starts_with_ci(cleaned.as_bytes(), TASK_NOTIFICATION_OPEN) {
        return UserText::Synthetic;
    }
    let mut s = remove_tagged(&cleaned, TASK_NOTIFICATION_OPEN, TASK_NOTIFICATION_CLOSE);
    let mut wrapped = false;
    for (open, close) in WRAPPERS {
        let before = s.len();
        s = remove_tagged(&s, open, close);
        wrapped |= s.len() != before;
    }
    if wrapped {
        if let Some(at) = find_ci(s.as_bytes(), REQUEST_HEADING, 0) {
            s = s
                .get(at + REQUEST_HEADING.len()..)
                .unwrap_or_default()
                .to_owned();
        }
    }
    let s = replace_image_markers(&s);
    let s = s.trim();
    if s.is_empty() {
        UserText::Injected
    } else {
        UserText::Words(s.to_owned())
    }
}

/// The user's own words in `raw`, or `None` when it holds none (only injected
/// context, or a synthetic message such as a task notification).
pub fn user_words(raw: &str) -> Option<String> {
    match classify_user(raw) {
        UserText::Words(w) => Some(w),
        UserText::Synthetic | UserText::Injected => None,
    }
}

fn starts_with_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.get(..needle.len())
        .is_some_and(|h| h.eq_ignore_ascii_case(needle))
}

/// Removes every `open…close` block (`open` is a tag name prefix: it must end at `>`,
/// whitespace or `/`); an unclosed block is removed to the end of the text.
fn remove_tagged(s: &str, open: &[u8], close: &[u8]) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(at) = find_ci(bytes, open, from) {
        let after = at + open.len();
        let boundary = bytes
            .get(after)
            .is_none_or(|b| *b == b'>' || *b == b'/' || b.is_ascii_whitespace());
        if !boundary {
            from = at + 1;
            continue;
        }
        out.push_str(s.get(copied..at).unwrap_or_default());
        match find_ci(bytes, close, after) {
            Some(c) => {
                copied = c + close.len();
                from = copied;
            }
            None => {
                copied = bytes.len();
                break;
            }
        }
    }
    out.push_str(s.get(copied..).unwrap_or_default());
    out
}

/// Replaces each `[Image: source: …]` with [`IMAGE_PLACEHOLDER`]. The marker ends at
/// the first `]` followed by whitespace, `[` or the end of the text (a path may hold
/// `]`); without one it ends at the end of the line.
fn replace_image_markers(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    while let Some(at) = find_ci(bytes, IMAGE_MARKER, copied) {
        out.push_str(s.get(copied..at).unwrap_or_default());
        out.push_str(IMAGE_PLACEHOLDER);
        let body = at + IMAGE_MARKER.len();
        let line_end = memchr::memchr(b'\n', bytes.get(body..).unwrap_or_default())
            .map_or(bytes.len(), |n| body + n);
        let mut end = line_end;
        let mut i = body;
        while let Some(off) = memchr::memchr(b']', bytes.get(i..line_end).unwrap_or_default()) {
            let close = i + off;
            let next = bytes.get(close + 1);
            if next.is_none_or(|b| b.is_ascii_whitespace() || *b == b'[') {
                end = close + 1;
                break;
            }
            i = close + 1;
        }
        copied = end;
    }
    out.push_str(s.get(copied..).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::plain("  fix the bug ", UserText::Words("fix the bug".into()))]
    #[case::reminder_only("<system-reminder>x</system-reminder>\n", UserText::Injected)]
    #[case::empty("", UserText::Injected)]
    #[case::task(
        "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n<result>done</result>\n</task-notification>",
        UserText::Synthetic
    )]
    #[case::task_then_text(
        "<task-notification><status>done</status></task-notification>\nRead /tmp/out.txt",
        UserText::Synthetic
    )]
    #[case::task_after_reminder(
        "<system-reminder>r</system-reminder><TASK-NOTIFICATION>x</TASK-NOTIFICATION>",
        UserText::Synthetic
    )]
    #[case::task_inside("ok <task-notification>x</task-notification> go", UserText::Words("ok  go".into()))]
    #[case::browser(
        "<in-app-browser-context source=\"ambient-ui-state\">\n- Current URL: https://intra.example.com/secret?t=1\n- Title: X\n</in-app-browser-context>\n\n## My request for ZCode:\nmake the header blue",
        UserText::Words("make the header blue".into())
    )]
    #[case::exec_target(
        "<execution-target-context kind=\"ssh\">host=10.0.0.5 cwd=/srv/app</execution-target-context>\n\n## My request for ZCode:\nrun the tests",
        UserText::Words("run the tests".into())
    )]
    #[case::both_wrappers(
        "<execution-target-context a=\"1\">t</execution-target-context><in-app-browser-context>- Current URL: http://x</in-app-browser-context>\n## My request for ZCode:\nhi",
        UserText::Words("hi".into())
    )]
    #[case::wrapper_without_heading(
        "<in-app-browser-context>- Current URL: http://x</in-app-browser-context>\nhello",
        UserText::Words("hello".into())
    )]
    #[case::unclosed_wrapper(
        "say hi <in-app-browser-context>- Current URL: http://leak",
        UserText::Words("say hi".into())
    )]
    #[case::heading_without_wrapper_kept(
        "## My request for ZCode:\nkeep",
        UserText::Words("## My request for ZCode:\nkeep".into())
    )]
    #[case::not_a_wrapper_name(
        "<in-app-browser-contextual>x</in-app-browser-contextual>",
        UserText::Words("<in-app-browser-contextual>x</in-app-browser-contextual>".into())
    )]
    #[case::image(
        "what is this?\n[Image: source: /Users/ann/Desktop/shot 1.png]",
        UserText::Words("what is this?\n[image]".into())
    )]
    #[case::two_images(
        "[Image: source: /a/b].png] vs [Image: source: C:\\x\\y.jpg] compare",
        UserText::Words("[image] vs [image] compare".into())
    )]
    #[case::image_unclosed("[Image: source: /tmp/x.png\nnext", UserText::Words("[image]\nnext".into()))]
    #[case::image_only("[Image: source: /tmp/x.png]", UserText::Words("[image]".into()))]
    fn classify(#[case] input: &str, #[case] want: UserText) {
        assert_eq!(classify_user(input), want);
    }

    #[test]
    fn words_and_notification() {
        assert_eq!(user_words("<task-notification>x</task-notification>"), None);
        assert_eq!(user_words("<system-reminder>x</system-reminder>"), None);
        assert_eq!(user_words("go").as_deref(), Some("go"));
        assert!(is_task_notification(" <task-notification>x"));
        assert!(!is_task_notification(
            "see <task-notification>x</task-notification>"
        ));
    }

    #[test]
    fn never_leaks_urls_or_paths() {
        let raw = "<in-app-browser-context source=\"ambient-ui-state\">- Current URL: https://a.example/x</in-app-browser-context>\n\n## My request for ZCode:\nlook [Image: source: /home/u/p.png]";
        let w = user_words(raw).unwrap_or_default();
        assert_eq!(w, "look [image]");
        assert!(!w.contains("https://") && !w.contains("/home/"));
    }
}
