//! The fold: how each event changes a session's [`State`].

use super::delivered::key_identity;
use super::state::DAMAGE_PROBLEM;
use super::{
    CommitInFlight, MessageStatus, PromptSeen, RolloutPosition, SendRecord, State, TurnLiveness,
    KEPT_TURN_LIVENESS, MAX_SINGLE_ATTEMPTS, RECALL_CACHE_ENTRIES,
};
use crate::event::{Envelope, Event, HookKind, HookReceived, WorkerReason};
use crate::failure::Failure;
use crate::turn::Role;

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
