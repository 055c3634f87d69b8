//! Sending the outbox: batches, single sends, and what each failure means.

use std::cell::Cell;
use std::time::Duration;

use ov_journal::Durability;

use super::reconcile::reconcile;
use super::{
    unreachable_event, DeliverySettings, OutgoingMessage, Run, RunError, RunReport, Transport,
};
use crate::event::Event;
use crate::failpoint;
use crate::failure::Failure;
use crate::projector::State;
use crate::turn::DedupKey;

/// The next request: a batch of consecutive pending messages, or one message
/// alone when batches are unsupported or it made a batch fail for good.
fn next_request(state: &State, settings: &DeliverySettings) -> Option<(Vec<DedupKey>, bool)> {
    let outbox = state.outbox();
    let (first_key, first) = outbox.first()?;
    if state.batch_unsupported || first.needs_single {
        return Some((vec![(*first_key).clone()], true));
    }
    let mut keys = Vec::new();
    let mut bytes = 0usize;
    for (k, r) in outbox {
        if r.needs_single {
            break;
        }
        let tools: usize = state
            .planned_tools
            .get(k)
            .map_or(0, |t| t.iter().map(crate::tool::ToolCall::wire_len).sum());
        let len = r.content.as_deref().map_or(0, str::len) + tools + 64;
        if !keys.is_empty()
            && (keys.len() >= settings.batch_max || bytes + len > settings.batch_max_bytes)
        {
            break;
        }
        bytes += len;
        keys.push(k.clone());
    }
    Some((keys, false))
}

fn outgoing(state: &State, keys: &[DedupKey]) -> Vec<OutgoingMessage> {
    keys.iter()
        .filter_map(|k| state.messages.get(k).map(|r| (k, r)))
        .map(|(k, r)| OutgoingMessage {
            role: r.role,
            content: r.content.clone().unwrap_or_default(),
            turn_id: r.turn_id.clone(),
            created_at_ms: r.created_at_ms,
            tools: state.planned_tools.get(k).cloned().unwrap_or_default(),
        })
        .collect()
}

/// Sends the outbox. Returns false when the server turned out unreachable.
pub(super) fn send_outbox(
    run: &mut Run<'_>,
    t: &dyn Transport,
    settings: &DeliverySettings,
    report: &mut RunReport,
) -> Result<bool, RunError> {
    let mut requests = 0;
    let mut transient = 0u32;
    while requests < settings.max_requests {
        let Some((keys, single)) = next_request(&run.state, settings) else {
            break;
        };
        requests += 1;
        report.requests += 1;
        let send_id = run.state.next_send_id;
        let messages = outgoing(&run.state, &keys);
        run.append(
            Event::SendStarted {
                send_id,
                keys: keys.clone(),
                single,
            },
            Durability::Sync,
        )?;
        let sent = Cell::new(false);
        let on_sent = || {
            sent.set(true);
            failpoint::hit(failpoint::AFTER_REQUEST_SENT);
        };
        let result = match (single, messages.first()) {
            (true, Some(m)) => t.add_one(&settings.remote_session, m, &on_sent),
            _ => t.add_batch(&settings.remote_session, &messages, &on_sent),
        };
        failpoint::hit(failpoint::AFTER_REPLY_BEFORE_OUTCOME);
        match result {
            Ok(()) => {
                report.acked += keys.len();
                run.append(Event::SendAcked { send_id }, Durability::Sync)?;
            }
            Err(e) => {
                let request_sent = sent.get();
                run.append(
                    Event::SendFailed {
                        send_id,
                        status: e.status,
                        retryable: e.retryable,
                        error: e.message.clone(),
                        request_sent,
                    },
                    Durability::Sync,
                )?;
                match e.failure(request_sent) {
                    Failure::Unreachable => {
                        run.append(unreachable_event(&e, settings), Durability::Buffered)?;
                        return Ok(false);
                    }
                    // Nothing else will go through either until the user fixes them.
                    Failure::Credentials => return Ok(true),
                    Failure::InDoubt => {
                        // The request may have been applied: settle it with the
                        // server before anything is resent.
                        if !reconcile(run, t, settings, report)? {
                            return Ok(false);
                        }
                        transient += 1;
                    }
                    Failure::Transient => transient += 1,
                    // The fold sends them one by one next.
                    Failure::NoEndpoint | Failure::Refused => {}
                }
                if transient > settings.transient_retries {
                    return Ok(true);
                }
                if transient > 0 {
                    let pause = Duration::from_millis(100 << transient.min(5));
                    if settings
                        .deadline
                        .is_some_and(|d| std::time::Instant::now() + pause > d)
                    {
                        // As when the retries run out: a later worker sends what is left.
                        return Ok(true);
                    }
                    std::thread::sleep(pause);
                }
            }
        }
    }
    Ok(true)
}
