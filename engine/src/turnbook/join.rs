//! Which turn a hook's id or a rollout fragment belongs to: one identity per turn, whichever
//! source named it first (the module doc, "Keys").

use super::{TurnBook, TurnRecord};
use crate::text::user_words;
use crate::turn::TurnFragment;

impl TurnBook {
    /// The turn a hook's id names: its identity, its rollout id, or the `traceId` of its
    /// rollout lines (a hook without a `turnId` names the turn by its `traceId`).
    pub(super) fn find(&self, turn_id: &str) -> Option<usize> {
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
    pub(super) fn find_for_fragment(&self, frag: &TurnFragment) -> Option<usize> {
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
    pub(super) fn find_rollout(&self, id: &str) -> Option<usize> {
        self.turns
            .iter()
            .rposition(|t| t.rollout_id.as_deref().or(t.turn_id.as_deref()) == Some(id))
    }

    pub(super) fn find_or_insert(&mut self, turn_id: &str) -> usize {
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
}
