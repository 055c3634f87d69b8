//! How the outbox folds: a planned message's record, its sends and their outcomes (acked,
//! failed, in doubt), the commit that follows, and letting go of what is settled.

use super::delivered::key_identity;
use super::{
    estimate_tokens, MessageRecord, MessageStatus, SendRecord, State, KEPT_HALF_TURN_RECORDS,
};
use crate::event::PlannedMessage;
use crate::failure::Failure;
use crate::turn::{DedupKey, Role};

/// The other message of a turn.
fn other_role(role: Role) -> Role {
    match role {
        Role::User => Role::Assistant,
        Role::Assistant => Role::User,
    }
}

impl State {
    pub(super) fn plan(&mut self, m: &PlannedMessage, at: u64) {
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

    pub(super) fn prune_book(&mut self) {
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
    pub(super) fn let_go_settled(&mut self) {
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

    pub(super) fn ack(&mut self, key: &DedupKey, at: u64) {
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

    pub(super) fn fail_send(
        &mut self,
        send: &SendRecord,
        failure: Failure,
        status: u16,
        error: &str,
    ) {
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
    pub(super) fn doubt_send(&mut self, send_id: u64, status: u16, error: &str) {
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

    pub(super) fn settle_commit(&mut self, commit_id: u64, applied: bool, error: Option<String>) {
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

    pub(super) fn clear_backoff(&mut self) {
        self.backoff_until_ms = None;
        self.backoff_reason = None;
    }
}
