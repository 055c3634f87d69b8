//! The folded state of a session and the questions asked of it. Only
//! [`super::fold`] changes it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::delivered::{content_identity, key_identity, DeliveredSet};
use super::{PROMPT_DEDUP_WINDOW_MS, SESSION_START_DEBOUNCE_MS};
use crate::turn::{DedupKey, FileIdentity, Role};
use crate::turnbook::{Consent, TurnBook};

/// How the problem of a [`crate::event::Event::JournalDamaged`] starts ([`State::damage_recorded`];
/// no other problem starts so: every other context names a step of the engine, never `journal`).
pub(super) const DAMAGE_PROBLEM: &str = "journal: ";

/// Where a message stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MessageStatus {
    /// Planned, not sent (or sent and refused in a way worth retrying).
    Pending,
    /// A send carrying it started and has no outcome yet.
    InFlight {
        /// The send.
        send_id: u64,
    },
    /// The server holds it.
    Acked,
    /// The server refused it for good; it no longer blocks anything.
    SetAside {
        /// HTTP status of the refusal.
        status: u16,
        /// The server's words.
        error: String,
    },
}

impl MessageStatus {
    /// Nothing more will happen to the message: the server holds it, or it was set aside for
    /// good. Pending and in-flight messages are unsettled.
    pub fn is_settled(&self) -> bool {
        matches!(self, MessageStatus::Acked | MessageStatus::SetAside { .. })
    }
}

/// One planned message and its fate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageRecord {
    /// Plan order (sending order), unique and increasing.
    pub order: u64,
    /// The turn id, when known.
    pub turn_id: Option<String>,
    /// User or assistant.
    pub role: Role,
    /// Where it stands.
    pub status: MessageStatus,
    /// What to send; dropped once acknowledged or set aside.
    pub content: Option<String>,
    /// Length of the content sent, in bytes (for token estimates and `why`).
    pub content_len: u64,
    /// The turn ended without a final answer.
    pub interrupted: bool,
    /// When the message was written (ms since the epoch), sent as its `created_at`.
    pub created_at_ms: Option<u64>,
    /// Sends of this message that failed.
    pub failures: u32,
    /// A batch containing it was refused for good: send it on its own to find
    /// out whether it is the culprit.
    pub needs_single: bool,
    /// The last failure, for `why`.
    pub last_error: Option<String>,
    /// When it was planned (ms).
    pub planned_at_ms: u64,
    /// When the server acknowledged it (ms).
    pub acked_at_ms: Option<u64>,
}

/// A send with no recorded outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendRecord {
    /// Messages in the request.
    pub keys: Vec<DedupKey>,
    /// One request per message.
    pub single: bool,
    /// When it started (ms).
    pub started_at_ms: u64,
    /// Writer pid.
    pub pid: u32,
    /// The server answered it (a 5xx after the body left): it is in doubt but
    /// no longer in the server's hands.
    pub answered: bool,
}

/// Where the rollout was last read up to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolloutPosition {
    /// Path read.
    pub path: String,
    /// Identity of the file read.
    pub identity: FileIdentity,
    /// One past the last complete line consumed.
    pub offset: u64,
    /// File length seen then.
    pub file_len: u64,
}

/// Commit bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CommitState {
    /// Messages acknowledged over the life of the journal.
    pub acked_total: u64,
    /// Estimated tokens of those messages.
    pub acked_tokens_total: u64,
    /// `acked_total` covered by the last successful commit.
    pub committed_through: u64,
    /// `acked_tokens_total` covered by the last successful commit.
    pub committed_tokens_through: u64,
    /// A commit that started and has no outcome yet.
    pub in_flight: Option<CommitInFlight>,
    /// Successful commits.
    pub commits_ok: u64,
    /// The last commit failure.
    pub last_error: Option<String>,
}

/// A commit with no recorded outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitInFlight {
    /// Which commit.
    pub commit_id: u64,
    /// `acked_total` when it started: what it covers.
    pub acked_total_at_start: u64,
    /// `acked_tokens_total` when it started.
    pub tokens_at_start: u64,
    /// The server's commit count before, when known.
    pub commit_count_before: Option<u64>,
    /// When it started.
    pub started_at_ms: u64,
}

impl CommitState {
    /// Acknowledged messages no commit covers yet.
    pub fn uncommitted(&self) -> u64 {
        self.acked_total.saturating_sub(self.committed_through)
    }

    /// Estimated tokens of those messages.
    pub fn uncommitted_tokens(&self) -> u64 {
        self.acked_tokens_total
            .saturating_sub(self.committed_tokens_through)
    }
}

/// What the hooks of one turn did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TurnLiveness {
    /// Order of first sight.
    pub order: u64,
    /// UserPromptSubmit invocations.
    pub prompts: u32,
    /// Stop invocations.
    pub stops: u32,
    /// PreToolUse invocations.
    pub tool_uses: u32,
    /// Seen in the rollout.
    pub in_rollout: bool,
    /// First seen (ms).
    pub first_at_ms: u64,
    /// Last seen (ms).
    pub last_at_ms: u64,
}

/// A prompt as seen by UserPromptSubmit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptSeen {
    /// Turn id.
    pub turn_id: Option<String>,
    /// xxh3 of the cleaned prompt.
    pub hash: u64,
    /// When (ms).
    pub at_ms: u64,
}

/// The folded state of one session.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct State {
    /// Native session id (first seen).
    pub session_id: Option<String>,
    /// Harness that fed the session.
    pub harness: Option<String>,
    /// Working directory (last seen).
    pub cwd: Option<String>,
    /// Events folded.
    pub events: u64,
    /// Time of the first event (ms).
    pub first_at_ms: u64,
    /// Time of the last event (ms).
    pub last_at_ms: u64,
    /// Hook invocations per kind (`HookKind::as_str`).
    pub hook_counts: BTreeMap<String, u64>,
    /// Hook payloads that could not be fully used.
    pub malformed_hooks: u64,
    /// Planned messages, by key: every one not yet settled, every one set aside, and the
    /// acknowledged ones planned after the first unsettled one. An acknowledged record at
    /// the head of the plan order is let go: its identity moves to [`State::delivered`].
    pub messages: BTreeMap<DedupKey, MessageRecord>,
    /// Plan order -> key, from the first record not let go (set-aside records leave it with
    /// the acknowledged ones but stay in `messages`).
    pub order: BTreeMap<u64, DedupKey>,
    /// Sends with no outcome yet.
    pub sends: BTreeMap<u64, SendRecord>,
    /// Next send id.
    pub next_send_id: u64,
    /// Next commit id.
    pub next_commit_id: u64,
    /// Next plan order.
    pub next_order: u64,
    /// The server answered 404/405 to a batch: send one message per request.
    pub batch_unsupported: bool,
    /// Turns not yet (fully) planned.
    pub book: TurnBook,
    /// Where the rollout was read up to.
    pub rollout: Option<RolloutPosition>,
    /// Rollout reads folded.
    pub rollout_reads: u64,
    /// Rollout lines that were not valid.
    pub rollout_bad_lines: u64,
    /// Commit bookkeeping.
    pub commit: CommitState,
    /// Per-turn hook liveness.
    pub turns: BTreeMap<String, TurnLiveness>,
    /// Next liveness order.
    pub next_turn_order: u64,
    /// The latest prompt.
    pub last_prompt: Option<PromptSeen>,
    /// The prompt before it.
    pub prev_prompt: Option<PromptSeen>,
    /// Recall blocks by prompt hash, oldest first.
    pub recall_cache: Vec<(u64, Option<String>)>,
    /// The server rejected the context face (tier 1) at this time (ms).
    pub context_face_unsupported_at_ms: Option<u64>,
    /// Latest SessionStart (ms).
    pub last_session_start_ms: Option<u64>,
    /// The SessionStart before it (ms).
    pub prev_session_start_ms: Option<u64>,
    /// Network work is skipped until then (ms).
    pub backoff_until_ms: Option<u64>,
    /// Why.
    pub backoff_reason: Option<String>,
    /// Workers started.
    pub workers_started: u64,
    /// Drains folded.
    pub drains: u64,
    /// Problems recorded (the latest 32); those of lost parts of the journal are
    /// [`State::damage_recorded`].
    pub problems: Vec<String>,
    /// Part of the journal was lost ([`crate::event::Event::JournalDamaged`]): a message not
    /// known to be acknowledged may be on the server all the same. Until everything is
    /// reconciled with the server, nothing is sent.
    pub acks_unverified: bool,
    /// The user forgot the whole session ([`crate::event::Event::Forgotten`]) at this time
    /// (ms): nothing of it is ever sent again. (Snapshot version 4; a version-3 snapshot
    /// decodes through `codec/snapshot_v3.rs`.)
    pub forgotten_at_ms: Option<u64>,
    /// What was redacted where text entered, per kind, over the whole session
    /// ([`crate::event::Event::Redacted`]).
    pub redactions: crate::privacy::Redactions,
    /// Identities of the delivered messages whose records were let go (see
    /// [`State::messages`]), and of every message the server held when asked after damage
    /// ([`crate::event::Event::ServerHolds`]). Fields from here on were appended by snapshot
    /// version 4 (and 5) and must stay last (see [`crate::codec::decode_snapshot`]).
    pub delivered: DeliveredSet,
    /// The last turn of the let-go records, in plan order: where [`State::cursor`] starts.
    pub delivered_cursor: Option<String>,
    /// Message records let go so far.
    pub records_let_go: u64,
    /// The transcript file the latest Stop payload named
    /// ([`crate::event::Event::TranscriptNamed`]); `None` when no Stop named one (the
    /// harness then finds the file itself). Fields from here on were appended by snapshot
    /// version 5: a version-4 body decodes as this layout with `None` and empty collections
    /// ([`crate::codec::decode_snapshot`]); they must stay last.
    pub transcript_path: Option<String>,
    /// Tool calls of turns whose assistant message is not planned yet
    /// ([`crate::event::Event::ToolCalls`]), oldest turn first, at most
    /// [`super::KEPT_TOOL_TURNS`] turns.
    pub tool_calls: Vec<(String, Vec<crate::tool::ToolCall>)>,
    /// The tool calls sent as tool parts of a planned message, by the message's key, while it
    /// is to be sent (dropped once it is settled).
    pub planned_tools: BTreeMap<DedupKey, Vec<crate::tool::ToolCall>>,
}

impl State {
    /// Messages waiting to be sent, in plan order.
    pub fn outbox(&self) -> Vec<(&DedupKey, &MessageRecord)> {
        self.order
            .values()
            .filter_map(|k| self.messages.get_key_value(k))
            .filter(|(_, r)| matches!(r.status, MessageStatus::Pending))
            .collect()
    }

    /// Sends with no recorded outcome. Once no sender holds the session's
    /// worker lock, each of these is in doubt.
    pub fn in_doubt(&self) -> &BTreeMap<u64, SendRecord> {
        &self.sends
    }

    /// Messages set aside (refused for good), in plan order.
    pub fn set_aside(&self) -> Vec<(&DedupKey, &MessageRecord)> {
        let mut v: Vec<(&DedupKey, &MessageRecord)> = self
            .messages
            .iter()
            .filter(|(_, r)| matches!(r.status, MessageStatus::SetAside { .. }))
            .collect();
        v.sort_by_key(|(_, r)| r.order);
        v
    }

    /// Whether the server holds the message of this key: acknowledged, or among what it held
    /// when asked after damage.
    pub fn is_delivered(&self, key: &DedupKey) -> bool {
        match self.messages.get(key) {
            Some(r) => {
                matches!(r.status, MessageStatus::Acked)
                    || self.delivered.contains(key_identity(key))
            }
            None => self.delivered.contains(key_identity(key)),
        }
    }

    /// Messages planned over the life of the journal: records kept and let go.
    pub fn planned_count(&self) -> u64 {
        self.messages.len() as u64 + self.records_let_go
    }

    /// Messages acknowledged: records kept as acknowledged, and those let go.
    pub fn acked_count(&self) -> u64 {
        self.acked_records().count() as u64 + self.records_let_go
    }

    /// Acknowledged messages whose record is still kept (see [`State::messages`]).
    pub fn acked_records(&self) -> impl Iterator<Item = (&DedupKey, &MessageRecord)> {
        self.messages
            .iter()
            .filter(|(_, r)| matches!(r.status, MessageStatus::Acked))
    }

    /// Whether a message with this identity was planned before (a record is kept, or it was
    /// delivered) or the server holds it: it is never planned again. `content` is what would
    /// be sent; it matters only for a message without a turn id, which the server holds under
    /// no key of ours.
    pub fn already_planned(
        &self,
        key: &DedupKey,
        turn_id: Option<&str>,
        role: Role,
        content: &str,
    ) -> bool {
        self.messages.contains_key(key)
            || self.delivered.contains(key_identity(key))
            || (turn_id.is_none() && self.delivered.contains(content_identity(role, content)))
    }

    /// The `lastTurnId` cursor: the last turn, in plan order, such that it and every turn
    /// before it has every message settled (a message set aside for good counts as settled).
    /// Advanced only over whole turns. A turn whose records were let go stays behind it even
    /// if a message of that turn is planned later.
    pub fn cursor(&self) -> Option<&str> {
        // A turn with an unsettled message anywhere in plan order (its messages may be
        // planned apart, e.g. the answer before a late prompt) stops it.
        let unsettled: std::collections::BTreeSet<&str> = self
            .messages
            .values()
            .filter(|r| !r.status.is_settled())
            .filter_map(|r| r.turn_id.as_deref())
            .collect();
        let mut cursor = self.delivered_cursor.as_deref();
        for key in self.order.values() {
            let Some(turn) = self.messages.get(key).and_then(|r| r.turn_id.as_deref()) else {
                continue;
            };
            if unsettled.contains(turn) {
                return cursor;
            }
            cursor = Some(turn);
        }
        cursor
    }

    /// True when the server is in its back-off window at `now_ms` ([`crate::clock::backing_off`]:
    /// a window ending further away than a back-off can last was set by a clock ahead of this one).
    pub fn backing_off(&self, now_ms: u64) -> bool {
        self.backoff_until_ms
            .is_some_and(|until| crate::clock::backing_off(until, now_ms))
    }

    /// The latest UserPromptSubmit repeats an earlier one: same turn id as the
    /// previous prompt, or (no turn id) the same text within the dedup window.
    pub fn last_prompt_is_duplicate(&self) -> bool {
        let (Some(last), Some(prev)) = (&self.last_prompt, &self.prev_prompt) else {
            return false;
        };
        match &last.turn_id {
            // ZCode pairs prompts and Stops by turn id: a second prompt for a turn is a repeat.
            Some(turn) => self.turns.get(turn).is_some_and(|t| t.prompts > 1),
            None => {
                last.hash == prev.hash
                    && crate::clock::open_since(prev.at_ms, PROMPT_DEDUP_WINDOW_MS, last.at_ms)
            }
        }
    }

    /// The latest SessionStart, whose payload's `source` is `source`, came within
    /// the debounce window of the previous one. A `compact` one never is: the
    /// agent has just dropped the context it injected.
    pub fn last_session_start_debounced(&self, source: Option<&str>) -> bool {
        if source == Some("compact") {
            return false;
        }
        match (self.last_session_start_ms, self.prev_session_start_ms) {
            (Some(last), Some(prev)) => {
                crate::clock::open_since(prev, SESSION_START_DEBOUNCE_MS, last)
            }
            _ => false,
        }
    }

    /// A cached recall block for a prompt hash (`Some(None)` = cached "nothing").
    pub fn cached_recall(&self, prompt_hash: u64) -> Option<Option<&str>> {
        self.recall_cache
            .iter()
            .rev()
            .find(|(h, _)| *h == prompt_hash)
            .map(|(_, b)| b.as_deref())
    }

    /// Turns whose Stop was seen and a worker ran, but which the transcript never showed (it
    /// could not be read, [`State::problems`] says why, or lacks them) and of which no answer
    /// was planned from the Stop payload either. (Their prompt may be pending.) Empty while no
    /// worker ever ran (capture off, or bypassed: nothing was meant to be sent).
    pub fn turns_uncaptured(&self) -> Vec<&str> {
        if self.workers_started == 0 {
            return Vec::new();
        }
        let answered: std::collections::BTreeSet<&str> = self
            .messages
            .values()
            .filter(|m| m.role == Role::Assistant)
            .filter_map(|m| m.turn_id.as_deref())
            .collect();
        let mut v: Vec<(&u64, &str)> = self
            .turns
            .iter()
            .filter(|(id, t)| {
                t.stops > 0
                    && !t.in_rollout
                    && !answered.contains(id.as_str())
                    && !self
                        .delivered
                        .contains(key_identity(&DedupKey::for_turn(id, Role::Assistant)))
            })
            .map(|(id, t)| (&t.order, id.as_str()))
            .collect();
        v.sort();
        v.into_iter().map(|(_, id)| id).collect()
    }

    /// The problems recorded for parts of the journal that were lost
    /// ([`crate::event::Event::JournalDamaged`]; they outlive a compaction that removes the
    /// damaged segment), oldest first, among the latest [`State::problems`].
    pub fn damage_recorded(&self) -> impl Iterator<Item = &str> {
        self.problems
            .iter()
            .map(String::as_str)
            .filter(|p| p.starts_with(DAMAGE_PROBLEM))
    }

    /// Whether turn `turn_id` may be sent ([`crate::turnbook::TurnBook::consent`]); for a turn
    /// the book no longer holds, what the per-turn liveness says (seen in the transcript and by
    /// no hook: [`Consent::NoHook`]). `None` when nothing is known.
    pub fn consent_of(&self, turn_id: &str) -> Option<Consent> {
        if let Some(c) = self.book.consent_of(turn_id) {
            return Some(c);
        }
        let live = self.turns.get(turn_id)?;
        let hooks = live.prompts + live.stops + live.tool_uses;
        Some(if hooks > 0 {
            Consent::Given
        } else {
            Consent::NoHook
        })
    }

    /// Turns that are never sent because the user did not consent (no hook of ours saw them,
    /// a hook refused them, the user forgot them or the whole session), in order of first sight
    /// ([`State::consent_of`]).
    pub fn turns_withheld(&self) -> Vec<&str> {
        let mut v: Vec<(&u64, &str)> = self
            .turns
            .iter()
            .filter(|(id, _)| {
                self.forgotten_at_ms.is_some() || self.consent_of(id).is_some_and(|c| !c.is_given())
            })
            .map(|(id, t)| (&t.order, id.as_str()))
            .collect();
        v.sort();
        v.into_iter().map(|(_, id)| id).collect()
    }

    /// Turns that saw a prompt but never a Stop (for liveness reports).
    pub fn turns_missing_stop(&self) -> Vec<&str> {
        let mut v: Vec<(&u64, &str)> = self
            .turns
            .iter()
            .filter(|(_, t)| t.prompts > 0 && t.stops == 0)
            .map(|(id, t)| (&t.order, id.as_str()))
            .collect();
        v.sort();
        v.into_iter().map(|(_, id)| id).collect()
    }

    /// The session is settled: no message waiting to be sent, no send without an outcome
    /// (in doubt), no commit in flight. (Uncommitted acknowledged messages do not count: a
    /// commit waits for its threshold.) The one "has unsent work" rule: the sweep and the
    /// drain ask it.
    pub fn is_settled(&self) -> bool {
        self.outbox().is_empty() && self.sends.is_empty() && self.commit.in_flight.is_none()
    }
}
