//! One turn of the book and the messages it yields: the content and times tables of the
//! module doc.

use serde::{Deserialize, Serialize};

use super::{user_message, AnswerPrecedence, INTERRUPTED_MARK};
use crate::text::{clean_injected, user_words};
use crate::turn::{Candidate, DedupKey, Role, TurnFragment};

/// What the book knows about one turn.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TurnRecord {
    /// The turn's identity, from whichever source named it first: `turnId` (else
    /// `traceId`) of a hook payload or of the rollout; `None` for an id-less hook turn
    /// (its messages are keyed by content).
    pub turn_id: Option<String>,
    /// The rollout's turn id when it differs from `turn_id` (a hook named the turn first
    /// by its `traceId`, or by nothing).
    pub rollout_id: Option<String>,
    /// UserPromptSubmit `prompt`, as received (first one wins).
    pub hook_prompt: Option<String>,
    /// A Stop for this turn arrived.
    pub stopped: bool,
    /// Latest non-empty Stop `responseText`.
    pub stop_text: Option<String>,
    /// Latest non-empty Stop `responsePreview` (truncated: the answer of last resort).
    pub stop_preview: Option<String>,
    /// Further UserPromptSubmit prompts of this turn (the user typed into the running
    /// turn), as received, in order.
    pub hook_steering: Vec<String>,
    /// The rollout's view of the turn, merged over reads.
    pub rollout: Option<TurnFragment>,
    /// A later turn began (by rollout order or a later prompt).
    pub superseded: bool,
    /// Completed by [`TurnBook::force_complete`](super::TurnBook::force_complete) while
    /// still open.
    pub forced: bool,
    /// A drain ([`TurnBook::force_complete`](super::TurnBook::force_complete)) saw this turn:
    /// whatever is known is final.
    pub drained: bool,
    /// When its first UserPromptSubmit fired (the hook event's time, ms since the epoch).
    pub prompt_hook_ms: Option<u64>,
    /// When its first Stop fired (ms since the epoch).
    pub stop_hook_ms: Option<u64>,
    /// A UserPromptSubmit, PreToolUse or Stop of this turn was received.
    pub hook_seen: bool,
    /// A hook of this turn refused it (capture paused, off, bypassed), or the user forgot
    /// it: why. Such a turn is never sent.
    pub refused: Option<String>,
}

impl TurnRecord {
    /// Stopped, superseded or forced.
    pub fn is_complete(&self) -> bool {
        self.stopped || self.superseded || self.forced
    }

    /// A hook saw this turn, and what only a transcript gives is still missing: the prompt
    /// (a wordless prompt hook, and no transcript read of the turn), or the answer (it
    /// stopped without one, and no transcript read showed one).
    pub fn awaits_transcript(&self) -> bool {
        let frag = self.rollout.as_ref();
        let no_prompt =
            frag.is_none() && self.hook_prompt.as_deref().and_then(user_words).is_none();
        let no_answer = self.stopped
            && self.stop_text.is_none()
            && frag.is_none_or(|r| r.final_text.is_none() && r.last_text.is_none());
        self.hook_seen && (no_prompt || no_answer)
    }

    /// The user message: the prompt's words, then what the user typed into the running
    /// turn (steering), in order, separated by blank lines.
    fn user_content(&self) -> Option<String> {
        let frag = self.rollout.as_ref();
        let prompt = self
            .hook_prompt
            .as_deref()
            .filter(|p| user_words(p).is_some())
            .or_else(|| frag?.prompt.as_deref());
        let steering = frag
            .into_iter()
            .flat_map(|f| f.steering.iter().map(|(_, s)| s.as_str()))
            .chain(self.hook_steering.iter().map(String::as_str));
        user_message(prompt, steering)
    }

    /// The rollout says the turn ended without a final answer (its latest call has no
    /// `finishReason`: killed, stopped, or an error line).
    fn rollout_interrupted(&self) -> bool {
        self.rollout
            .as_ref()
            .is_some_and(|f| f.interrupted && f.final_text.is_none())
    }

    /// The assistant content and whether it is an interrupted turn's last text (then
    /// marked with [`INTERRUPTED_MARK`]).
    ///
    /// | first non-empty of | when |
    /// |---|---|
    /// | Stop `responseText` | always (marked when the rollout says interrupted) |
    /// | the rollout's final answer | always (first under [`AnswerPrecedence::TranscriptFirst`]) |
    /// | Stop `responsePreview` | the turn is over for good (a later turn began, or forced) |
    /// | the rollout's last text, marked | a later turn began, or the rollout says interrupted |
    fn assistant_content(&self, precedence: AnswerPrecedence) -> Option<(String, bool)> {
        let nonempty = |s: Option<&str>| s.map(clean_injected).filter(|c| !c.is_empty());
        let interrupted = self.rollout_interrupted();
        let mark = |s: String, int: bool| {
            if int {
                (format!("{INTERRUPTED_MARK}{s}"), true)
            } else {
                (s, false)
            }
        };
        let frag = self.rollout.as_ref();
        let stop = || nonempty(self.stop_text.as_deref()).map(|s| mark(s, interrupted));
        let transcript =
            || nonempty(frag.and_then(|f| f.final_text.as_deref())).map(|s| (s, false));
        let answer = match precedence {
            AnswerPrecedence::StopFirst => stop().or_else(transcript),
            AnswerPrecedence::TranscriptFirst => transcript().or_else(stop),
        };
        if answer.is_some() {
            return answer;
        }
        let over = self.superseded || self.forced || self.drained;
        if over {
            if let Some(s) = nonempty(self.stop_preview.as_deref()) {
                return Some(mark(s, interrupted));
            }
        }
        if (self.superseded && !self.forced) || interrupted {
            return nonempty(frag.and_then(|f| f.last_text.as_deref())).map(|s| mark(s, true));
        }
        None
    }

    /// A turn known only from its Stop (no prompt hook, not yet in the rollout) waits
    /// for the rollout, so that its user message is planned before its answer; a drain
    /// or a later turn ends the wait.
    fn waits_for_rollout(&self) -> bool {
        self.rollout.is_none()
            && self.hook_prompt.is_none()
            && !(self.superseded || self.forced || self.drained)
    }

    /// When each of the turn's messages was written: `(user, assistant)` (see the
    /// "Times" table in the module docs).
    fn times(&self) -> (Option<u64>, Option<u64>) {
        let frag = self.rollout.as_ref();
        let prompt = self.prompt_hook_ms.or(frag.and_then(|f| f.prompt_ms));
        let answer = self.stop_hook_ms.or(frag.and_then(|f| f.answer_ms));
        (prompt.or(answer), answer.or(prompt))
    }

    fn key(&self, role: Role, content: &str) -> DedupKey {
        match &self.turn_id {
            Some(id) => DedupKey::for_turn(id, role),
            None => DedupKey::for_content(role, content),
        }
    }

    /// The messages of this turn, user first, when it is complete.
    pub fn messages(&self, precedence: AnswerPrecedence) -> Vec<Candidate> {
        let mut out = Vec::new();
        if !self.is_complete() || self.waits_for_rollout() {
            return out;
        }
        let answer = self.assistant_content(precedence);
        let (user_ms, answer_ms) = self.times();
        if let Some(u) = self.user_content() {
            // A prompt whose model call failed without writing any text (an API
            // error) is sent alone, marked as such.
            let failed = answer.is_none()
                && self
                    .rollout
                    .as_ref()
                    .is_some_and(|r| r.interrupted && r.last_text.is_none());
            out.push(Candidate {
                key: self.key(Role::User, &u),
                turn_id: self.turn_id.clone(),
                role: Role::User,
                content: u,
                interrupted: failed,
                created_at_ms: user_ms,
            });
        }
        if let Some((a, interrupted)) = answer {
            out.push(Candidate {
                key: self.key(Role::Assistant, &a),
                turn_id: self.turn_id.clone(),
                role: Role::Assistant,
                content: a,
                interrupted,
                created_at_ms: answer_ms,
            });
        }
        out
    }

    /// A message of this turn was planned under its turn keys.
    pub(super) fn any_planned(&self, is_planned: &impl Fn(&DedupKey) -> bool) -> bool {
        self.turn_id.as_deref().is_some_and(|id| {
            [Role::User, Role::Assistant]
                .into_iter()
                .any(|role| is_planned(&DedupKey::for_turn(id, role)))
        })
    }

    /// Nothing more can come for this turn that would change its messages: it has an
    /// assistant message, or a later turn began, or it was forced. A turn that was only
    /// stopped without any answer text stays until then (the rollout may lag).
    pub fn is_settled(&self) -> bool {
        self.superseded
            || self.forced
            || (!self.waits_for_rollout()
                && self
                    .assistant_content(AnswerPrecedence::StopFirst)
                    .is_some())
    }
}
