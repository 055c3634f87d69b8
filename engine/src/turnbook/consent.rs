//! Consent: whether a turn of the book may be sent (the consent table of the module doc), the
//! refusals that keep a turn from ever being sent, and how hooks that name a turn the book does
//! not know yet find it.

use std::collections::HashSet;

use super::{AnswerPrecedence, TurnBook, TurnRecord};
use crate::turn::{Candidate, DedupKey};

/// How many refused turn ids the book remembers (sticky refusals; the oldest go first).
pub const KEPT_REFUSED_IDS: usize = 4096;

/// Whether a turn may be sent: see the consent table of the module doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Consent {
    /// A hook of the turn saw it and none refused it.
    Given,
    /// No hook of ours saw this turn.
    NoHook,
    /// A hook of the turn refused it, or the user forgot it; the reason.
    Refused(String),
}

impl Consent {
    /// The turn may be sent.
    pub fn is_given(&self) -> bool {
        matches!(self, Consent::Given)
    }

    /// Why the turn is not sent (`None` when it may be).
    pub fn why_not(&self) -> Option<String> {
        match self {
            Consent::Given => None,
            Consent::NoHook => Some("no hook of ours saw this turn".to_owned()),
            Consent::Refused(reason) => Some(format!("capture refused for this turn ({reason})")),
        }
    }
}

impl TurnRecord {
    /// Named by none of the turn's ids: an id-less, wordless hook turn (Copilot's prompt) that
    /// the rollout has not shown yet.
    pub(super) fn is_unnamed(&self) -> bool {
        self.turn_id.is_none() && self.hook_prompt.is_none() && self.rollout.is_none()
    }

    /// The ids this turn is known by: identity, rollout id, the rollout's `traceId`.
    pub(super) fn ids(&self) -> impl Iterator<Item = &str> {
        self.turn_id
            .as_deref()
            .into_iter()
            .chain(self.rollout_id.as_deref())
            .chain(self.rollout.as_ref().and_then(|r| r.trace_id.as_deref()))
    }
}

impl TurnBook {
    /// The turn a named hook (Stop, PreToolUse, a refusal) of an unknown id is in: the latest
    /// unnamed turn still running takes the id (Copilot names a turn only from its Stop on),
    /// else a new turn.
    pub(super) fn find_or_name(&mut self, turn_id: &str) -> usize {
        if let Some(i) = self.find(turn_id) {
            return i;
        }
        if let Some(i) = self.latest_running().filter(|&i| self.is_unnamed_at(i)) {
            if let Some(t) = self.turns.get_mut(i) {
                t.turn_id = Some(turn_id.to_owned());
                self.apply_refused_ids(i);
                return i;
            }
        }
        let i = self.find_or_insert(turn_id);
        self.apply_refused_ids(i);
        i
    }

    /// The latest turn still running: not stopped, and no later turn superseded it.
    pub(super) fn latest_running(&self) -> Option<usize> {
        self.turns.iter().rposition(|t| !t.stopped && !t.superseded)
    }

    /// The turn at `i` is unnamed ([`TurnRecord::is_unnamed`]).
    pub(super) fn is_unnamed_at(&self, i: usize) -> bool {
        self.turns.get(i).is_some_and(TurnRecord::is_unnamed)
    }

    /// A turn known by a refused id is refused.
    pub(super) fn apply_refused_ids(&mut self, i: usize) {
        let Some(t) = self.turns.get(i) else { return };
        if t.refused.is_some() {
            return;
        }
        let reason = self
            .refused_ids
            .iter()
            .rev()
            .find(|(id, _)| t.ids().any(|x| x == id))
            .map(|(_, r)| r.clone());
        if let (Some(t), Some(r)) = (self.turns.get_mut(i), reason) {
            t.refused = Some(r);
        }
    }

    /// Whether turn `t` may be sent (the consent table of the module doc).
    pub fn consent(&self, t: &TurnRecord) -> Consent {
        if let Some(r) = &t.refused {
            return Consent::Refused(r.clone());
        }
        if let Some((_, r)) = self
            .refused_ids
            .iter()
            .rev()
            .find(|(id, _)| t.ids().any(|x| x == id))
        {
            return Consent::Refused(r.clone());
        }
        if t.hook_seen {
            Consent::Given
        } else {
            Consent::NoHook
        }
    }

    /// The consent of the turn known by `turn_id` (identity, rollout id or `traceId`), when
    /// the book holds it; else whether that id was refused.
    pub fn consent_of(&self, turn_id: &str) -> Option<Consent> {
        match self.find(turn_id).and_then(|i| self.turns.get(i)) {
            Some(t) => Some(self.consent(t)),
            None => self
                .refused_ids
                .iter()
                .rev()
                .find(|(id, _)| id == turn_id)
                .map(|(_, r)| Consent::Refused(r.clone())),
        }
    }

    /// A hook of a turn did not capture it (capture paused, off or bypassed), or the user
    /// forgot it: the turn is never sent, whatever arrives later. `None`: the hook named no
    /// turn; the latest turn a later one has not superseded is refused (a new unnamed turn
    /// when there is none).
    pub fn observe_refused(&mut self, turn_id: Option<&str>, reason: &str) {
        let idx = match turn_id {
            Some(id) => {
                self.refused_ids.retain(|(x, _)| x != id);
                self.refused_ids.push((id.to_owned(), reason.to_owned()));
                if self.refused_ids.len() > KEPT_REFUSED_IDS {
                    self.refused_ids.remove(0);
                }
                self.find(id)
            }
            None => match self.turns.iter().rposition(|t| !t.superseded) {
                Some(i) => Some(i),
                None => {
                    self.turns.push(TurnRecord::default());
                    Some(self.turns.len() - 1)
                }
            },
        };
        if let Some(t) = idx.and_then(|i| self.turns.get_mut(i)) {
            t.refused = Some(reason.to_owned());
        }
    }

    /// A PreToolUse of turn `turn_id`: a hook saw the turn. One without a turn id names no
    /// turn and changes nothing.
    pub fn observe_tool_use(&mut self, turn_id: Option<&str>) {
        let Some(id) = turn_id else { return };
        let i = self.find_or_name(id);
        if let Some(t) = self.turns.get_mut(i) {
            t.hook_seen = true;
        }
    }

    /// [`TurnBook::candidates_by`] of the turns that may be sent ([`TurnBook::consent`]):
    /// what the planner plans.
    pub fn sendable_by(&self, precedence: AnswerPrecedence) -> Vec<Candidate> {
        let mut seen: HashSet<DedupKey> = HashSet::new();
        let mut out = Vec::new();
        for t in self.turns.iter().filter(|t| self.consent(t).is_given()) {
            for c in t.messages(precedence) {
                if seen.insert(c.key.clone()) {
                    out.push(c);
                }
            }
        }
        out
    }
}
