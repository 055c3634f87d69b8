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

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::text::{clean_injected, user_words};
use crate::turn::{Candidate, DedupKey, Role, TranscriptChunk, TurnFragment};

mod consent;

pub use consent::{Consent, KEPT_REFUSED_IDS};

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
    /// Completed by [`TurnBook::force_complete`] while still open.
    pub forced: bool,
    /// A drain ([`TurnBook::force_complete`]) saw this turn: whatever is known is final.
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
    fn any_planned(&self, is_planned: &impl Fn(&DedupKey) -> bool) -> bool {
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

    /// The turns currently held, in conversation order.
    pub fn turns(&self) -> &[TurnRecord] {
        &self.turns
    }

    /// The turn the rollout may still be writing (the last turn of the latest chunk).
    pub fn last_rollout_turn(&self) -> Option<&str> {
        self.last_rollout_turn.as_deref()
    }

    /// The turn a hook's id names: its identity, its rollout id, or the `traceId` of its
    /// rollout lines (a hook without a `turnId` names the turn by its `traceId`).
    fn find(&self, turn_id: &str) -> Option<usize> {
        self.turns.iter().rposition(|t| {
            t.turn_id.as_deref() == Some(turn_id)
                || t.rollout_id.as_deref() == Some(turn_id)
                || t.rollout
                    .as_ref()
                    .and_then(|r| r.trace_id.as_deref())
                    .is_some_and(|tr| tr == turn_id)
        })
    }

    /// The turn a rollout fragment belongs to: the one already holding that rollout id,
    /// else one a hook named by the fragment's `traceId`, else an id-less hook turn
    /// with the same prompt that the rollout has not shown yet. One identity per turn,
    /// whichever source named it first.
    fn find_for_fragment(&self, frag: &TurnFragment) -> Option<usize> {
        let id = frag.turn_id.as_str();
        if let Some(i) = self
            .turns
            .iter()
            .rposition(|t| t.rollout_id.as_deref().or(t.turn_id.as_deref()) == Some(id))
        {
            return Some(i);
        }
        if let Some(tr) = frag.trace_id.as_deref() {
            if let Some(i) = self
                .turns
                .iter()
                .rposition(|t| t.rollout.is_none() && t.turn_id.as_deref() == Some(tr))
            {
                return Some(i);
            }
        }
        if let Some(words) = frag.prompt.as_deref().and_then(user_words) {
            if let Some(i) = self.turns.iter().rposition(|t| {
                t.turn_id.is_none()
                    && t.rollout.is_none()
                    && t.hook_prompt.as_deref().and_then(user_words).as_deref()
                        == Some(words.as_str())
            }) {
                return Some(i);
            }
        }
        // A wordless id-less prompt hook's turn: the first rollout turn the book does not
        // know is the earliest such turn after the last turn the rollout showed (hooks and
        // rollout keep conversation order; one before it never reached the rollout).
        let after = self
            .turns
            .iter()
            .rposition(|t| t.rollout.is_some())
            .map_or(0, |i| i + 1);
        self.turns
            .iter()
            .skip(after)
            .position(TurnRecord::is_unnamed)
            .map(|i| i + after)
    }

    /// The turn holding rollout turn id `id`.
    fn find_rollout(&self, id: &str) -> Option<usize> {
        self.turns
            .iter()
            .rposition(|t| t.rollout_id.as_deref().or(t.turn_id.as_deref()) == Some(id))
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

    /// A UserPromptSubmit whose time is not known: [`TurnBook::observe_prompt_at`].
    pub fn observe_prompt(&mut self, turn_id: Option<&str>, prompt: &str) {
        self.observe_prompt_at(turn_id, prompt, None);
    }

    /// A UserPromptSubmit that fired at `at_ms`. The turn gets its prompt and its time (the
    /// first of each wins), and every other open turn is over: ZCode runs one turn at a time.
    pub fn observe_prompt_at(&mut self, turn_id: Option<&str>, prompt: &str, at_ms: Option<u64>) {
        self.observe_prompt_hook_at(turn_id, Some(prompt), at_ms);
    }

    /// A UserPromptSubmit whose prompt was not journaled (`None`: Copilot's, whose transcript
    /// has the prompt, or one received without content): the turn is still seen by a hook and
    /// every other open turn is over. An id-less one without a prompt is an unnamed turn (see
    /// the consent section of the module doc).
    pub fn observe_prompt_hook(&mut self, turn_id: Option<&str>, prompt: Option<&str>) {
        self.observe_prompt_hook_at(turn_id, prompt, None);
    }

    /// [`TurnBook::observe_prompt_hook`] that fired at `at_ms` (the time of a prompt with words).
    fn observe_prompt_hook_at(
        &mut self,
        turn_id: Option<&str>,
        prompt: Option<&str>,
        at_ms: Option<u64>,
    ) {
        let idx = match turn_id {
            Some(id) => {
                let i = self.find_or_insert(id);
                self.apply_refused_ids(i);
                i
            }
            None => {
                self.turns.push(TurnRecord::default());
                self.turns.len() - 1
            }
        };
        for (i, t) in self.turns.iter_mut().enumerate() {
            if i == idx {
                t.hook_seen = true;
                let Some(prompt) = prompt else { continue };
                if t.prompt_hook_ms.is_none() {
                    t.prompt_hook_ms = at_ms;
                }
                match &t.hook_prompt {
                    None => t.hook_prompt = Some(prompt.to_owned()),
                    // Another prompt for the same turn: typed into the running turn.
                    Some(p) if p != prompt && !t.hook_steering.iter().any(|s| s == prompt) => {
                        t.hook_steering.push(prompt.to_owned());
                    }
                    Some(_) => {}
                }
            } else if !t.is_complete() {
                t.superseded = true;
            }
        }
    }

    /// A Stop: the turn is complete; a non-empty `response` (`responseText`) is its final
    /// answer. An id-less Stop pairs with the latest id-less prompt.
    pub fn observe_stop(&mut self, turn_id: Option<&str>, response: Option<&str>) {
        self.observe_stop_with_preview(turn_id, response, None, None);
    }

    /// [`TurnBook::observe_stop`] with the Stop's `responsePreview`, used only when
    /// nothing better ever comes (see the assistant table of [`TurnRecord`]), and the time
    /// the Stop fired (the first Stop's time wins).
    pub fn observe_stop_with_preview(
        &mut self,
        turn_id: Option<&str>,
        response: Option<&str>,
        preview: Option<&str>,
        at_ms: Option<u64>,
    ) {
        let idx = match turn_id {
            Some(id) => self.find_or_name(id),
            // An id-less Stop ends the latest turn that has not stopped (ZCode runs one
            // turn at a time), whoever named it; a turn a later one superseded is over.
            None => match self.turns.iter().rposition(|t| !t.stopped && !t.superseded) {
                Some(i) => i,
                None => {
                    self.turns.push(TurnRecord::default());
                    self.turns.len() - 1
                }
            },
        };
        if let Some(t) = self.turns.get_mut(idx) {
            t.stopped = true;
            if t.stop_hook_ms.is_none() {
                t.stop_hook_ms = at_ms;
            }
            t.hook_seen = true;
            if let Some(r) = response.filter(|r| !r.trim().is_empty()) {
                t.stop_text = Some(r.to_owned());
            }
            if let Some(p) = preview.filter(|p| !p.trim().is_empty()) {
                t.stop_preview = Some(p.to_owned());
            }
        }
    }

    /// A rollout read, with nothing planned yet: [`TurnBook::observe_chunk_given`].
    pub fn observe_chunk(&mut self, chunk: &TranscriptChunk) {
        self.observe_chunk_given(chunk, |_| false);
    }

    /// A rollout read. Fragments merge into their turns ([`TurnFragment::merge`]). When
    /// the chunk continues the previous one (read from a saved offset, not rescanned) and
    /// starts with another turn than the last open rollout turn, that turn is over.
    ///
    /// A turn a hook named by its `traceId` or by nothing takes the rollout's `turnId` as
    /// its identity when none of its messages was planned yet (`is_planned` of their
    /// keys): the server then holds the turn under ZCode's own id. Once a message is
    /// planned the identity stays, so a turn never gets a second set of keys.
    pub fn observe_chunk_given(
        &mut self,
        chunk: &TranscriptChunk,
        is_planned: impl Fn(&DedupKey) -> bool,
    ) {
        let continues = !chunk.rescanned && chunk.start > 0;
        if continues {
            if let (Some(last), Some(first)) = (&self.last_rollout_turn, chunk.fragments.first()) {
                if first.turn_id != *last {
                    if let Some(i) = self.find_rollout(last) {
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
            let i = match self.find_for_fragment(frag) {
                Some(i) => i,
                None => {
                    self.turns.push(TurnRecord {
                        turn_id: Some(frag.turn_id.clone()),
                        ..TurnRecord::default()
                    });
                    self.turns.len() - 1
                }
            };
            if let Some(t) = self.turns.get_mut(i) {
                if t.is_unnamed() {
                    // Nothing of an unnamed turn was planned (it had no text): the rollout
                    // names it.
                    t.turn_id = Some(frag.turn_id.clone());
                }
                if t.turn_id.as_deref() != Some(frag.turn_id.as_str()) {
                    let named_by_trace = t.turn_id.is_some() && t.turn_id == frag.trace_id;
                    if named_by_trace && t.rollout.is_none() && !t.any_planned(&is_planned) {
                        t.turn_id = Some(frag.turn_id.clone());
                        t.rollout_id = None;
                    } else {
                        t.rollout_id = Some(frag.turn_id.clone());
                    }
                }
                match &mut t.rollout {
                    Some(r) => r.merge(frag),
                    None => t.rollout = Some(frag.clone()),
                }
                if frag.superseded && !t.is_complete() {
                    t.superseded = true;
                }
            }
            self.apply_refused_ids(i);
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

    /// Messages of turn `turn_id` were planned: that is the turn's identity from now on.
    /// A turn that took its rollout `turnId` while the messages were planned under the
    /// hook's `traceId` (journaled by a build that kept the first name) goes back to the
    /// `traceId`, so a replay never gives it a second set of keys.
    pub fn observe_planned(&mut self, turn_id: &str) {
        let Some(t) = self.turns.iter_mut().rev().find(|t| {
            t.turn_id.as_deref() != Some(turn_id)
                && t.rollout
                    .as_ref()
                    .and_then(|r| r.trace_id.as_deref())
                    .is_some_and(|tr| tr == turn_id)
        }) else {
            return;
        };
        if t.rollout_id.is_none() {
            t.rollout_id = t.turn_id.take();
            t.turn_id = Some(turn_id.to_owned());
        }
    }

    /// Drain: every open turn counts as complete. A turn without a final answer then
    /// yields only its user message.
    pub fn force_complete(&mut self) {
        for t in &mut self.turns {
            if !t.is_complete() {
                t.forced = true;
            }
            t.drained = true;
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
