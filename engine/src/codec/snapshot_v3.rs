//! Snapshot version 3, frozen: the projector state as version 3 wrote it, and its
//! conversion to today's. Never edit these types; a version-3 snapshot decodes through
//! them forever (a journal whose segments before its snapshot were removed has nothing
//! else to fold).
//!
//! Version 4 added the times of event version 3: `TurnFragment::{prompt_ms, answer_ms}`
//! (the rollout fragments of the turn book), `TurnRecord::{prompt_hook_ms, stop_hook_ms}`
//! and `MessageRecord::created_at_ms`. A converted state knows no time for the turns and
//! messages it holds (`None`: the server stamps them when they arrive). Version 4 also added
//! consent (`TurnRecord::{hook_seen, refused}`, the book's refused ids, `State::forgotten_at_ms`):
//! a converted turn was seen by a hook when its record holds what only hooks give (a prompt,
//! steering, a Stop), a hook made it (no id of its own), or the liveness of one of its ids counts
//! a hook; nothing was refused or forgotten. Everything else is today's type, unchanged.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::v2::TurnFragment;
use crate::projector::{
    CommitState, MessageRecord as Record, MessageStatus, PromptSeen, RolloutPosition, SendRecord,
    State as Today, TurnLiveness,
};
use crate::turn::{DedupKey, Role};
use crate::turnbook;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct MessageRecord {
    pub order: u64,
    pub turn_id: Option<String>,
    pub role: Role,
    pub status: MessageStatus,
    pub content: Option<String>,
    pub content_len: u64,
    pub interrupted: bool,
    pub failures: u32,
    pub needs_single: bool,
    pub last_error: Option<String>,
    pub planned_at_ms: u64,
    pub acked_at_ms: Option<u64>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub(super) struct TurnRecord {
    pub turn_id: Option<String>,
    pub rollout_id: Option<String>,
    pub hook_prompt: Option<String>,
    pub stopped: bool,
    pub stop_text: Option<String>,
    pub stop_preview: Option<String>,
    pub hook_steering: Vec<String>,
    pub rollout: Option<TurnFragment>,
    pub superseded: bool,
    pub forced: bool,
    pub drained: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub(super) struct TurnBook {
    pub turns: Vec<TurnRecord>,
    pub last_rollout_turn: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub(super) struct State {
    pub session_id: Option<String>,
    pub harness: Option<String>,
    pub cwd: Option<String>,
    pub events: u64,
    pub first_at_ms: u64,
    pub last_at_ms: u64,
    pub hook_counts: BTreeMap<String, u64>,
    pub malformed_hooks: u64,
    pub messages: BTreeMap<DedupKey, MessageRecord>,
    pub order: BTreeMap<u64, DedupKey>,
    pub sends: BTreeMap<u64, SendRecord>,
    pub next_send_id: u64,
    pub next_commit_id: u64,
    pub next_order: u64,
    pub batch_unsupported: bool,
    pub book: TurnBook,
    pub rollout: Option<RolloutPosition>,
    pub rollout_reads: u64,
    pub rollout_bad_lines: u64,
    pub commit: CommitState,
    pub turns: BTreeMap<String, TurnLiveness>,
    pub next_turn_order: u64,
    pub last_prompt: Option<PromptSeen>,
    pub prev_prompt: Option<PromptSeen>,
    pub recall_cache: Vec<(u64, Option<String>)>,
    pub context_face_unsupported_at_ms: Option<u64>,
    pub last_session_start_ms: Option<u64>,
    pub prev_session_start_ms: Option<u64>,
    pub backoff_until_ms: Option<u64>,
    pub backoff_reason: Option<String>,
    pub workers_started: u64,
    pub drains: u64,
    pub problems: Vec<String>,
    pub acks_unverified: bool,
}

impl From<MessageRecord> for Record {
    fn from(r: MessageRecord) -> Record {
        Record {
            order: r.order,
            turn_id: r.turn_id,
            role: r.role,
            status: r.status,
            content: r.content,
            content_len: r.content_len,
            interrupted: r.interrupted,
            created_at_ms: None,
            failures: r.failures,
            needs_single: r.needs_single,
            last_error: r.last_error,
            planned_at_ms: r.planned_at_ms,
            acked_at_ms: r.acked_at_ms,
        }
    }
}

impl From<TurnRecord> for turnbook::TurnRecord {
    fn from(t: TurnRecord) -> turnbook::TurnRecord {
        let hook_seen = t.turn_id.is_none()
            || t.hook_prompt.is_some()
            || !t.hook_steering.is_empty()
            || t.stopped;
        turnbook::TurnRecord {
            turn_id: t.turn_id,
            rollout_id: t.rollout_id,
            hook_prompt: t.hook_prompt,
            stopped: t.stopped,
            stop_text: t.stop_text,
            stop_preview: t.stop_preview,
            hook_steering: t.hook_steering,
            rollout: t.rollout.map(Into::into),
            superseded: t.superseded,
            forced: t.forced,
            drained: t.drained,
            prompt_hook_ms: None,
            stop_hook_ms: None,
            hook_seen,
            refused: None,
        }
    }
}

/// Whether the liveness of one of a version-3 turn's ids counts a hook.
fn seen_by_liveness(t: &TurnRecord, live: &BTreeMap<String, TurnLiveness>) -> bool {
    let by_hook = |id: &str| {
        live.get(id)
            .is_some_and(|l| l.prompts > 0 || l.stops > 0 || l.tool_uses > 0)
    };
    t.turn_id.as_deref().is_some_and(by_hook)
        || t.rollout_id.as_deref().is_some_and(by_hook)
        || t.rollout
            .as_ref()
            .and_then(|r| r.trace_id.as_deref())
            .is_some_and(by_hook)
}

impl From<State> for Today {
    fn from(s: State) -> Today {
        Today {
            session_id: s.session_id,
            harness: s.harness,
            cwd: s.cwd,
            events: s.events,
            first_at_ms: s.first_at_ms,
            last_at_ms: s.last_at_ms,
            hook_counts: s.hook_counts,
            malformed_hooks: s.malformed_hooks,
            messages: s.messages.into_iter().map(|(k, r)| (k, r.into())).collect(),
            order: s.order,
            sends: s.sends,
            next_send_id: s.next_send_id,
            next_commit_id: s.next_commit_id,
            next_order: s.next_order,
            batch_unsupported: s.batch_unsupported,
            book: turnbook::TurnBook::from_parts(
                s.book
                    .turns
                    .into_iter()
                    .map(|t| {
                        let live = seen_by_liveness(&t, &s.turns);
                        let mut today: turnbook::TurnRecord = t.into();
                        today.hook_seen |= live;
                        today
                    })
                    .collect(),
                s.book.last_rollout_turn,
            ),
            rollout: s.rollout,
            rollout_reads: s.rollout_reads,
            rollout_bad_lines: s.rollout_bad_lines,
            commit: s.commit,
            turns: s.turns,
            next_turn_order: s.next_turn_order,
            last_prompt: s.last_prompt,
            prev_prompt: s.prev_prompt,
            recall_cache: s.recall_cache,
            context_face_unsupported_at_ms: s.context_face_unsupported_at_ms,
            last_session_start_ms: s.last_session_start_ms,
            prev_session_start_ms: s.prev_session_start_ms,
            backoff_until_ms: s.backoff_until_ms,
            backoff_reason: s.backoff_reason,
            workers_started: s.workers_started,
            drains: s.drains,
            problems: s.problems,
            acks_unverified: s.acks_unverified,
            forgotten_at_ms: None,
            redactions: crate::privacy::Redactions::default(),
            delivered: Default::default(),
            delivered_cursor: None,
            records_let_go: 0,
            transcript_path: None,
            tool_calls: Vec::new(),
            planned_tools: Default::default(),
        }
    }
}
