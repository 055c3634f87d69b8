//! Control prompts: what the user types to steer the running work ("yes", "continue",
//! "status?", a bare slash command) rather than to ask something. Their meaning is all in
//! the conversation the agent already has, so a recall query made of them finds nothing
//! useful and only costs a server round trip.
//!
//! # Design
//!
//! [`control_prompt`] is the one rule; UserPromptSubmit skips recall for a prompt it
//! classifies, when `recall.skip_control_prompts` is on (the default). The match is
//! strict: the whole prompt, once normalised, must be one of the phrases below (or have
//! nothing to search at all); one more word, a noun, a constraint, and it is a real query.
//!
//! Normalising: the user's words ([`super::user_words`]), Unicode-lowercased, runs of
//! whitespace made one space, then trailing punctuation (`. ! ? 。 ！ ？ ~ …`) and a
//! leading or trailing "please"/"pls" removed. Anything over [`MAX_CONTROL_CHARS`]
//! characters is never a control prompt.
//!
//! | kind | the whole prompt is |
//! |---|---|
//! | [`ControlKind::Empty`] | no letter and no digit (`?`, `...`, `👍`) |
//! | [`ControlKind::SlashCommand`] | one `/word` token (`/compact`, `/review:pr`) |
//! | [`ControlKind::Acknowledgement`] | a yes, no, thanks or approval (`ok`, `yes`, `lgtm`, `好的`, …) |
//! | [`ControlKind::Continuation`] | go on with what is under way (`continue`, `go ahead`, `继续`, …) |
//! | [`ControlKind::Status`] | a question about progress (`status`, `any update`, `进度`, …) |

/// Longest prompt (in characters, after normalising) that can be a control prompt.
pub const MAX_CONTROL_CHARS: usize = 40;

/// Why a prompt is a control prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlKind {
    /// Nothing to search: no letter or digit.
    Empty,
    /// A bare slash command.
    SlashCommand,
    /// A yes, no, thanks or approval.
    Acknowledgement,
    /// Go on with the work under way.
    Continuation,
    /// A question about progress.
    Status,
}

impl ControlKind {
    /// A short stable name, for the log (`empty`, `slash-command`, `acknowledgement`,
    /// `continuation`, `status`).
    pub fn as_str(self) -> &'static str {
        match self {
            ControlKind::Empty => "empty",
            ControlKind::SlashCommand => "slash-command",
            ControlKind::Acknowledgement => "acknowledgement",
            ControlKind::Continuation => "continuation",
            ControlKind::Status => "status",
        }
    }
}

const ACKNOWLEDGEMENTS: &[&str] = &[
    "ok",
    "okay",
    "k",
    "kk",
    "yes",
    "y",
    "yep",
    "yeah",
    "yup",
    "sure",
    "fine",
    "good",
    "great",
    "nice",
    "cool",
    "perfect",
    "thanks",
    "thank you",
    "thx",
    "ty",
    "confirm",
    "confirmed",
    "approve",
    "approved",
    "agreed",
    "lgtm",
    "sounds good",
    "looks good",
    "right",
    "correct",
    "exactly",
    "done",
    "no",
    "nope",
    "n",
    "ok thanks",
    "yes please",
    "好",
    "好的",
    "可以",
    "行",
    "嗯",
    "对",
    "是",
    "是的",
    "没问题",
    "确认",
    "同意",
    "批准",
    "收到",
    "谢谢",
];

const CONTINUATIONS: &[&str] = &[
    "continue",
    "go on",
    "go ahead",
    "proceed",
    "keep going",
    "carry on",
    "next",
    "do it",
    "go",
    "start",
    "resume",
    "retry",
    "try again",
    "again",
    "yes continue",
    "ok continue",
    "please continue",
    "继续",
    "继续吧",
    "继续执行",
    "接着",
    "接着做",
    "开始",
    "开始吧",
    "执行",
    "执行吧",
    "重试",
];

const STATUSES: &[&str] = &[
    "status",
    "progress",
    "update",
    "any update",
    "any updates",
    "status update",
    "what's the status",
    "what is the status",
    "is it done",
    "are we done",
    "done yet",
    "进度",
    "进度如何",
    "进度怎么样",
    "完成了吗",
];

/// The prompt as the table of the module docs compares it.
fn normalise(words: &str) -> String {
    let lowered = words.to_lowercase();
    let mut s = lowered.split_whitespace().collect::<Vec<_>>().join(" ");
    loop {
        let before = s.len();
        s = s
            .trim_end_matches(['.', '!', '?', '。', '！', '？', '~', '…', ',', '，'])
            .trim()
            .to_owned();
        for polite in ["please", "pls", "请"] {
            if let Some(rest) = s.strip_prefix(polite) {
                if rest.is_empty() || rest.starts_with(' ') || polite == "请" {
                    s = rest.trim().to_owned();
                }
            }
            if let Some(rest) = s.strip_suffix(polite) {
                if rest.is_empty() || rest.ends_with(' ') || rest.ends_with(',') {
                    s = rest.trim().to_owned();
                }
            }
        }
        if s.len() == before {
            return s;
        }
    }
}

/// What kind of control prompt `prompt` is, or `None` for a prompt worth a recall query.
/// `prompt` is the user's words of a prompt ([`super::user_words`]).
pub fn control_prompt(prompt: &str) -> Option<ControlKind> {
    if !prompt.chars().any(char::is_alphanumeric) {
        return Some(ControlKind::Empty);
    }
    let s = normalise(prompt);
    if s.chars().count() > MAX_CONTROL_CHARS {
        return None;
    }
    if let Some(cmd) = s.strip_prefix('/') {
        let bare = !cmd.is_empty()
            && cmd
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
        return bare.then_some(ControlKind::SlashCommand);
    }
    let is = |list: &[&str]| list.contains(&s.as_str());
    if is(ACKNOWLEDGEMENTS) {
        Some(ControlKind::Acknowledgement)
    } else if is(CONTINUATIONS) {
        Some(ControlKind::Continuation)
    } else if is(STATUSES) {
        Some(ControlKind::Status)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn control_prompts_are_recognised() {
        for (prompt, kind) in [
            ("yes", ControlKind::Acknowledgement),
            ("  OK!  ", ControlKind::Acknowledgement),
            ("Sounds good.", ControlKind::Acknowledgement),
            ("好的。", ControlKind::Acknowledgement),
            ("continue", ControlKind::Continuation),
            ("Please continue", ControlKind::Continuation),
            ("go on...", ControlKind::Continuation),
            ("keep   going", ControlKind::Continuation),
            ("继续", ControlKind::Continuation),
            ("status?", ControlKind::Status),
            ("any update?", ControlKind::Status),
            ("/compact", ControlKind::SlashCommand),
            ("/review:pr", ControlKind::SlashCommand),
            ("?", ControlKind::Empty),
            ("👍", ControlKind::Empty),
            ("...", ControlKind::Empty),
            ("/", ControlKind::Empty),
        ] {
            assert_eq!(control_prompt(prompt), Some(kind), "{prompt:?}");
        }
    }

    #[test]
    fn real_questions_are_not_control_prompts() {
        for prompt in [
            "yes, but use postgres instead",
            "continue with the migration to tokio",
            "no, the bug is in the parser",
            "what is the status of the rollout reader?",
            "/compact keep the test plan",
            "ok so how does the journal recover a torn tail",
            "fix it",
            "why",
            "tests",
            "okay okay okay okay okay okay okay okay okay",
        ] {
            assert_eq!(control_prompt(prompt), None, "{prompt:?}");
        }
    }

    proptest! {
        /// A control prompt followed by a word of a real question is a real question.
        #[test]
        fn one_more_word_makes_a_query(
            phrase in prop::sample::select(vec!["yes", "continue", "ok", "go on", "status"]),
            noun in "[a-z]{4,12}",
        ) {
            prop_assume!(control_prompt(&noun).is_none() && noun != "please");
            let words = format!("{phrase} {noun}");
            prop_assert_eq!(control_prompt(&words), None);
        }
    }
}
