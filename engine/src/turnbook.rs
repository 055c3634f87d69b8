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
//! | assistant | the Stop `responseText`, the rollout final answer, and, only when a later turn began (not when forced), the rollout's last text with `interrupted: true` |
//!
//! A turn with no answer whose transcript shows its last model call failed before
//! writing any text has its user message marked `interrupted`.
//!
//! The first two swap places under [`AnswerPrecedence::TranscriptFirst`]: a harness whose
//! Stop payload holds only part of the answer (Claude Code's `last_assistant_message` is
//! the last text block) has the transcript's whole answer win, and its payload is used
//! only when the transcript has nothing for the turn.
//!
//! Keys: [`DedupKey::for_turn`] when the turn id is known, else
//! [`DedupKey::for_content`] of the cleaned text. An id-less Stop pairs with the latest
//! id-less prompt.
//!
//! Bounded memory: the caller keeps the set of planned keys forever and calls
//! [`TurnBook::retain_unplanned`]; settled turns whose messages are all planned are
//! dropped. A turn seen again later (a rescanned or rotated rollout) comes back under
//! the same turn id, so its messages have keys that are already planned.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::text::{clean_injected, user_words};
use crate::turn::{Candidate, DedupKey, Role, RolloutChunk, TurnFragment};

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

/// What the book knows about one turn.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TurnRecord {
    /// `turnId` (hooks) or `turnId`/`traceId` (rollout); `None` for an id-less hook turn.
    pub turn_id: Option<String>,
    /// UserPromptSubmit `prompt`, as received (first one wins).
    pub hook_prompt: Option<String>,
    /// A Stop for this turn arrived.
    pub stopped: bool,
    /// Latest non-empty Stop `responseText`.
    pub stop_text: Option<String>,
    /// The rollout's view of the turn, merged over reads.
    pub rollout: Option<TurnFragment>,
    /// A later turn began (by rollout order or a later prompt).
    pub superseded: bool,
    /// Completed by [`TurnBook::force_complete`] while still open.
    pub forced: bool,
}

impl TurnRecord {
    /// Stopped, superseded or forced.
    pub fn is_complete(&self) -> bool {
        self.stopped || self.superseded || self.forced
    }

    fn user_content(&self) -> Option<String> {
        let hook = self.hook_prompt.as_deref().and_then(user_words);
        hook.or_else(|| user_words(self.rollout.as_ref()?.prompt.as_deref()?))
    }

    /// The assistant content and whether it is an interrupted turn's last text.
    fn assistant_content(&self, precedence: AnswerPrecedence) -> Option<(String, bool)> {
        let nonempty = |s: Option<&str>| s.map(clean_injected).filter(|c| !c.is_empty());
        let stop = || nonempty(self.stop_text.as_deref());
        let transcript = || nonempty(self.rollout.as_ref()?.final_text.as_deref());
        let answer = match precedence {
            AnswerPrecedence::StopFirst => stop().or_else(transcript),
            AnswerPrecedence::TranscriptFirst => transcript().or_else(stop),
        };
        if let Some(s) = answer {
            return Some((s, false));
        }
        let frag = self.rollout.as_ref()?;
        if self.superseded && !self.forced {
            return nonempty(frag.last_text.as_deref()).map(|s| (s, true));
        }
        None
    }

    fn key(&self, role: Role, content: &str) -> DedupKey {
        match &self.turn_id {
            Some(id) => DedupKey::for_turn(id, role),
            None => DedupKey::for_content(role, content),
        }
    }

    /// The messages of this turn, user first, when it is complete.
    fn messages(&self, precedence: AnswerPrecedence) -> Vec<Candidate> {
        let mut out = Vec::new();
        if !self.is_complete() {
            return out;
        }
        let answer = self.assistant_content(precedence);
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
            });
        }
        if let Some((a, interrupted)) = answer {
            out.push(Candidate {
                key: self.key(Role::Assistant, &a),
                turn_id: self.turn_id.clone(),
                role: Role::Assistant,
                content: a,
                interrupted,
            });
        }
        out
    }

    /// Nothing more can come for this turn that would change its messages: it has an
    /// assistant message, or a later turn began, or it was forced. A turn that was only
    /// stopped without any answer text stays until then (the rollout may lag).
    fn is_settled(&self) -> bool {
        self.superseded
            || self.forced
            || self
                .assistant_content(AnswerPrecedence::StopFirst)
                .is_some()
    }
}

/// Turns of one session, in conversation order (the order they were first seen).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TurnBook {
    turns: Vec<TurnRecord>,
    /// The turn of the last main line of the latest rollout chunk: the one turn the
    /// rollout may still be writing.
    last_rollout_turn: Option<String>,
}

impl TurnBook {
    /// An empty book.
    pub fn new() -> TurnBook {
        TurnBook::default()
    }

    /// The turns currently held, in conversation order.
    pub fn turns(&self) -> &[TurnRecord] {
        &self.turns
    }

    /// The turn the rollout may still be writing (the last turn of the latest chunk).
    pub fn last_rollout_turn(&self) -> Option<&str> {
        self.last_rollout_turn.as_deref()
    }

    fn find(&self, turn_id: &str) -> Option<usize> {
        self.turns
            .iter()
            .rposition(|t| t.turn_id.as_deref() == Some(turn_id))
    }

    fn find_or_insert(&mut self, turn_id: &str) -> usize {
        match self.find(turn_id) {
            Some(i) => i,
            None => {
                self.turns.push(TurnRecord {
                    turn_id: Some(turn_id.to_owned()),
                    ..TurnRecord::default()
                });
                self.turns.len() - 1
            }
        }
    }

    /// A UserPromptSubmit. The turn gets its prompt (the first one wins), and every other
    /// open turn is over: ZCode runs one turn at a time.
    pub fn observe_prompt(&mut self, turn_id: Option<&str>, prompt: &str) {
        let idx = match turn_id {
            Some(id) => self.find_or_insert(id),
            None => {
                self.turns.push(TurnRecord::default());
                self.turns.len() - 1
            }
        };
        for (i, t) in self.turns.iter_mut().enumerate() {
            if i == idx {
                if t.hook_prompt.is_none() {
                    t.hook_prompt = Some(prompt.to_owned());
                }
            } else if !t.is_complete() {
                t.superseded = true;
            }
        }
    }

    /// A Stop: the turn is complete; a non-empty `response` (`responseText`) is its final
    /// answer. An id-less Stop pairs with the latest id-less prompt.
    pub fn observe_stop(&mut self, turn_id: Option<&str>, response: Option<&str>) {
        let idx = match turn_id {
            Some(id) => self.find_or_insert(id),
            None => match self
                .turns
                .iter()
                .rposition(|t| t.turn_id.is_none() && t.hook_prompt.is_some())
            {
                Some(i) => i,
                None => {
                    self.turns.push(TurnRecord::default());
                    self.turns.len() - 1
                }
            },
        };
        if let Some(t) = self.turns.get_mut(idx) {
            t.stopped = true;
            if let Some(r) = response.filter(|r| !r.trim().is_empty()) {
                t.stop_text = Some(r.to_owned());
            }
        }
    }

    /// A rollout read. Fragments merge into their turns ([`TurnFragment::merge`]). When
    /// the chunk continues the previous one (read from a saved offset, not rescanned) and
    /// starts with another turn than the last open rollout turn, that turn is over.
    pub fn observe_chunk(&mut self, chunk: &RolloutChunk) {
        let continues = !chunk.rescanned && chunk.start > 0;
        if continues {
            if let (Some(last), Some(first)) = (&self.last_rollout_turn, chunk.fragments.first()) {
                if first.turn_id != *last {
                    if let Some(i) = self.find(last) {
                        if let Some(t) = self.turns.get_mut(i) {
                            if !t.is_complete() {
                                t.superseded = true;
                            }
                        }
                    }
                }
            }
        }
        for frag in &chunk.fragments {
            let i = self.find_or_insert(&frag.turn_id);
            if let Some(t) = self.turns.get_mut(i) {
                match &mut t.rollout {
                    Some(r) => r.merge(frag),
                    None => t.rollout = Some(frag.clone()),
                }
                if frag.superseded && !t.is_complete() {
                    t.superseded = true;
                }
            }
        }
        if let Some(last) = chunk
            .fragments
            .iter()
            .find(|f| !f.superseded)
            .or(chunk.fragments.last())
        {
            self.last_rollout_turn = Some(last.turn_id.clone());
        }
    }

    /// Drain: every open turn counts as complete. A turn without a final answer then
    /// yields only its user message.
    pub fn force_complete(&mut self) {
        for t in &mut self.turns {
            if !t.is_complete() {
                t.forced = true;
            }
        }
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

    /// Drops the settled, complete turns whose messages are all planned. Open turns,
    /// turns still waiting for an answer, and the last rollout turn stay.
    pub fn retain_unplanned(&mut self, is_planned: impl Fn(&Candidate) -> bool) {
        let last = self.last_rollout_turn.clone();
        self.turns.retain(|t| {
            if !t.is_complete() || !t.is_settled() {
                return true;
            }
            if t.turn_id.is_some() && t.turn_id == last {
                return true;
            }
            // Keys of id-less turns depend on the answer chosen; every harness
            // with a transcript that disagrees with its payload has turn ids.
            t.messages(AnswerPrecedence::StopFirst)
                .iter()
                .any(|c| !is_planned(c))
        });
    }
}
