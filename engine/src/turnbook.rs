//! The turn book: hook payloads and rollout fragments merged into turns, and the
//! messages of the turns that are complete.
//!
//! # Design
//!
//! Pure and deterministic: the projector keeps a `TurnBook` in its state, feeds it the
//! journaled events in order and snapshots it with serde. It never does I/O.
//!
//! A turn is **complete** once
//! * its Stop arrived ([`TurnBook::observe_stop`]), or
//! * a later turn began: a rollout line of another turn followed its lines (in one
//!   chunk, or as the first fragment of the next chunk read from the saved offset), or a
//!   UserPromptSubmit of another turn arrived ([`TurnBook::observe_prompt`]; ZCode runs
//!   one turn at a time, so every other open turn is over), or
//! * [`TurnBook::force_complete`] was called (drain).
//!
//! Content of a complete turn ([`TurnBook::candidates`]), injected blocks removed, must
//! be non-empty:
//!
//! | message | first non-empty of |
//! |---|---|
//! | user | the user's words ([`crate::text::user_words`]) of the hook prompt, else of the rollout prompt; none for a turn a task notification began |
//! | assistant | the Stop `responseText`, the rollout final answer, the Stop `responsePreview` once the turn is over for good, the rollout's last text marked [`INTERRUPTED_MARK`] when a later turn began or the rollout says the turn was interrupted |
//!
//! A turn known only from its Stop (no prompt hook and no rollout line yet) yields
//! nothing until the rollout shows it, a later turn begins or a drain forces it: within
//! a turn, the user message is always planned before the answer.
//!
//! A turn with no answer whose transcript shows its last model call failed before
//! writing any text has its user message marked `interrupted`.
//!
//! Times: each message carries when it was written ([`Candidate::created_at_ms`]), so that
//! a turn delivered late (a detached worker, an outage, a drain hours later) reaches the
//! server with its own time, not the time it was sent. The hook's time is the moment the
//! event happened on this machine; the transcript's is the agent's own record.
//!
//! | message | first known of |
//! |---|---|
//! | user | the first UserPromptSubmit's time, the transcript's prompt time, the answer's time |
//! | assistant | the first Stop's time, the transcript's time of the latest answer text, the prompt's time |
//!
//! The Stop `responseText` and the rollout's final answer swap places under
//! [`AnswerPrecedence::TranscriptFirst`]: a harness whose Stop payload holds only part of
//! the answer (Claude Code's `last_assistant_message` is the last text block) has the
//! transcript's whole answer win, and its payload is used only when the transcript has
//! nothing for the turn.
//!
//! Keys: [`DedupKey::for_turn`] when the turn id is known, else
//! [`DedupKey::for_content`] of the cleaned text. One identity per turn, whichever source
//! names it first: a hook without a `turnId` names its turn by its `traceId` or by nothing,
//! and the rollout's lines of that turn (same `traceId`, or the same prompt for an id-less
//! turn) join it instead of making a second turn; when they join a turn named by its
//! `traceId` before any of its messages was planned, the rollout's `turnId` becomes its
//! identity ([`TurnBook::observe_planned`] keeps whatever identity was planned). An id-less Stop ends
//! the latest turn that has not stopped.
//!
//! # Consent
//!
//! A turn is sent only when one of its own hooks saw it and none refused it
//! ([`TurnBook::consent`], the one rule; [`TurnBook::sendable_by`] is what the planner plans):
//!
//! | consent | when |
//! |---|---|
//! | [`Consent::NoHook`] | no UserPromptSubmit, PreToolUse or Stop of the turn was received: the transcript alone shows it (ovhook was disabled, uninstalled, or not yet installed) |
//! | [`Consent::Refused`] | a hook of the turn did not capture ([`TurnBook::observe_refused`]: capture paused, off or bypassed), or the user forgot it; sticky by turn id, so a later hook of the same turn never lifts it |
//! | [`Consent::Given`] | otherwise |
//!
//! A hook of the turn is matched the way hooks join turns: by turn id, rollout id or `traceId`,
//! an id-less Stop by the latest turn not stopped, an id-less prompt by its words, and an id-less
//! prompt without words (Copilot journals none: the transcript has the prompt) as an unnamed
//! turn that the first named hook of an unknown turn names ([`TurnBook::observe_stop`]) and that
//! otherwise the first rollout turn the book does not know joins, in order.
//! [`TurnBook::candidates`] stays the view of what the turns hold, consent aside (`ovreplay plan`).
//!
//! Bounded memory: the caller keeps the set of planned keys forever and calls
//! [`TurnBook::retain_unplanned`]; settled turns whose messages are all planned are
//! dropped, but for the latest [`KEPT_UNSEEN_TURNS`] the rollout has not shown yet (their
//! rollout lines must still find them). A turn seen again later (a rescanned or rotated
//! rollout) comes back under the same turn id, so its messages have keys that are already
//! planned.
//!
//! # Files
//!
//! * `record.rs`: one turn ([`TurnRecord`]) and the messages it yields (the content and
//!   times tables above).
//! * `join.rs`: which turn a hook's id or a rollout fragment belongs to.
//! * `observe.rs`: how each hook and rollout read changes the book.
//! * `consent.rs`: whether a turn may be sent, and refusals.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::text::user_words;
use crate::turn::{Candidate, DedupKey};

mod consent;
mod join;
mod observe;
mod record;

pub use consent::{Consent, KEPT_REFUSED_IDS};
pub use record::TurnRecord;

/// How many of the latest turns the rollout has not shown yet the book keeps after their
/// messages are planned, so that their rollout lines still join them.
pub const KEPT_UNSEEN_TURNS: usize = 32;

/// Leads the last text of a turn that ended without a final answer, so that the server
/// and anyone reading it can tell it is not an answer.
pub const INTERRUPTED_MARK: &str = "[interrupted] ";

/// A turn's user message: the user's words of its prompt, then those of each steering
/// message not already there, in order, separated by blank lines; `None` when there are
/// no words at all.
pub fn user_message<'a>(
    prompt: Option<&'a str>,
    steering: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let mut parts: Vec<String> = prompt.and_then(user_words).into_iter().collect();
    for s in steering.into_iter().filter_map(user_words) {
        if !parts.contains(&s) {
            parts.push(s);
        }
    }
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// Which of a turn's answers wins when both the Stop payload and the transcript
/// (rollout) have one. Chosen by the harness, per delivery run; never journaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnswerPrecedence {
    /// The Stop payload's answer first (ZCode: `responseText` is the whole answer).
    #[default]
    StopFirst,
    /// The transcript's final answer first; the Stop payload's only when the
    /// transcript has none for the turn.
    TranscriptFirst,
}

/// Turns of one session, in conversation order (the order they were first seen).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TurnBook {
    turns: Vec<TurnRecord>,
    /// The turn of the last main line of the latest rollout chunk: the one turn the
    /// rollout may still be writing.
    last_rollout_turn: Option<String>,
    /// Turn ids refused ([`TurnBook::observe_refused`]) and why, oldest first (at most
    /// [`KEPT_REFUSED_IDS`]): a turn known by one of them is refused whenever it shows up.
    refused_ids: Vec<(String, String)>,
}

impl TurnBook {
    /// An empty book.
    pub fn new() -> TurnBook {
        TurnBook::default()
    }

    /// A book of `turns` whose last rollout turn is `last_rollout_turn`, with no refused ids
    /// (a snapshot of a version that kept none).
    pub(crate) fn from_parts(
        turns: Vec<TurnRecord>,
        last_rollout_turn: Option<String>,
    ) -> TurnBook {
        TurnBook {
            turns,
            last_rollout_turn,
            refused_ids: Vec::new(),
        }
    }

    /// Whether the transcript still owes the latest turn a hook saw what only it can give
    /// ([`TurnRecord::awaits_transcript`]): an agent that writes its transcript after its
    /// hooks ran (Copilot CLI flushes `events.jsonl` in batches, after its `agentStop` and
    /// `sessionEnd` hooks). Only the latest turn counts (a subagent's turn, whole from its
    /// hook, is passed over), so an older turn the transcript never showed costs no wait.
    pub fn awaits_transcript(&self) -> bool {
        self.turns
            .iter()
            .rev()
            .find(|t| {
                !t.turn_id
                    .as_deref()
                    .is_some_and(crate::subagent::is_turn_id)
            })
            .is_some_and(|t| self.consent(t).is_given() && t.awaits_transcript())
    }

    /// The turns currently held, in conversation order.
    pub fn turns(&self) -> &[TurnRecord] {
        &self.turns
    }

    /// The turn the rollout may still be writing (the last turn of the latest chunk).
    pub fn last_rollout_turn(&self) -> Option<&str> {
        self.last_rollout_turn.as_deref()
    }

    /// The messages of complete turns whose content is known, in conversation order,
    /// user before assistant. Content is cleaned of injected blocks, never truncated,
    /// `<private>` not removed. No key appears twice (a later id-less duplicate of the
    /// same text is left out).
    pub fn candidates(&self) -> Vec<Candidate> {
        self.candidates_by(AnswerPrecedence::StopFirst)
    }

    /// [`TurnBook::candidates`] with the answer chosen by `precedence`.
    pub fn candidates_by(&self, precedence: AnswerPrecedence) -> Vec<Candidate> {
        let mut seen: HashSet<DedupKey> = HashSet::new();
        let mut out = Vec::new();
        for t in &self.turns {
            for c in t.messages(precedence) {
                if seen.insert(c.key.clone()) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// Drops the settled, complete turns whose messages are all planned, or that may never
    /// be sent ([`TurnBook::consent`]). Open turns, turns still waiting for an answer, and the
    /// last rollout turn stay.
    pub fn retain_unplanned(&mut self, is_planned: impl Fn(&Candidate) -> bool) {
        let last = self.last_rollout_turn.clone();
        let never: Vec<bool> = self
            .turns
            .iter()
            .map(|t| !self.consent(t).is_given())
            .collect();
        let mut never = never.into_iter();
        // The latest turns the rollout has not shown yet stay, planned or not: a turn a hook
        // named by its `traceId` or by nothing is joined by its rollout lines only while it
        // is in the book, and the rollout may lag a few turns behind the hooks.
        let unseen = self.turns.iter().filter(|t| t.rollout.is_none()).count();
        let mut unseen_to_drop = unseen.saturating_sub(KEPT_UNSEEN_TURNS);
        self.turns.retain(|t| {
            let never = never.next().unwrap_or(false);
            if t.rollout.is_none() {
                if unseen_to_drop == 0 {
                    return true;
                }
                unseen_to_drop -= 1;
            }
            if !t.is_complete() || !t.is_settled() {
                return true;
            }
            if last.is_some() && t.rollout_id.as_ref().or(t.turn_id.as_ref()) == last.as_ref() {
                return true;
            }
            // Keys of id-less turns depend on the answer chosen; every harness
            // with a transcript that disagrees with its payload has turn ids.
            !never
                && t.messages(AnswerPrecedence::StopFirst)
                    .iter()
                    .any(|c| !is_planned(c))
        });
    }
}
