//! Planning: which candidates of the turn book become messages to send, and what is sent.
//!
//! Only turns the user consented to are planned ([`plan`]; the rule is
//! [`crate::turnbook::TurnBook::consent`]); [`first_capture`] shows what a transcript holds,
//! consent aside.
//!
//! One rule for every planner ([`plan`] in the worker, [`first_capture`] for `ovreplay plan`,
//! the projector's book pruning): a candidate is sent as its text with the built-in privacy
//! rule applied ([`crate::privacy::builtin`]: `<private>` regions removed, secrets replaced by
//! markers), cut to `capture.max_length` chars; a candidate left empty by it has nothing to
//! send and is dropped (never planned, never set aside). Text is sanitized where it enters
//! (the journal holds it clean); applying the rule again here is what keeps a journal written
//! before that rule existed from sending anything raw.
//!
//! [`first_capture`] is pure: no network, no state. The file is read in chunks into a fresh
//! [`TurnBook`]; the last turn counts as stopped when its latest call finished (this is the
//! plan at the Stop of the last turn); nothing is truncated.

use std::io;
use std::path::Path;

use serde::Serialize;

use crate::event::PlannedMessage;
use crate::projector::State;
use crate::text::{oversized, truncate_chars};
use crate::transcript::zcode::read_chunk;
use crate::turn::Candidate;
use crate::turnbook::{AnswerPrecedence, TurnBook};

/// What sending `candidate` sends: its text with the built-in privacy rule applied, cut to
/// `max_length` chars when set (0 = no limit). `None` when nothing is left to send.
///
/// A candidate over the message limit, or holding the stand-in of a text that was
/// ([`crate::text::oversized`]), is planned as the stand-in, whole: the projector sets it
/// aside.
pub fn planned_message(candidate: Candidate, max_length: Option<usize>) -> Option<PlannedMessage> {
    let raw_len = candidate.content.len() as u64;
    if let Some(len) = oversized::stand_in_len(&candidate.content)
        .or_else(|| (!oversized::fits(&candidate.content)).then_some(raw_len))
    {
        return Some(PlannedMessage {
            key: candidate.key,
            turn_id: candidate.turn_id,
            role: candidate.role,
            content: oversized::stand_in(usize::try_from(len).unwrap_or(usize::MAX)),
            raw_len: len,
            interrupted: candidate.interrupted,
            created_at_ms: candidate.created_at_ms,
        });
    }
    let mut content = sendable(&candidate.content);
    if content.is_empty() {
        return None;
    }
    if let Some(max) = max_length.filter(|m| *m > 0) {
        content = truncate_chars(&content, max);
    }
    Some(PlannedMessage {
        key: candidate.key,
        turn_id: candidate.turn_id,
        role: candidate.role,
        content,
        raw_len,
        interrupted: candidate.interrupted,
        created_at_ms: candidate.created_at_ms,
    })
}

/// Whether a candidate with this text has nothing to send (see [`planned_message`]).
pub fn nothing_to_send(content: &str) -> bool {
    sendable(content).is_empty()
}

/// What of `content` is sent, before any truncation to `capture.max_length`.
pub fn sendable(content: &str) -> String {
    let mut counts = crate::privacy::Redactions::default();
    crate::privacy::builtin(content, &mut counts)
        .trim()
        .to_owned()
}

/// The settings planning reads (the delivery settings give them: `From<&DeliverySettings>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanSettings {
    /// Which answer of a turn is sent when the Stop payload and the transcript both have one.
    pub answer_precedence: AnswerPrecedence,
    /// `capture.max_length`: sent content is cut to this many chars (`None` or 0: no limit).
    pub max_length: Option<usize>,
}

/// The messages to plan now: candidates of complete turns not planned before, of the turns the
/// user consented to ([`crate::turnbook::TurnBook::consent`]: a hook of ours saw the turn and
/// none refused it), in a session the user has not forgotten.
pub fn plan(state: &State, settings: impl Into<PlanSettings>) -> Vec<PlannedMessage> {
    let settings = settings.into();
    let mut out: Vec<PlannedMessage> = Vec::new();
    if state.forgotten_at_ms.is_some() {
        return out;
    }
    for c in state.book.sendable_by(settings.answer_precedence) {
        if out.iter().any(|m| m.key == c.key) {
            continue;
        }
        let Some(m) = planned_message(c, settings.max_length) else {
            continue;
        };
        if !state.already_planned(&m.key, m.turn_id.as_deref(), m.role, &m.content) {
            out.push(m);
        }
    }
    out
}

/// The messages a first capture of the rollout at `path` sends, in order.
///
/// An absent file is an error ([`io::ErrorKind::NotFound`]).
pub fn first_capture(path: &Path) -> io::Result<Vec<PlannedMessage>> {
    let mut book = TurnBook::new();
    let mut resume = None;
    loop {
        let Some(mut chunk) = read_chunk(path, resume)? else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("rollout {} does not exist", path.display()),
            ));
        };
        let progressed = chunk.end > chunk.start;
        let done = !progressed || chunk.end >= chunk.file_len || chunk.rescanned;
        resume = Some((chunk.identity, chunk.end));
        crate::privacy::Policy::builtin().chunk(&mut chunk);
        book.observe_chunk(&chunk);
        if done {
            break;
        }
    }
    Ok(plan_at_last_stop(book))
}

/// The plan of `book` at the Stop of its last rollout turn: that turn counts as stopped
/// when its latest call finished. Used by [`first_capture`].
pub fn plan_at_last_stop(mut book: TurnBook) -> Vec<PlannedMessage> {
    let last_finished = book
        .last_rollout_turn()
        .and_then(|id| {
            book.turns()
                .iter()
                .rev()
                .find(|t| t.turn_id.as_deref() == Some(id))
        })
        .and_then(|t| {
            let r = t.rollout.as_ref()?;
            (r.finished && !r.interrupted).then(|| t.turn_id.clone())
        })
        .flatten();
    if let Some(id) = last_finished {
        book.observe_stop(Some(&id), None);
    }
    book.candidates()
        .into_iter()
        .filter_map(|c| planned_message(c, None))
        .collect()
}

#[derive(Serialize)]
struct JsonMessage<'a> {
    turn_id: Option<&'a str>,
    role: &'static str,
    content: &'a str,
}

/// `[{"turn_id":…,"role":"user"|"assistant","content":…}, …]`, in order, compact;
/// `turn_id` is `null` when absent.
pub fn to_json(messages: &[PlannedMessage]) -> String {
    let out: Vec<JsonMessage<'_>> = messages
        .iter()
        .map(|m| JsonMessage {
            turn_id: m.turn_id.as_deref(),
            role: m.role.as_str(),
            content: &m.content,
        })
        .collect();
    serde_json::to_string(&out).unwrap_or_else(|_| "[]".to_owned())
}
