//! The worker pipeline: fold → reconcile (after damage: with everything the server holds) →
//! read transcript → plan → send → commit.
//!
//! # Exactly once
//!
//! Every send is journaled (durably) before its request goes out and its
//! outcome after the reply. A send with no outcome is *in doubt*: the request
//! may or may not have reached the server. Before anything is resent, the
//! worker (holding the session's worker lock, so no other sender is alive)
//! asks the server which of those messages it holds — matching on turn id and
//! role — and journals the answer. A failure after the request body left
//! (network error, timeout, 5xx) is in doubt too, never a plain failure, so a
//! reply lost on the way back can never cause a duplicate.
//!
//! # Lock protocol
//!
//! Hooks append without the worker lock. A worker takes the lock, works,
//! releases the lock, and goes round again if the journal holds events its
//! run did not see (a Stop that arrived meanwhile may have seen the lock taken
//! and left).
//! A worker that cannot take the lock leaves at once: the holder will see its
//! events.

mod commit;
mod reconcile;
mod send;
mod tools;
mod transport;
mod worker;

use ov_journal::Durability;

use crate::event::{Envelope, Event};
use crate::failpoint;
use crate::plan::plan;
use crate::projector::State;
use crate::store::{now_ms, SessionStore, StoreError};
use crate::turn::TranscriptChunk;

pub use reconcile::{classify_in_doubt, IN_DOUBT_SETTLE_MS};
pub use transport::{
    CommitReply, HeldMessage, OutgoingMessage, TranscriptSource, Transport, TransportError,
};
pub use worker::{
    drain_has_work, run_worker, WorkerContext, COMPACT_ACTIVE_BYTES, COMPACT_AFTER_RECORDS,
    TRANSCRIPT_LAG_WAIT,
};

/// What one delivery run should do.
#[derive(Debug, Clone)]
pub struct DeliverySettings {
    /// The OpenViking session id (`zc-…`).
    pub remote_session: String,
    /// Plan captures at all.
    pub capture_enabled: bool,
    /// Truncate sent content to this many chars (the dedup key never changes).
    pub max_length: Option<usize>,
    /// Commit once this many estimated tokens are acknowledged and uncommitted (0: every turn).
    pub commit_token_threshold: u64,
    /// Commit whatever is uncommitted (a drain).
    pub force_commit: bool,
    /// Back-off after an unreachable server.
    pub backoff_ms: u64,
    /// Largest batch.
    pub batch_max: usize,
    /// Largest batch body (approximate bytes).
    pub batch_max_bytes: usize,
    /// Most send requests in one run (bounds a worker's time).
    pub max_requests: usize,
    /// Transient failures (5xx, 408, 429, lost replies) retried within one run.
    pub transient_retries: u32,
    /// Wait until in-doubt requests are this old before asking the server
    /// about them ([`IN_DOUBT_SETTLE_MS`]).
    pub in_doubt_settle_ms: u64,
    /// A hook's budget, for a run inside a hook (PreCompact): no wait of the run (the in-doubt
    /// settle, a retry's pause) goes past it; what is left stays journaled for a later worker.
    pub deadline: Option<std::time::Instant>,
    /// Journal [`Event::OpenTurnsClosed`] once the transcript is read: every turn still
    /// open counts as over (a drain, a session end, a resume). After the read, so that
    /// what the transcript holds of the last turn is part of it.
    pub close_open_turns: bool,
    /// Try the server even inside the unreachable back-off window (a drain
    /// must finish all unfinished work; a Stop worker respects the window).
    pub ignore_backoff: bool,
    /// Which answer of a turn is sent when the Stop payload and the transcript
    /// both have one (the harness's choice).
    pub answer_precedence: crate::turnbook::AnswerPrecedence,
    /// The privacy rule applied to every transcript read before it is journaled (the
    /// built-ins, plus the user's capture rules).
    pub privacy: crate::privacy::Policy,
    /// `journal.retention_days`: the worker prunes segments only a snapshot still needs
    /// once they are this old ([`crate::retention`]).
    pub retention_days: u64,
    /// `capture.tools`: the tool calls a transcript read finds are journaled
    /// ([`crate::tool`]); off, nothing of them is.
    pub capture_tools: bool,
}

impl From<&DeliverySettings> for crate::plan::PlanSettings {
    fn from(s: &DeliverySettings) -> crate::plan::PlanSettings {
        crate::plan::PlanSettings {
            answer_precedence: s.answer_precedence,
            max_length: s.max_length,
        }
    }
}

impl DeliverySettings {
    /// Defaults for a session.
    pub fn new(remote_session: String) -> DeliverySettings {
        DeliverySettings {
            remote_session,
            capture_enabled: true,
            max_length: None,
            commit_token_threshold: 0,
            force_commit: false,
            backoff_ms: 30_000,
            batch_max: 100,
            batch_max_bytes: 4 << 20,
            max_requests: 200,
            transient_retries: 3,
            ignore_backoff: false,
            close_open_turns: false,
            in_doubt_settle_ms: IN_DOUBT_SETTLE_MS,
            deadline: None,
            answer_precedence: crate::turnbook::AnswerPrecedence::StopFirst,
            privacy: crate::privacy::Policy::builtin(),
            retention_days: crate::config::DEFAULT_RETENTION_DAYS,
            capture_tools: false,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunReport {
    /// Messages planned.
    pub planned: usize,
    /// Messages acknowledged.
    pub acked: usize,
    /// In-doubt messages found on the server.
    pub reconciled_present: usize,
    /// In-doubt messages the server did not hold.
    pub reconciled_absent: usize,
    /// Send requests made.
    pub requests: usize,
    /// A commit was acknowledged.
    pub committed: bool,
    /// Network work was skipped (embedded default, back-off, unreachable).
    pub offline: bool,
}

/// Errors of a run (journal I/O; server failures are journaled, not errors).
pub type RunError = StoreError;

struct Run<'a> {
    store: &'a SessionStore,
    state: State,
}

impl Run<'_> {
    fn append(&mut self, event: Event, durability: Durability) -> Result<Envelope, RunError> {
        let env = self.store.append(event, durability)?;
        self.state.apply(&env);
        Ok(env)
    }
}

/// One delivery pass over a session (the caller holds the worker lock).
pub fn deliver(
    store: &SessionStore,
    transcript: Option<&dyn TranscriptSource>,
    transport: Option<&dyn Transport>,
    settings: &DeliverySettings,
) -> Result<RunReport, RunError> {
    let state = store.fold_reporting_damage()?.state;
    deliver_from(store, state, transcript, transport, settings).map(|(report, _)| report)
}

/// A delivery pass starting from `state`, the fold of `store` made under the
/// worker lock (one fold per pass). Also returns how many events the run's
/// state has folded (the journal it started from plus its own appends): more in
/// the journal afterwards means someone else appended meanwhile.
pub(super) fn deliver_from(
    store: &SessionStore,
    state: State,
    transcript: Option<&dyn TranscriptSource>,
    transport: Option<&dyn Transport>,
    settings: &DeliverySettings,
) -> Result<(RunReport, u64), RunError> {
    let mut run = Run { store, state };
    let mut report = RunReport::default();
    let mut transport = transport;
    // Inside the back-off window a worker asks the server one cheap question
    // before giving up on it: the window may have been opened by a hook's recall
    // that timed out on a slow search, and a detached worker can afford to wait
    // for a server that answers. A server that is down fails the question fast.
    if !settings.ignore_backoff && run.state.backing_off(now_ms()) {
        transport = transport.filter(|t| t.answers_now());
    }

    // The user forgot the session: nothing of it leaves again (its remote session is gone).
    if run.state.forgotten_at_ms.is_some() {
        report.offline = transport.is_none();
        return Ok((report, run.state.events));
    }

    // 1. In-doubt sends and commits: settle them before anything is resent. After damage,
    // what the server holds decides, before the transcript (re-read from its start) is.
    let mut verified = !run.state.acks_unverified;
    if let Some(t) = transport {
        if !reconcile::reconcile(&mut run, t, settings, &mut report)? {
            transport = None;
        } else {
            verified = reconcile::reconcile_all(&mut run, t, settings, &mut report)?;
        }
    }

    // 2. Transcript: what is new since the last read.
    if let Some(source) = transcript {
        read_transcript(&mut run, source, settings)?;
    }
    if settings.close_open_turns {
        run.append(Event::OpenTurnsClosed, Durability::Buffered)?;
    }
    failpoint::hit(failpoint::AFTER_ROLLOUT_READ);

    // 3. Plan complete turns.
    if settings.capture_enabled {
        let planned = plan(&run.state, settings);
        if !planned.is_empty() {
            report.planned = planned.len();
            run.append(
                Event::MessagesPlanned { messages: planned },
                Durability::Buffered,
            )?;
        }
    }
    failpoint::hit(failpoint::AFTER_PLAN);

    // 4. Send, only once what the server holds is known when part of the journal was lost.
    let Some(t) = transport else {
        report.offline = true;
        return Ok((report, run.state.events));
    };
    if !verified {
        report.offline = true;
        return Ok((report, run.state.events));
    }
    if !send::send_outbox(&mut run, t, settings, &mut report)? {
        report.offline = true;
        return Ok((report, run.state.events));
    }

    // 5. Commit.
    commit::commit_if_due(&mut run, t, settings, &mut report)?;
    Ok((report, run.state.events))
}

fn unreachable_event(e: &TransportError, settings: &DeliverySettings) -> Event {
    Event::ServerUnreachable {
        error: e.message.clone(),
        retry_after_ms: settings.backoff_ms,
    }
}

/// How many reads one pass makes at most: a read covers at least one line and, of a long
/// file, about [`crate::transcript::zcode::CHUNK_LINE_BYTES`], so this reaches past any real rollout
/// while a file that keeps growing cannot hold the worker.
const MAX_READS_PER_PASS: usize = 1024;

/// The problem a read with lines it could not use is: how many, where, and the turns there
/// that ended without an answer (the answer may have been such a line). `None` when every
/// line was read.
fn unread_lines(chunk: &TranscriptChunk) -> Option<String> {
    if chunk.bad_lines == 0 {
        return None;
    }
    let lost: Vec<&str> = chunk
        .fragments
        .iter()
        .filter(|f| f.final_text.is_none() && (f.superseded || f.interrupted))
        .map(|f| f.turn_id.as_str())
        .collect();
    Some(format!(
        "{} line(s) in bytes {}..{} skipped (over the {} MiB line limit, or not a transcript line){}",
        chunk.bad_lines,
        chunk.start,
        chunk.end,
        crate::transcript::tail::MAX_LINE_BYTES >> 20,
        if lost.is_empty() {
            String::new()
        } else {
            format!("; ended there without an answer: turn {}", lost.join(", "))
        }
    ))
}

/// Reads what is new in the transcript, one journaled [`Event::RolloutRead`] per read,
/// until the read reaches the length the file had or stops moving. Every read passes the
/// privacy rule before it is journaled ([`crate::privacy::Policy::chunk`]); what it removed
/// is journaled as [`Event::Redacted`] per turn.
fn read_transcript(
    run: &mut Run<'_>,
    source: &dyn TranscriptSource,
    settings: &DeliverySettings,
) -> Result<(), RunError> {
    let privacy = &settings.privacy;
    for _ in 0..MAX_READS_PER_PASS {
        let resume = run
            .state
            .rollout
            .as_ref()
            .and_then(|p| (p.path == source.path()).then_some((p.identity, p.offset)));
        let last_turn = resume.and(run.state.book.last_rollout_turn());
        match source.read_after(resume, last_turn) {
            Ok(Some(mut chunk)) => {
                let tools = std::mem::take(&mut chunk.tools);
                // Consent is read before the range is folded: a turn the range completes with
                // nothing to send leaves the book at once, and its calls must not depend on
                // where the range was cut.
                let consented = tools::consented_before(&run.state, &tools);
                let redacted = privacy.chunk(&mut chunk);
                let moved = chunk.rescanned
                    || resume.is_none_or(|(id, off)| id != chunk.identity || off != chunk.end);
                let more = moved && chunk.end > chunk.start && chunk.end < chunk.file_len;
                let unread = unread_lines(&chunk);
                if moved || !chunk.fragments.is_empty() {
                    run.append(
                        Event::RolloutRead {
                            path: source.path(),
                            chunk,
                        },
                        Durability::Buffered,
                    )?;
                    for (turn_id, counts) in redacted {
                        run.append(
                            Event::Redacted {
                                turn_id: Some(turn_id),
                                origin: "transcript".into(),
                                counts,
                            },
                            Durability::Buffered,
                        )?;
                    }
                }
                if settings.capture_tools {
                    for event in
                        tools::transcript_tool_events(&run.state, &tools, &consented, privacy)
                    {
                        run.append(event, Durability::Buffered)?;
                    }
                }
                if let Some(message) = unread {
                    run.append(
                        Event::Problem {
                            context: format!("transcript {}", source.path()),
                            message,
                        },
                        Durability::Buffered,
                    )?;
                }
                if !more {
                    return Ok(());
                }
            }
            Ok(None) => return Ok(()),
            Err(e) => {
                run.append(
                    Event::Problem {
                        context: format!("rollout {}", source.path()),
                        message: e.to_string(),
                    },
                    Durability::Buffered,
                )?;
                return Ok(());
            }
        }
    }
    Ok(())
}
