//! The worker pipeline: fold → reconcile → read transcript → plan → send → commit.
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

use std::cell::Cell;
use std::path::PathBuf;
use std::time::Duration;

use ov_journal::{Durability, FileLock};

use crate::event::{Envelope, Event, PlannedMessage, WorkerReason};
use crate::failpoint;
use crate::projector::{MessageStatus, State};
use crate::store::{now_ms, SessionStore, StoreError};
use crate::turn::{DedupKey, FileIdentity, Role, RolloutChunk};

/// A message as the transport sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingMessage {
    /// `user` / `assistant`.
    pub role: Role,
    /// Content.
    pub content: String,
    /// Turn id, when known.
    pub turn_id: Option<String>,
}

/// A message the server holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldMessage {
    /// `user` / `assistant` / other.
    pub role: String,
    /// Content.
    pub content: String,
    /// Turn id, when the server has one.
    pub turn_id: Option<String>,
}

/// Why a transport call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportError {
    /// HTTP status; 0 when no reply was read.
    pub status: u16,
    /// Worth retrying as is.
    pub retryable: bool,
    /// The server could not be reached at all (nothing was sent).
    pub unreachable: bool,
    /// What happened (never contains credentials).
    pub message: String,
}

/// What a commit returned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommitReply {
    /// Server task id.
    pub task_id: Option<String>,
    /// Archive written.
    pub archive_uri: Option<String>,
}

/// The server side of delivery. `on_sent` is called once the request body has
/// been handed to the socket, before the reply is read.
pub trait Transport {
    /// Adds messages in one batch request.
    fn add_batch(
        &self,
        session: &str,
        messages: &[OutgoingMessage],
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError>;
    /// Adds one message.
    fn add_one(
        &self,
        session: &str,
        message: &OutgoingMessage,
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError>;
    /// Commits the session.
    fn commit(&self, session: &str, on_sent: &dyn Fn()) -> Result<CommitReply, TransportError>;
    /// The session's commit count (None: the session does not exist).
    fn commit_count(&self, session: &str) -> Result<Option<u64>, TransportError>;
    /// Everything the server holds for the session, live and archived.
    fn held_messages(&self, session: &str) -> Result<Vec<HeldMessage>, TransportError>;
}

/// Where a session's transcript comes from (ZCode: its rollout file).
pub trait TranscriptSource {
    /// Reads what is new since `resume` (identity and offset of the last read).
    /// `Ok(None)` when there is no transcript file.
    fn read(&self, resume: Option<(FileIdentity, u64)>) -> std::io::Result<Option<RolloutChunk>>;
    /// The path, for the journal.
    fn path(&self) -> String;
    /// Whether anything new is there since `resume`, without reading it
    /// (None: cannot tell). Used to skip idle sessions in a drain.
    fn peek(&self, resume: Option<(FileIdentity, u64)>) -> Option<bool> {
        let _ = resume;
        None
    }
}

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
    /// Try the server even inside the unreachable back-off window (a drain
    /// must finish all unfinished work; a Stop worker respects the window).
    pub ignore_backoff: bool,
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
            in_doubt_settle_ms: IN_DOUBT_SETTLE_MS,
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
    let state = store.fold()?.state;
    deliver_from(store, state, transcript, transport, settings).map(|(report, _)| report)
}

/// A delivery pass starting from `state`, the fold of `store` made under the
/// worker lock (one fold per pass). Also returns how many events the run's
/// state has folded (the journal it started from plus its own appends): more in
/// the journal afterwards means someone else appended meanwhile.
fn deliver_from(
    store: &SessionStore,
    state: State,
    transcript: Option<&dyn TranscriptSource>,
    transport: Option<&dyn Transport>,
    settings: &DeliverySettings,
) -> Result<(RunReport, u64), RunError> {
    let mut run = Run { store, state };
    let mut report = RunReport::default();
    let mut transport = transport;
    if transport.is_some() && !settings.ignore_backoff && run.state.backing_off(now_ms()) {
        transport = None;
    }

    // 1. In-doubt sends and commits: settle them before anything is resent.
    if let Some(t) = transport {
        if !reconcile(&mut run, t, settings, &mut report)? {
            transport = None;
        }
    }

    // 2. Transcript: what is new since the last read.
    if let Some(source) = transcript {
        read_transcript(&mut run, source)?;
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

    // 4. Send.
    let Some(t) = transport else {
        report.offline = true;
        return Ok((report, run.state.events));
    };
    if !send_outbox(&mut run, t, settings, &mut report)? {
        report.offline = true;
        return Ok((report, run.state.events));
    }

    // 5. Commit.
    commit_if_due(&mut run, t, settings, &mut report)?;
    Ok((report, run.state.events))
}

fn unreachable_event(e: &TransportError, settings: &DeliverySettings) -> Event {
    Event::ServerUnreachable {
        error: e.message.clone(),
        retry_after_ms: settings.backoff_ms,
    }
}

/// An in-doubt request younger than this may still be in the server's hands
/// (its sender died after the body left); reconciling it sooner could find it
/// absent and resend it just before the server applies it.
pub const IN_DOUBT_SETTLE_MS: u64 = 3_000;

/// Settles in-doubt sends and commits. Returns false when the server cannot be reached.
fn reconcile(
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
        let age = now_ms().saturating_sub(started);
        if age < settings.in_doubt_settle_ms {
            std::thread::sleep(Duration::from_millis(settings.in_doubt_settle_ms - age));
        }
    }
    if !run.state.sends.is_empty() {
        let held = match t.held_messages(&settings.remote_session) {
            Ok(h) => h,
            Err(e) => {
                if e.unreachable || e.status == 0 {
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
            (_, Err(e)) if e.unreachable || e.status == 0 => {
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
            let role = r.role.as_str();
            let found = held.iter().any(|h| {
                h.role == role
                    && match (&r.turn_id, &h.turn_id) {
                        (Some(a), Some(b)) => a == b,
                        (None, _) => r.content.as_deref() == Some(h.content.as_str()),
                        (Some(_), None) => false,
                    }
            });
            if found {
                present.push(key.clone());
            } else {
                absent.push(key.clone());
            }
        }
    }
    (send_ids, present, absent)
}

fn read_transcript(run: &mut Run<'_>, source: &dyn TranscriptSource) -> Result<(), RunError> {
    let resume = run
        .state
        .rollout
        .as_ref()
        .and_then(|p| (p.path == source.path()).then_some((p.identity, p.offset)));
    match source.read(resume) {
        Ok(Some(chunk)) => {
            let moved = chunk.rescanned
                || resume.is_none_or(|(id, off)| id != chunk.identity || off != chunk.end);
            if moved || !chunk.fragments.is_empty() {
                run.append(
                    Event::RolloutRead {
                        path: source.path(),
                        chunk,
                    },
                    Durability::Buffered,
                )?;
            }
        }
        Ok(None) => {}
        Err(e) => {
            run.append(
                Event::Problem {
                    context: format!("rollout {}", source.path()),
                    message: e.to_string(),
                },
                Durability::Buffered,
            )?;
        }
    }
    Ok(())
}

/// The messages to plan now: candidates of complete turns not planned before.
pub fn plan(state: &State, settings: &DeliverySettings) -> Vec<PlannedMessage> {
    let mut out = Vec::new();
    for c in state.book.candidates() {
        if state.messages.contains_key(&c.key)
            || out.iter().any(|m: &PlannedMessage| m.key == c.key)
        {
            continue;
        }
        let raw_len = c.content.len() as u64;
        let mut content = crate::text::strip_private(&c.content);
        if let Some(max) = settings.max_length.filter(|m| *m > 0) {
            content = crate::text::truncate_chars(&content, max);
        }
        out.push(PlannedMessage {
            key: c.key,
            turn_id: c.turn_id,
            role: c.role,
            content,
            raw_len,
            interrupted: c.interrupted,
        });
    }
    out
}

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
        let len = r.content.as_deref().map_or(0, str::len) + 64;
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
        .filter_map(|k| state.messages.get(k))
        .map(|r| OutgoingMessage {
            role: r.role,
            content: r.content.clone().unwrap_or_default(),
            turn_id: r.turn_id.clone(),
        })
        .collect()
}

/// Sends the outbox. Returns false when the server turned out unreachable.
fn send_outbox(
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
                if !request_sent && (e.unreachable || e.status == 0) {
                    run.append(unreachable_event(&e, settings), Durability::Buffered)?;
                    return Ok(false);
                }
                if e.status == 401 || e.status == 403 {
                    // Credentials are wrong: nothing else will go through either.
                    return Ok(true);
                }
                if request_sent && (e.status == 0 || e.status >= 500) {
                    // The request may have been applied: settle it with the
                    // server before anything is resent.
                    if !reconcile(run, t, settings, report)? {
                        return Ok(false);
                    }
                    transient += 1;
                } else if e.retryable && !(e.status == 404 || e.status == 405) {
                    // 408/429: refused before being applied.
                    transient += 1;
                }
                if transient > settings.transient_retries {
                    return Ok(true);
                }
                if transient > 0 {
                    std::thread::sleep(Duration::from_millis(100 << transient.min(5)));
                }
            }
        }
    }
    Ok(true)
}

fn commit_if_due(
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
        Err(e) if e.unreachable || e.status == 0 => {
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
    match t.commit(&settings.remote_session, &on_sent) {
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
            if e.unreachable {
                run.append(unreachable_event(&e, settings), Durability::Buffered)?;
            }
        }
    }
    Ok(())
}

/// How a worker gets what it needs for one pass; called after the lock is
/// taken, so configuration is read fresh each round.
pub trait WorkerContext {
    /// The transcript of the session (None: no transcript source).
    fn transcript(&self, state: &State) -> Option<Box<dyn TranscriptSource>>;
    /// The transport (None: embedded default, journal only).
    fn transport(&self) -> Option<&dyn Transport>;
    /// Settings for the session.
    fn settings(&self, state: &State) -> DeliverySettings;
}

/// Whether a drain of this session has anything to do, decided without
/// writing: unsent, in-doubt or uncommitted work (when a server is
/// configured), a turn that closing open turns would make plannable, or a
/// transcript that changed since it was last read.
pub fn drain_has_work(
    state: &State,
    settings: &DeliverySettings,
    has_transport: bool,
    transcript: Option<&dyn TranscriptSource>,
) -> bool {
    if has_transport
        && (!state.outbox().is_empty()
            || !state.sends.is_empty()
            || state.commit.in_flight.is_some()
            || state.commit.uncommitted() > 0)
    {
        return true;
    }
    let mut closed = state.clone();
    closed.book.force_complete();
    if settings.capture_enabled && !plan(&closed, settings).is_empty() {
        return true;
    }
    let Some(source) = transcript else {
        return false;
    };
    let resume = state
        .rollout
        .as_ref()
        .filter(|p| p.path == source.path())
        .map(|p| (p.identity, p.offset));
    // Cannot tell: read it.
    source.peek(resume).unwrap_or(true)
}

/// A worker rolls the journal to a snapshot segment once this many records
/// follow the latest snapshot, so opening a long session stays cheap.
pub const COMPACT_AFTER_RECORDS: u64 = 20_000;
/// … or once the active segment is larger than this (every hook checks it on open).
pub const COMPACT_ACTIVE_BYTES: u64 = 4 << 20;

/// Runs the worker protocol on one session until no new events arrive.
pub fn run_worker(
    store: &SessionStore,
    ctx: &dyn WorkerContext,
    reason: WorkerReason,
    lock_wait: Duration,
) -> Result<Vec<RunReport>, RunError> {
    let lock_path: PathBuf = crate::paths::worker_lock(store.dir());
    let mut reports = Vec::new();
    let mut first = true;
    loop {
        let lock = match FileLock::try_exclusive(&lock_path, lock_wait) {
            Ok(Some(l)) => l,
            Ok(None) => return Ok(reports),
            Err(source) => {
                return Err(StoreError::Journal {
                    path: lock_path,
                    source,
                })
            }
        };
        if first {
            let mut events = vec![Event::WorkerStarted { reason }];
            if reason == WorkerReason::Drain {
                events.push(Event::OpenTurnsClosed);
            }
            store.append_all(events, Durability::Buffered)?;
            first = false;
        }
        if reason == WorkerReason::Stop {
            failpoint::hit(failpoint::AFTER_STOP_JOURNALED);
        }
        let state = store.fold()?.state;
        let transcript = ctx.transcript(&state);
        let mut settings = ctx.settings(&state);
        settings.force_commit |= reason == WorkerReason::Drain;
        settings.ignore_backoff |= matches!(reason, WorkerReason::Drain | WorkerReason::Sweep);
        let (report, seen) = deliver_from(
            store,
            state,
            transcript.as_deref(),
            ctx.transport(),
            &settings,
        )?;
        reports.push(report);
        drop(lock);
        // Events appended by others while the lock was held (a Stop whose own
        // worker found the lock taken and left) or since: go round again.
        let now = store.fold()?.state.events;
        if now <= seen || reports.len() >= 16 {
            return Ok(reports);
        }
    }
}
