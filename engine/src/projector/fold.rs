//! The fold: how each event changes a session's [`State`].

use super::delivered::key_identity;
use super::state::DAMAGE_PROBLEM;
use super::{
    estimate_tokens, CommitInFlight, MessageRecord, MessageStatus, PromptSeen, RolloutPosition,
    SendRecord, State, TurnLiveness, KEPT_HALF_TURN_RECORDS, KEPT_TURN_LIVENESS,
    MAX_SINGLE_ATTEMPTS, RECALL_CACHE_ENTRIES,
};
use crate::event::{Envelope, Event, HookKind, HookReceived, PlannedMessage, WorkerReason};
use crate::failure::Failure;
use crate::turn::{DedupKey, Role};

/// The other message of a turn.
fn other_role(role: Role) -> Role {
    match role {
        Role::User => Role::Assistant,
        Role::Assistant => Role::User,
    }
}

/// Why a forgotten turn's messages are set aside.
pub const FORGOTTEN: &str = "forgotten by the user (ovhook forget)";

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
        self.apply_event(env);
        self.let_go_settled();
        // Tool calls of a planned message are kept until it is settled.
        if !self.planned_tools.is_empty() {
            let messages = &self.messages;
            self.planned_tools
                .retain(|k, _| messages.get(k).is_some_and(|r| !r.status.is_settled()));
        }
    }

    /// Tool calls of a turn wait only while its answer is neither planned nor known delivered
    /// (only planning and [`Event::ServerHolds`] change that).
    fn drop_answered_tools(&mut self) {
        if !self.tool_calls.is_empty() {
            let (messages, delivered) = (&self.messages, &self.delivered);
            self.tool_calls.retain(|(turn, _)| {
                let answer = DedupKey::for_turn(turn, Role::Assistant);
                !messages.contains_key(&answer) && !delivered.contains(key_identity(&answer))
            });
        }
    }

    /// A state decoded from an older snapshot layout, brought to what a fold of today keeps:
    /// settled records let go, hook liveness of the latest turns only.
    pub(crate) fn upgraded(mut self) -> State {
        while self.turns.len() > KEPT_TURN_LIVENESS {
            let oldest = self
                .turns
                .iter()
                .min_by_key(|(_, t)| t.order)
                .map(|(id, _)| id.clone());
            match oldest {
                Some(id) => self.turns.remove(&id),
                None => break,
            };
        }
        self.let_go_settled();
        self
    }

    fn apply_event(&mut self, env: &Envelope) {
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
                    // Hooks without a `turnId` named this turn by its `traceId`.
                    if let Some(t) = f.trace_id.as_deref().and_then(|tr| self.turns.get_mut(tr)) {
                        t.in_rollout = true;
                    }
                }
                let (messages, delivered) = (&self.messages, &self.delivered);
                self.book.observe_chunk_given(chunk, |k| {
                    messages.contains_key(k) || delivered.contains(key_identity(k))
                });
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
                    if let Some(id) = &m.turn_id {
                        self.book.observe_planned(id);
                    }
                    let new = !self.messages.contains_key(&m.key);
                    self.plan(m, at);
                    if let (Some(id), Role::Assistant) = (&m.turn_id, m.role) {
                        self.plan_tools(id, &m.key, new);
                    }
                }
                self.drop_answered_tools();
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
                let failure = Failure::classify(*status, *retryable, *request_sent);
                if failure == Failure::InDoubt {
                    self.doubt_send(*send_id, *status, error);
                } else if let Some(send) = self.sends.remove(send_id) {
                    self.fail_send(&send, failure, *status, error);
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
                retryable,
                error,
                request_sent,
            } => {
                if Failure::classify(*status, *retryable, *request_sent) == Failure::InDoubt {
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
            Event::Redacted { counts, .. } => self.redactions.merge(counts),
            Event::ProfileServed { .. }
            | Event::CommitTraced { .. }
            | Event::SpillIngested { .. }
            | Event::Pruned { .. } => {}
            Event::TranscriptNamed { path } => self.transcript_path = Some(path.clone()),
            Event::ServerHolds { identities } => {
                for id in identities {
                    self.delivered.insert(*id);
                }
                self.drop_answered_tools();
                self.prune_book();
            }
            Event::ServerUnreachable {
                error,
                retry_after_ms,
            } => {
                self.backoff_until_ms =
                    Some(at.saturating_add(crate::clock::backoff_len(*retry_after_ms)));
                self.backoff_reason = Some(error.clone());
            }
            Event::ServerReachable => self.clear_backoff(),
            Event::Problem { context, message } => {
                self.problem(format!("{context}: {message}"));
            }
            Event::JournalDamaged {
                segment,
                offset,
                len,
                reason,
            } => {
                self.acks_unverified = true;
                self.problem(format!(
                    "{DAMAGE_PROBLEM}{len} bytes unreadable at {segment}:{offset} ({reason})"
                ));
            }
            Event::CaptureRefused { turn_id, reason } => {
                self.book.observe_refused(turn_id.as_deref(), reason);
                self.prune_book();
            }
            Event::Forgotten { turn_id, .. } => self.forget(turn_id.as_deref(), at),
            Event::ToolCalls { turn_id, calls, .. } => self.add_tool_calls(turn_id, calls),
            Event::SubagentTurn {
                turn_id,
                prompt,
                answer,
                ..
            } => {
                self.touch_turn(turn_id, at).stops += 1;
                let prompt = prompt.as_deref().and_then(crate::text::user_words);
                let answer = answer
                    .as_deref()
                    .map(crate::text::clean_injected)
                    .filter(|s| !s.is_empty());
                self.book
                    .observe_subagent_turn(turn_id, prompt.as_deref(), answer.as_deref(), at);
            }
            Event::AllReconciled { present } => {
                for k in present {
                    self.ack(k, at);
                }
                self.acks_unverified = false;
                self.clear_backoff();
            }
        }
    }

    /// The user forgot turn `turn_id` (`None`: the whole session): it is never planned again,
    /// and its messages not yet settled are set aside (never sent).
    fn forget(&mut self, turn_id: Option<&str>, at: u64) {
        self.tool_calls
            .retain(|(t, _)| turn_id.is_some_and(|id| id != t));
        match turn_id {
            Some(id) => self.book.observe_refused(Some(id), FORGOTTEN),
            None => self.forgotten_at_ms = Some(at),
        }
        for r in self.messages.values_mut() {
            let of_it = turn_id.is_none_or(|id| r.turn_id.as_deref() == Some(id));
            if of_it && !r.status.is_settled() {
                r.status = MessageStatus::SetAside {
                    status: 0,
                    error: FORGOTTEN.to_owned(),
                };
                r.content = None;
            }
        }
        if turn_id.is_none() {
            self.sends.clear();
        } else {
            let messages = &self.messages;
            self.sends.retain(|_, s| {
                s.keys
                    .iter()
                    .any(|k| messages.get(k).is_some_and(|r| !r.status.is_settled()))
            });
        }
        self.prune_book();
    }

    /// Tool calls of `turn_id` wait for its assistant message; ignored once that message was
    /// planned (or delivered): they go with it or not at all.
    fn add_tool_calls(&mut self, turn_id: &str, calls: &[crate::tool::ToolCall]) {
        let answer = DedupKey::for_turn(turn_id, Role::Assistant);
        if self.messages.contains_key(&answer)
            || self.delivered.contains(key_identity(&answer))
            || self.forgotten_at_ms.is_some()
        {
            return;
        }
        match self.tool_calls.iter_mut().find(|(t, _)| t == turn_id) {
            Some((_, kept)) => crate::tool::add_calls(kept, calls),
            None => {
                let mut kept = Vec::new();
                crate::tool::add_calls(&mut kept, calls);
                self.tool_calls.push((turn_id.to_owned(), kept));
                if self.tool_calls.len() > super::KEPT_TOOL_TURNS {
                    self.tool_calls.remove(0);
                }
            }
        }
    }

    /// The assistant message `key` of turn `turn_id` was planned: the turn's tool calls move
    /// onto it when it is a new message still to be sent.
    fn plan_tools(&mut self, turn_id: &str, key: &DedupKey, new: bool) {
        let Some(pos) = self.tool_calls.iter().position(|(t, _)| t == turn_id) else {
            return;
        };
        let (_, calls) = self.tool_calls.remove(pos);
        let sendable = self
            .messages
            .get(key)
            .is_some_and(|r| !r.status.is_settled() && r.content.is_some());
        if new && sendable && !calls.is_empty() {
            self.planned_tools.insert(key.clone(), calls);
        }
    }

    fn problem(&mut self, p: String) {
        self.problems.push(p);
        if self.problems.len() > 32 {
            self.problems.remove(0);
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
        let turn = h.turn();
        match kind {
            HookKind::SessionStart => {
                self.prev_session_start_ms = self.last_session_start_ms;
                self.last_session_start_ms = Some(at);
            }
            HookKind::PromptSubmit => {
                if let Some(t) = turn {
                    self.touch_turn(t, at).prompts += 1;
                }
                let cleaned =
                    crate::text::user_words(h.prompt.as_deref().unwrap_or("")).unwrap_or_default();
                self.prev_prompt = self.last_prompt.take();
                self.last_prompt = Some(PromptSeen {
                    turn_id: turn.map(str::to_string),
                    hash: xxhash_rust::xxh3::xxh3_64(cleaned.as_bytes()),
                    at_ms: at,
                });
                if !cleaned.is_empty() {
                    self.book.observe_prompt_at(turn, &cleaned, Some(at));
                } else if turn.is_some() || h.prompt.is_none() {
                    // Seen without its words: received without content, or a harness whose
                    // transcript has the prompt (an id-less one is an unnamed turn).
                    self.book.observe_prompt_hook(turn, None);
                }
            }
            HookKind::PreToolUse => {
                if let Some(t) = turn {
                    self.touch_turn(t, at).tool_uses += 1;
                }
                self.book.observe_tool_use(turn);
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
                let preview = h
                    .response_preview
                    .as_deref()
                    .map(crate::text::clean_injected)
                    .filter(|s| !s.is_empty());
                self.book.observe_stop_with_preview(
                    turn,
                    response.as_deref(),
                    preview.as_deref(),
                    Some(at),
                );
            }
            // Its worker closes the open turns (SessionEnd) or sends what is complete
            // (PreCompact) and commits; a subagent's turn is its own event
            // (`Event::SubagentTurn`): nothing to fold here.
            HookKind::SessionEnd | HookKind::PreCompact | HookKind::SubagentStop => {}
        }
    }

    fn touch_turn(&mut self, turn_id: &str, at: u64) -> &mut TurnLiveness {
        // Look up before inserting: no key allocation for a turn already seen.
        if !self.turns.contains_key(turn_id) {
            if self.turns.len() >= KEPT_TURN_LIVENESS {
                let oldest = self
                    .turns
                    .iter()
                    .min_by_key(|(_, t)| t.order)
                    .map(|(id, _)| id.clone());
                if let Some(oldest) = oldest {
                    self.turns.remove(&oldest);
                }
            }
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
        // A message with nothing to send is dropped, as the planner drops it
        // (`crate::plan::planned_message`; older builds planned it empty).
        if self.already_planned(&m.key, m.turn_id.as_deref(), m.role, &m.content)
            || crate::plan::nothing_to_send(&m.content)
        {
            return;
        }
        let order = self.next_order;
        self.next_order += 1;
        self.order.insert(order, m.key.clone());
        // A message over the size limit is planned as its stand-in and never sent.
        let oversized = crate::text::oversized::stand_in_len(&m.content);
        let status = match oversized {
            Some(len) => MessageStatus::SetAside {
                status: 0,
                error: crate::text::oversized::set_aside_reason(len),
            },
            None => MessageStatus::Pending,
        };
        self.messages.insert(
            m.key.clone(),
            MessageRecord {
                order,
                turn_id: m.turn_id.clone(),
                role: m.role,
                status,
                content: oversized.is_none().then(|| m.content.clone()),
                content_len: m.content.len() as u64,
                interrupted: m.interrupted,
                created_at_ms: m.created_at_ms,
                failures: 0,
                needs_single: false,
                last_error: None,
                planned_at_ms: at,
                acked_at_ms: None,
            },
        );
    }

    fn prune_book(&mut self) {
        let mut book = std::mem::take(&mut self.book);
        let state = &*self;
        book.retain_unplanned(|c| {
            crate::plan::nothing_to_send(&c.content)
                || state.already_planned(
                    &c.key,
                    c.turn_id.as_deref(),
                    c.role,
                    &crate::plan::sendable(&c.content),
                )
        });
        self.book = book;
    }

    /// Lets go of the settled records at the head of the plan order, so the state does not
    /// grow with the session: an acknowledged one leaves `messages` and its identity goes to
    /// `delivered` (enough to never plan it again); a set-aside one keeps its record (with
    /// its reason) but leaves `order`. Stops at the first unsettled message, at a settled
    /// one whose turn has an unsettled message (the cursor stops there), and at one whose
    /// turn's other message is not settled while at most [`KEPT_HALF_TURN_RECORDS`] records
    /// are kept.
    fn let_go_settled(&mut self) {
        while let Some((_, key)) = self.order.first_key_value() {
            let key = key.clone();
            let Some(r) = self.messages.get(&key) else {
                self.order.pop_first();
                continue;
            };
            if !r.status.is_settled() {
                return;
            }
            let acked = matches!(r.status, MessageStatus::Acked);
            if let Some(turn) = r.turn_id.clone() {
                let open = self
                    .messages
                    .values()
                    .any(|m| !m.status.is_settled() && m.turn_id.as_deref() == Some(turn.as_str()));
                if open {
                    return;
                }
                // The turn's other message may still be planned (a late prompt): the cursor
                // must then stop before this turn, so its record waits, within the window.
                let other = DedupKey::for_turn(&turn, other_role(r.role));
                let other_settled = match self.messages.get(&other) {
                    Some(m) => m.status.is_settled(),
                    None => self.delivered.contains(key_identity(&other)),
                };
                if !other_settled && self.messages.len() <= KEPT_HALF_TURN_RECORDS {
                    return;
                }
                self.delivered_cursor = Some(turn);
            }
            self.order.pop_first();
            if acked {
                self.messages.remove(&key);
                self.delivered.insert(key_identity(&key));
                self.records_let_go += 1;
            }
        }
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

    fn fail_send(&mut self, send: &SendRecord, failure: Failure, status: u16, error: &str) {
        if failure == Failure::NoEndpoint && !send.single {
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
            if failure.keeps_messages() {
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

    /// The damage recorded is the problem of each `JournalDamaged`, and no other problem.
    #[test]
    fn damage_recorded_is_the_problems_of_journal_damage() {
        let at = |event| Envelope {
            at_ms: 1,
            pid: 1,
            event,
        };
        let s = State::fold(&[
            at(Event::Problem {
                context: "reconcile".into(),
                message: "server said no".into(),
            }),
            at(Event::JournalDamaged {
                segment: 2,
                offset: 32,
                len: 7,
                reason: "frame checksum".into(),
            }),
            at(Event::Problem {
                context: "transcript /t/journal: x.jsonl".into(),
                message: "unreadable".into(),
            }),
        ]);
        assert_eq!(s.problems.len(), 3);
        let recorded: Vec<&str> = s.damage_recorded().collect();
        assert_eq!(
            recorded,
            ["journal: 7 bytes unreadable at 2:32 (frame checksum)"]
        );
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
        assert!(!s.last_session_start_debounced(Some("startup")));
        s.apply(&ss(11_999));
        assert!(s.last_session_start_debounced(Some("resume")));
        assert!(
            !s.last_session_start_debounced(Some("compact")),
            "a compaction always gets its context back"
        );
        s.apply(&ss(14_000));
        assert!(!s.last_session_start_debounced(None));
    }

    /// A clock a day ahead while the server was down, then set right: nothing it wrote keeps
    /// recall, profile or SessionStart off.
    #[test]
    fn windows_written_by_a_clock_a_day_ahead_are_over_once_it_is_right() {
        const DAY: u64 = 24 * 3600 * 1000;
        let now = 1_800_000_000_000;
        let at = |at_ms, event| Envelope {
            at_ms,
            pid: 1,
            event,
        };
        let ss = |at_ms| {
            at(
                at_ms,
                Event::HookReceived(HookReceived {
                    kind: Some(HookKind::SessionStart),
                    ..HookReceived::default()
                }),
            )
        };
        let mut s = State::fold(&[
            ss(now + DAY),
            at(
                now + DAY,
                Event::ServerUnreachable {
                    error: "connection refused".into(),
                    retry_after_ms: 30_000,
                },
            ),
            prompt(now + DAY, None, "continue"),
        ]);
        assert!(s.backing_off(now + DAY), "for the clock that wrote it");
        assert!(!s.backing_off(now), "the clock is right again");
        s.apply(&ss(now));
        assert!(!s.last_session_start_debounced(Some("startup")));
        s.apply(&prompt(now, None, "continue"));
        assert!(!s.last_prompt_is_duplicate());
        s.apply(&at(
            now,
            Event::ServerUnreachable {
                error: "refused".into(),
                retry_after_ms: 7 * DAY,
            },
        ));
        assert_eq!(
            s.backoff_until_ms,
            Some(now + crate::clock::MAX_BACKOFF_MS),
            "a back-off is capped"
        );
        assert!(s.backing_off(now + 1));
    }
}
