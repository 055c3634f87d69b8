//! The projector: a pure, deterministic fold of a session's events into its state.
//!
//! # Laws (tested with proptest)
//!
//! * Deterministic: the same events give the same state (no clocks, no
//!   randomness, only ordered maps).
//! * Incremental: `fold(a ++ b) == fold_from(fold(a), b)`, so a snapshot of the
//!   state followed by the events after it gives the state of the whole journal.
//!
//! # What the state holds
//!
//! ```text
//! messages   key -> record { order, turn, role, status, content while unsent }
//!            status: Pending | InFlight(send) | Acked | SetAside(why)
//! sends      send_id -> keys, for sends with no outcome yet (in doubt once the
//!            sender is gone: reconciled with the server before any resend)
//! book       the TurnBook: turns seen by hooks and the rollout, not yet planned
//! rollout    file identity + offset of the last complete line consumed
//! commit     acknowledged-but-uncommitted count and tokens, in-flight commit
//! hooks      per-turn liveness, prompt dedup, recall cache, SessionStart debounce
//! backoff    the unreachable-server window
//! ```
//!
//! Nothing is ever forgotten that decides dedup: acknowledged keys stay in
//! `messages` for the life of the journal (content dropped), so a lost cursor, a
//! rotated rollout or a rescanned file can never make an old turn look new.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::event::{Envelope, Event, HookKind, HookReceived, PlannedMessage, WorkerReason};
use crate::turn::{DedupKey, FileIdentity, Role};
use crate::turnbook::TurnBook;

/// Two prompts with the same text within this window are one prompt delivered twice.
pub const PROMPT_DEDUP_WINDOW_MS: u64 = 500;
/// A SessionStart within this window of the previous one is ignored.
pub const SESSION_START_DEBOUNCE_MS: u64 = 2000;
/// Prompts whose recall block is kept for reuse.
pub const RECALL_CACHE_ENTRIES: usize = 8;
/// Retryable failures of one message sent on its own before it is set aside.
pub const MAX_SINGLE_ATTEMPTS: u32 = 8;

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
    /// Every planned message, by key.
    pub messages: BTreeMap<DedupKey, MessageRecord>,
    /// Plan order -> key.
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
    /// Problems recorded.
    pub problems: Vec<String>,
}

/// A refusal that says nothing about the message itself: retryable failures
/// (network, 408, 429, retryable 409), authentication/authorisation (a wrong
/// key is fixed by the user, after which every message must still go), and a
/// missing endpoint (404/405). Such a message stays pending; only a refusal of
/// the message itself (400, 413, 422, …) sets it aside.
pub fn not_the_message(status: u16, retryable: bool) -> bool {
    retryable || matches!(status, 0 | 401 | 403 | 404 | 405 | 408 | 429)
}

/// Rough token estimate of `len` bytes of text.
pub fn estimate_tokens(len: u64) -> u64 {
    len.div_ceil(4)
}

impl State {
    /// Folds events into a fresh state.
    pub fn fold<'a>(events: impl IntoIterator<Item = &'a Envelope>) -> State {
        let mut s = State::default();
        for e in events {
            s.apply(e);
        }
        s
    }

    /// Applies one event. Infallible and pure: an event that makes no sense
    /// here (an outcome for an unknown send) changes nothing but the counters.
    pub fn apply(&mut self, env: &Envelope) {
        self.events += 1;
        if self.first_at_ms == 0 {
            self.first_at_ms = env.at_ms;
        }
        self.last_at_ms = self.last_at_ms.max(env.at_ms);
        let at = env.at_ms;
        match &env.event {
            Event::HookReceived(h) => self.apply_hook(h, at),
            Event::WorkerStarted { reason } => {
                self.workers_started += 1;
                if *reason == WorkerReason::Drain {
                    self.drains += 1;
                }
            }
            Event::OpenTurnsClosed => self.book.force_complete(),
            Event::RolloutRead { path, chunk } => {
                self.rollout_reads += 1;
                self.rollout_bad_lines += u64::from(chunk.bad_lines);
                for f in &chunk.fragments {
                    if !f.turn_id.is_empty() {
                        self.touch_turn(&f.turn_id, at).in_rollout = true;
                    }
                }
                self.book.observe_chunk(chunk);
                self.prune_book();
                self.rollout = Some(RolloutPosition {
                    path: path.clone(),
                    identity: chunk.identity,
                    offset: chunk.end,
                    file_len: chunk.file_len,
                });
            }
            Event::RolloutMissing { .. } => {}
            Event::MessagesPlanned { messages } => {
                for m in messages {
                    self.plan(m, at);
                }
                self.prune_book();
            }
            Event::SendStarted {
                send_id,
                keys,
                single,
            } => {
                self.next_send_id = self.next_send_id.max(send_id + 1);
                for k in keys {
                    if let Some(r) = self.messages.get_mut(k) {
                        if matches!(r.status, MessageStatus::Pending) {
                            r.status = MessageStatus::InFlight { send_id: *send_id };
                        }
                    }
                }
                self.sends.insert(
                    *send_id,
                    SendRecord {
                        keys: keys.clone(),
                        single: *single,
                        started_at_ms: at,
                        pid: env.pid,
                        answered: false,
                    },
                );
            }
            Event::SendAcked { send_id } => {
                if let Some(send) = self.sends.remove(send_id) {
                    for k in &send.keys {
                        self.ack(k, at);
                    }
                }
                self.clear_backoff();
            }
            Event::SendFailed {
                send_id,
                status,
                retryable,
                error,
                request_sent,
            } => {
                if *request_sent && (*status == 0 || *status >= 500) {
                    self.doubt_send(*send_id, *status, error);
                } else if let Some(send) = self.sends.remove(send_id) {
                    self.fail_send(&send, *status, *retryable, error);
                }
                if *status != 0 {
                    self.clear_backoff();
                }
            }
            Event::Reconciled {
                send_ids,
                present,
                absent,
            } => {
                for id in send_ids {
                    self.sends.remove(id);
                }
                for k in present {
                    self.ack(k, at);
                }
                for k in absent {
                    if let Some(r) = self.messages.get_mut(k) {
                        if matches!(r.status, MessageStatus::InFlight { .. }) {
                            if r.failures >= MAX_SINGLE_ATTEMPTS {
                                r.status = MessageStatus::SetAside {
                                    status: 0,
                                    error: format!(
                                        "gave up after {} failed sends: {}",
                                        r.failures,
                                        r.last_error.as_deref().unwrap_or("")
                                    ),
                                };
                                r.content = None;
                            } else {
                                r.status = MessageStatus::Pending;
                            }
                        }
                    }
                }
                self.clear_backoff();
            }
            Event::CommitStarted {
                commit_id,
                commit_count_before,
            } => {
                self.next_commit_id = self.next_commit_id.max(commit_id + 1);
                self.commit.in_flight = Some(CommitInFlight {
                    commit_id: *commit_id,
                    acked_total_at_start: self.commit.acked_total,
                    tokens_at_start: self.commit.acked_tokens_total,
                    commit_count_before: *commit_count_before,
                    started_at_ms: at,
                });
            }
            Event::CommitAcked { commit_id, .. } => {
                self.settle_commit(*commit_id, true, None);
                self.clear_backoff();
            }
            Event::CommitFailed {
                commit_id,
                status,
                error,
                request_sent,
                ..
            } => {
                if *request_sent && (*status == 0 || *status >= 500) {
                    self.commit.last_error = Some(format!("in doubt: {status}: {error}"));
                } else {
                    self.settle_commit(*commit_id, false, Some(error.clone()));
                }
            }
            Event::CommitReconciled {
                commit_id, applied, ..
            } => {
                self.settle_commit(*commit_id, *applied, None);
            }
            Event::RecallServed {
                prompt_hash,
                block,
                context_face_unsupported,
                cached,
                ..
            } => {
                if *context_face_unsupported {
                    self.context_face_unsupported_at_ms = Some(at);
                }
                if !*cached {
                    self.recall_cache.retain(|(h, _)| h != prompt_hash);
                    self.recall_cache.push((*prompt_hash, block.clone()));
                    if self.recall_cache.len() > RECALL_CACHE_ENTRIES {
                        self.recall_cache.remove(0);
                    }
                }
            }
            Event::ProfileServed { .. } => {}
            Event::ServerUnreachable {
                error,
                retry_after_ms,
            } => {
                self.backoff_until_ms = Some(at.saturating_add(*retry_after_ms));
                self.backoff_reason = Some(error.clone());
            }
            Event::ServerReachable => self.clear_backoff(),
            Event::Problem { context, message } => {
                self.problems.push(format!("{context}: {message}"));
                if self.problems.len() > 32 {
                    self.problems.remove(0);
                }
            }
        }
    }

    fn apply_hook(&mut self, h: &HookReceived, at: u64) {
        if self.session_id.is_none() {
            self.session_id.clone_from(&h.session_id);
        }
        if !h.harness.is_empty() {
            self.harness = Some(h.harness.clone());
        }
        if h.cwd.is_some() {
            self.cwd.clone_from(&h.cwd);
        }
        if h.malformed.is_some() {
            self.malformed_hooks += 1;
        }
        let Some(kind) = h.kind else { return };
        match self.hook_counts.get_mut(kind.as_str()) {
            Some(n) => *n += 1,
            None => {
                self.hook_counts.insert(kind.as_str().to_string(), 1);
            }
        }
        let turn = h.turn_id.as_deref().or(h.trace_id.as_deref());
        match kind {
            HookKind::SessionStart => {
                self.prev_session_start_ms = self.last_session_start_ms;
                self.last_session_start_ms = Some(at);
            }
            HookKind::PromptSubmit => {
                if let Some(t) = turn {
                    self.touch_turn(t, at).prompts += 1;
                }
                let cleaned = crate::text::clean_injected(h.prompt.as_deref().unwrap_or(""));
                self.prev_prompt = self.last_prompt.take();
                self.last_prompt = Some(PromptSeen {
                    turn_id: turn.map(str::to_string),
                    hash: xxhash_rust::xxh3::xxh3_64(cleaned.as_bytes()),
                    at_ms: at,
                });
                if !cleaned.is_empty() {
                    self.book.observe_prompt(turn, &cleaned);
                }
            }
            HookKind::PreToolUse => {
                if let Some(t) = turn {
                    self.touch_turn(t, at).tool_uses += 1;
                }
            }
            HookKind::Stop => {
                if let Some(t) = turn {
                    self.touch_turn(t, at).stops += 1;
                }
                let response = h
                    .response_text
                    .as_deref()
                    .map(crate::text::clean_injected)
                    .filter(|s| !s.is_empty());
                self.book.observe_stop(turn, response.as_deref());
            }
        }
    }

    fn touch_turn(&mut self, turn_id: &str, at: u64) -> &mut TurnLiveness {
        // Look up before inserting: no key allocation for a turn already seen.
        if !self.turns.contains_key(turn_id) {
            let order = self.next_turn_order;
            self.next_turn_order += 1;
            self.turns.insert(
                turn_id.to_string(),
                TurnLiveness {
                    order,
                    first_at_ms: at,
                    ..TurnLiveness::default()
                },
            );
        }
        let t = self
            .turns
            .get_mut(turn_id)
            .expect("inserted above when missing");
        t.last_at_ms = t.last_at_ms.max(at);
        t
    }

    fn plan(&mut self, m: &PlannedMessage, at: u64) {
        if self.messages.contains_key(&m.key) {
            return;
        }
        let order = self.next_order;
        self.next_order += 1;
        self.order.insert(order, m.key.clone());
        // A message left empty by removing `<private>` spans is never sent.
        let (status, content) = if m.content.trim().is_empty() {
            (
                MessageStatus::SetAside {
                    status: 0,
                    error: "nothing left to send after removing <private> spans".into(),
                },
                None,
            )
        } else {
            (MessageStatus::Pending, Some(m.content.clone()))
        };
        self.messages.insert(
            m.key.clone(),
            MessageRecord {
                order,
                turn_id: m.turn_id.clone(),
                role: m.role,
                status,
                content,
                content_len: m.content.len() as u64,
                interrupted: m.interrupted,
                failures: 0,
                needs_single: false,
                last_error: None,
                planned_at_ms: at,
                acked_at_ms: None,
            },
        );
    }

    fn prune_book(&mut self) {
        let messages = &self.messages;
        self.book.retain_unplanned(|k| messages.contains_key(k));
    }

    fn ack(&mut self, key: &DedupKey, at: u64) {
        if let Some(r) = self.messages.get_mut(key) {
            if matches!(
                r.status,
                MessageStatus::Acked | MessageStatus::SetAside { .. }
            ) {
                return;
            }
            r.status = MessageStatus::Acked;
            r.content = None;
            r.acked_at_ms = Some(at);
            self.commit.acked_total += 1;
            self.commit.acked_tokens_total += estimate_tokens(r.content_len);
        }
    }

    fn fail_send(&mut self, send: &SendRecord, status: u16, retryable: bool, error: &str) {
        if (status == 404 || status == 405) && !send.single {
            self.batch_unsupported = true;
        }
        for k in &send.keys {
            let Some(r) = self.messages.get_mut(k) else {
                continue;
            };
            if !matches!(r.status, MessageStatus::InFlight { .. }) {
                continue;
            }
            r.failures += 1;
            r.last_error = Some(format!("{status}: {error}"));
            if not_the_message(status, retryable) {
                // Nothing about this message is wrong (auth, rate limit,
                // network, a missing batch endpoint): it waits, never set aside.
                r.status = MessageStatus::Pending;
            } else if send.single || send.keys.len() == 1 {
                r.status = MessageStatus::SetAside {
                    status,
                    error: error.to_string(),
                };
                r.content = None;
            } else {
                // One of these made the batch fail for good: find out which
                // by sending them one by one.
                r.status = MessageStatus::Pending;
                r.needs_single = true;
            }
        }
    }

    /// A send failed after its request left: it stays in doubt (its record
    /// kept, its messages in flight) until reconciled with the server.
    fn doubt_send(&mut self, send_id: u64, status: u16, error: &str) {
        let Some(send) = self.sends.get_mut(&send_id) else {
            return;
        };
        send.answered |= status != 0;
        let send = &*send;
        let batch = !send.single && send.keys.len() > 1;
        for k in &send.keys {
            if let Some(r) = self.messages.get_mut(k) {
                if matches!(r.status, MessageStatus::InFlight { .. }) {
                    r.failures += 1;
                    r.last_error = Some(format!("{status}: {error} (in doubt)"));
                    r.needs_single |= batch && status >= 500 && r.failures >= 2;
                }
            }
        }
    }

    fn settle_commit(&mut self, commit_id: u64, applied: bool, error: Option<String>) {
        let Some(inflight) = self.commit.in_flight.take() else {
            return;
        };
        if inflight.commit_id != commit_id {
            self.commit.in_flight = Some(inflight);
            return;
        }
        if applied {
            self.commit.committed_through = inflight.acked_total_at_start;
            self.commit.committed_tokens_through = inflight.tokens_at_start;
            self.commit.commits_ok += 1;
            self.commit.last_error = None;
        } else if error.is_some() {
            self.commit.last_error = error;
        }
    }

    fn clear_backoff(&mut self) {
        self.backoff_until_ms = None;
        self.backoff_reason = None;
    }

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

    /// Messages set aside (refused for good).
    pub fn set_aside(&self) -> Vec<(&DedupKey, &MessageRecord)> {
        self.order
            .values()
            .filter_map(|k| self.messages.get_key_value(k))
            .filter(|(_, r)| matches!(r.status, MessageStatus::SetAside { .. }))
            .collect()
    }

    /// Acknowledged keys.
    pub fn acked(&self) -> impl Iterator<Item = &DedupKey> {
        self.messages
            .iter()
            .filter(|(_, r)| matches!(r.status, MessageStatus::Acked))
            .map(|(k, _)| k)
    }

    /// The `lastTurnId` cursor: the last turn, in plan order, such that it and
    /// every turn before it has every message acknowledged (a message set aside
    /// for good counts as settled). Advanced only over whole turns.
    pub fn cursor(&self) -> Option<&str> {
        // A turn with an unsettled message anywhere in plan order (its messages
        // may be planned apart, e.g. the answer before a late prompt) stops it.
        let unsettled: std::collections::BTreeSet<&str> = self
            .messages
            .values()
            .filter(|r| {
                !matches!(
                    r.status,
                    MessageStatus::Acked | MessageStatus::SetAside { .. }
                )
            })
            .filter_map(|r| r.turn_id.as_deref())
            .collect();
        let mut cursor = None;
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

    /// True when the server is in its back-off window at `now_ms`.
    pub fn backing_off(&self, now_ms: u64) -> bool {
        self.backoff_until_ms.is_some_and(|until| now_ms < until)
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
                    && last.at_ms.saturating_sub(prev.at_ms) < PROMPT_DEDUP_WINDOW_MS
            }
        }
    }

    /// The latest SessionStart came within the debounce window of the previous one.
    pub fn last_session_start_debounced(&self) -> bool {
        match (self.last_session_start_ms, self.prev_session_start_ms) {
            (Some(last), Some(prev)) => last.saturating_sub(prev) < SESSION_START_DEBOUNCE_MS,
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

    /// True when nothing is left to do: no pending or in-doubt messages, no
    /// open turns with known content, no commit in flight.
    pub fn is_settled(&self) -> bool {
        self.outbox().is_empty() && self.sends.is_empty() && self.commit.in_flight.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(at_ms: u64, turn: Option<&str>, text: &str) -> Envelope {
        Envelope {
            at_ms,
            pid: 1,
            event: Event::HookReceived(HookReceived {
                kind: Some(HookKind::PromptSubmit),
                turn_id: turn.map(str::to_string),
                prompt: Some(text.into()),
                ..HookReceived::default()
            }),
        }
    }

    #[test]
    fn a_second_prompt_for_the_same_turn_is_a_duplicate() {
        let mut s = State::fold(&[prompt(1000, Some("t1"), "hi")]);
        assert!(!s.last_prompt_is_duplicate());
        s.apply(&prompt(5000, Some("t1"), "hi"));
        assert!(s.last_prompt_is_duplicate(), "same turn id, any delay");
        s.apply(&prompt(5001, Some("t2"), "hi"));
        assert!(
            !s.last_prompt_is_duplicate(),
            "same text on another turn is a new prompt"
        );
    }

    #[test]
    fn without_turn_ids_the_same_text_within_500ms_is_a_duplicate() {
        let mut s = State::fold(&[prompt(1000, None, "continue")]);
        s.apply(&prompt(1300, None, "continue"));
        assert!(s.last_prompt_is_duplicate());
        s.apply(&prompt(2000, None, "continue"));
        assert!(!s.last_prompt_is_duplicate(), "700 ms later: a new prompt");
        s.apply(&prompt(2100, None, "other"));
        assert!(!s.last_prompt_is_duplicate(), "different text");
    }

    #[test]
    fn session_start_debounce_is_two_seconds() {
        let ss = |at_ms| Envelope {
            at_ms,
            pid: 1,
            event: Event::HookReceived(HookReceived {
                kind: Some(HookKind::SessionStart),
                ..HookReceived::default()
            }),
        };
        let mut s = State::fold(&[ss(10_000)]);
        assert!(!s.last_session_start_debounced());
        s.apply(&ss(11_999));
        assert!(s.last_session_start_debounced());
        s.apply(&ss(14_000));
        assert!(!s.last_session_start_debounced());
    }
}
