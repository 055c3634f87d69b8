//! Reconciliation: in-doubt sends and commits are settled with the server
//! before anything is resent.

use std::time::Duration;

use ov_journal::Durability;

use super::{
    unreachable_event, DeliverySettings, HeldMessage, Run, RunError, RunReport, Transport,
};
use crate::event::Event;
use crate::failure::Failure;
use crate::projector::delivered::{content_identity, key_identity, Identity};
use crate::projector::{MessageRecord, MessageStatus, State};
use crate::store::now_ms;
use crate::turn::{DedupKey, Role};

/// An in-doubt request younger than this may still be in the server's hands
/// (its sender died after the body left); reconciling it sooner could find it
/// absent and resend it just before the server applies it.
pub const IN_DOUBT_SETTLE_MS: u64 = 3_000;

/// Settles in-doubt sends and commits. Returns false when the server cannot be reached.
pub(super) fn reconcile(
    run: &mut Run<'_>,
    t: &dyn Transport,
    settings: &DeliverySettings,
    report: &mut RunReport,
) -> Result<bool, RunError> {
    let youngest = run
        .state
        .sends
        .values()
        .filter(|s| !s.answered)
        .map(|s| s.started_at_ms)
        .chain(run.state.commit.in_flight.iter().map(|c| c.started_at_ms))
        .max();
    if let Some(started) = youngest {
        // A start after now (the clock moved back since) is of unknown age: the whole window,
        // never longer.
        let age = now_ms().saturating_sub(started);
        if age < settings.in_doubt_settle_ms {
            let wait = Duration::from_millis(settings.in_doubt_settle_ms - age);
            if settings
                .deadline
                .is_some_and(|d| std::time::Instant::now() + wait > d)
            {
                // Inside a hook's budget the settle does not fit: a later worker decides.
                return Ok(false);
            }
            std::thread::sleep(wait);
        }
    }
    if !run.state.sends.is_empty() {
        let held = match t.held_messages(&settings.remote_session) {
            Ok(h) => h,
            Err(e) => {
                if e.failure(false) == Failure::Unreachable {
                    run.append(unreachable_event(&e, settings), Durability::Buffered)?;
                    return Ok(false);
                }
                run.append(
                    Event::Problem {
                        context: "reconcile".into(),
                        message: e.message,
                    },
                    Durability::Buffered,
                )?;
                return Ok(false);
            }
        };
        let (send_ids, present, absent) = classify_in_doubt(&run.state, &held);
        report.reconciled_present += present.len();
        report.reconciled_absent += absent.len();
        run.append(
            Event::Reconciled {
                send_ids,
                present,
                absent,
            },
            Durability::Sync,
        )?;
    }
    if let Some(inflight) = run.state.commit.in_flight.clone() {
        let applied = match (
            inflight.commit_count_before,
            t.commit_count(&settings.remote_session),
        ) {
            (Some(before), Ok(Some(now))) => now > before,
            (_, Err(e)) if e.failure(false) == Failure::Unreachable => {
                run.append(unreachable_event(&e, settings), Durability::Buffered)?;
                return Ok(false);
            }
            _ => false,
        };
        run.append(
            Event::CommitReconciled {
                commit_id: inflight.commit_id,
                applied,
            },
            Durability::Sync,
        )?;
    }
    Ok(true)
}

/// After journal damage ([`State::acks_unverified`]): what the server holds for the session
/// (live and archived) is journaled as delivered identities ([`Event::ServerHolds`]), so no
/// message it holds is planned again, also one the transcript yields only later (damage
/// loses the transcript position: the next read starts at its first byte); every message
/// already planned and not known to be acknowledged is checked, and those it holds are
/// acknowledged. Runs before the transcript is read and before anything is sent. Returns
/// false when the server cannot be asked, or when the session is not known yet (the damage
/// took its id: a hook event names it again), and then nothing may be sent.
pub(super) fn reconcile_all(
    run: &mut Run<'_>,
    t: &dyn Transport,
    settings: &DeliverySettings,
    report: &mut RunReport,
) -> Result<bool, RunError> {
    if !run.state.acks_unverified {
        return Ok(true);
    }
    if run.state.session_id.is_none() {
        return Ok(false);
    }
    let held = match t.held_messages(&settings.remote_session) {
        Ok(h) => h,
        Err(e) => {
            let event = if e.unreachable || e.status == 0 {
                unreachable_event(&e, settings)
            } else {
                Event::Problem {
                    context: "reconcile".into(),
                    message: e.message,
                }
            };
            run.append(event, Durability::Buffered)?;
            return Ok(false);
        }
    };
    let present: Vec<DedupKey> = run
        .state
        .messages
        .iter()
        .filter(|(_, r)| {
            matches!(
                r.status,
                MessageStatus::Pending | MessageStatus::InFlight { .. }
            ) && held_by_server(r, &held)
        })
        .map(|(k, _)| k.clone())
        .collect();
    report.reconciled_present += present.len();
    let identities = held.iter().filter_map(held_identity).collect();
    run.append(Event::ServerHolds { identities }, Durability::Buffered)?;
    run.append(Event::AllReconciled { present }, Durability::Sync)?;
    Ok(true)
}

/// The identity a message the server holds gives (by turn id and role, or by content without
/// a turn id); None for a role we never send.
fn held_identity(h: &HeldMessage) -> Option<Identity> {
    let role = [Role::User, Role::Assistant]
        .into_iter()
        .find(|r| r.as_str() == h.role)?;
    Some(match &h.turn_id {
        Some(turn) => key_identity(&DedupKey::for_turn(turn, role)),
        None => content_identity(role, &h.content),
    })
}

/// The server holds this message: same role, and same turn id (or, without one, same content).
fn held_by_server(r: &MessageRecord, held: &[HeldMessage]) -> bool {
    let role = r.role.as_str();
    held.iter().any(|h| {
        h.role == role
            && match (&r.turn_id, &h.turn_id) {
                (Some(a), Some(b)) => a == b,
                (None, _) => r.content.as_deref() == Some(h.content.as_str()),
                (Some(_), None) => false,
            }
    })
}

/// Splits the keys of every in-doubt send into those the server holds and those it does not.
pub fn classify_in_doubt(
    state: &State,
    held: &[HeldMessage],
) -> (Vec<u64>, Vec<DedupKey>, Vec<DedupKey>) {
    let mut present = Vec::new();
    let mut absent = Vec::new();
    let send_ids: Vec<u64> = state.sends.keys().copied().collect();
    for send in state.sends.values() {
        for key in &send.keys {
            let Some(r) = state.messages.get(key) else {
                continue;
            };
            if !matches!(r.status, MessageStatus::InFlight { .. }) {
                continue;
            }
            if held_by_server(r, held) {
                present.push(key.clone());
            } else {
                absent.push(key.clone());
            }
        }
    }
    (send_ids, present, absent)
}
