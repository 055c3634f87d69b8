//! Committing the session once enough is acknowledged.

use std::cell::Cell;

use ov_journal::Durability;

use super::{unreachable_event, DeliverySettings, Run, RunError, RunReport, Transport};
use crate::event::Event;
use crate::failpoint;
use crate::failure::Failure;

pub(super) fn commit_if_due(
    run: &mut Run<'_>,
    t: &dyn Transport,
    settings: &DeliverySettings,
    report: &mut RunReport,
) -> Result<(), RunError> {
    let c = &run.state.commit;
    let due = c.uncommitted() > 0
        && (settings.force_commit || c.uncommitted_tokens() >= settings.commit_token_threshold);
    if !due || !run.state.sends.is_empty() || c.in_flight.is_some() {
        return Ok(());
    }
    let before = match t.commit_count(&settings.remote_session) {
        Ok(n) => n,
        Err(e) if e.failure(false) == Failure::Unreachable => {
            run.append(unreachable_event(&e, settings), Durability::Buffered)?;
            return Ok(());
        }
        Err(_) => None,
    };
    let commit_id = run.state.next_commit_id;
    run.append(
        Event::CommitStarted {
            commit_id,
            commit_count_before: before,
        },
        Durability::Sync,
    )?;
    let sent = Cell::new(false);
    let on_sent = || {
        sent.set(true);
        failpoint::hit(failpoint::AFTER_COMMIT_SENT);
    };
    let trace_id = match t.commit(&settings.remote_session, &on_sent) {
        Ok(reply) => {
            report.committed = true;
            run.append(
                Event::CommitAcked {
                    commit_id,
                    task_id: reply.task_id,
                    archive_uri: reply.archive_uri,
                },
                Durability::Sync,
            )?;
            reply.trace_id
        }
        Err(e) => {
            // After the request left, a network error or 5xx leaves the commit
            // in doubt: the next run compares the server's commit count.
            run.append(
                Event::CommitFailed {
                    commit_id,
                    status: e.status,
                    retryable: e.retryable,
                    error: e.message.clone(),
                    request_sent: sent.get(),
                },
                Durability::Buffered,
            )?;
            if e.failure(sent.get()) == Failure::Unreachable {
                run.append(unreachable_event(&e, settings), Durability::Buffered)?;
            }
            e.trace_id
        }
    };
    if let Some(trace_id) = trace_id {
        run.append(
            Event::CommitTraced {
                commit_id,
                trace_id,
            },
            Durability::Buffered,
        )?;
    }
    Ok(())
}
