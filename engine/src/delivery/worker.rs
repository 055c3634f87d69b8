//! The worker loop: take the lock, run a pass, go round again while others appended.

use std::path::PathBuf;
use std::time::Duration;

use ov_journal::{Durability, FileLock};

use super::{deliver_from, DeliverySettings, RunError, RunReport, TranscriptSource, Transport};
use crate::event::{Event, WorkerReason};
use crate::failpoint;
use crate::plan::plan;
use crate::projector::State;
use crate::store::{SessionStore, StoreError};

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
    if state.forgotten_at_ms.is_some() {
        return false;
    }
    if has_transport
        && (!state.is_settled() || state.acks_unverified || state.commit.uncommitted() > 0)
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

/// How long a Stop or SessionEnd worker waits, once, for the transcript to show what the
/// latest turn a hook saw still lacks ([`crate::turnbook::TurnBook::awaits_transcript`]).
/// The worker is detached: the agent never waits for it.
pub const TRANSCRIPT_LAG_WAIT: Duration = Duration::from_secs(3);

/// Polls `source` until it changed past what `state` read, for at most `limit`. True when
/// it changed (or cannot tell): read it again.
fn transcript_grew(source: &dyn TranscriptSource, state: &State, limit: Duration) -> bool {
    let resume = state
        .rollout
        .as_ref()
        .filter(|p| p.path == source.path())
        .map(|p| (p.identity, p.offset));
    let deadline = std::time::Instant::now() + limit;
    loop {
        if source.peek(resume).unwrap_or(true) {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
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
    let mut close_open_turns = reason.closes_open_turns();
    let mut waited_for_transcript = false;
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
            // A pruned journal's session came back: the server decides before anything is sent.
            crate::retention::adopt_tombstone(store)?;
            store.append(Event::WorkerStarted { reason }, Durability::Buffered)?;
            first = false;
        }
        if reason == WorkerReason::Stop {
            failpoint::hit(failpoint::AFTER_STOP_JOURNALED);
        }
        let state = store.fold_reporting_damage()?.state;
        let transcript = ctx.transcript(&state);
        let mut settings = ctx.settings(&state);
        settings.force_commit |= reason.forces_commit();
        settings.ignore_backoff |= reason.ignores_backoff();
        // Once, after this pass has read what the transcript holds.
        settings.close_open_turns = std::mem::take(&mut close_open_turns);
        let (report, seen) = deliver_from(
            store,
            state,
            transcript.as_deref(),
            ctx.transport(),
            &settings,
        )?;
        reports.push(report);
        // Under the worker lock, so one compaction at a time; hooks keep appending meanwhile
        // (the roll happens only where the fold ended). A failure costs only speed.
        if let Err(e) = store.compact_if_due(COMPACT_AFTER_RECORDS, COMPACT_ACTIVE_BYTES) {
            log::warn!(
                "journal {}: automatic compaction: {e}",
                store.dir().display()
            );
        }
        let now = crate::retention::now_ms();
        if let Err(e) = crate::retention::prune_segments(store, settings.retention_days, now) {
            log::warn!("journal {}: pruning: {e}", store.dir().display());
        }
        // The transcript may owe what a hook just saw (an agent that writes it after its hooks
        // ran): wait for it once, bounded, still holding the lock, so the worker is seen busy.
        let mut grew = false;
        let may_wait = reason.awaits_transcript() && !waited_for_transcript;
        if let Some(source) = transcript.as_deref().filter(|_| may_wait) {
            let after = store.fold()?.state;
            if after.book.awaits_transcript() {
                waited_for_transcript = true;
                grew = transcript_grew(source, &after, TRANSCRIPT_LAG_WAIT);
            }
        }
        drop(lock);
        // A run inside a hook (PreCompact) never starts a round past the hook's budget: what is
        // left stays journaled for a later worker.
        if settings
            .deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
        {
            return Ok(reports);
        }
        if grew && reports.len() < 16 {
            continue;
        }
        // Events appended by others while the lock was held (a Stop whose own
        // worker found the lock taken and left) or since: go round again.
        let now = store.fold()?.state.events;
        if now <= seen || reports.len() >= 16 {
            return Ok(reports);
        }
    }
}
