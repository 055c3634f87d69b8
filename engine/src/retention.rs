//! History retention: what a worker prunes, and when (`journal.retention_days`).
//!
//! # Design
//!
//! | what | pruned when | by |
//! |---|---|---|
//! | segments before the latest snapshot (sealed segments, superseded snapshots) | the snapshot decodes, nothing was lost, the session is settled, and the newest of them was last written more than the retention ago | the worker of the session, after its pass; a Stop worker's sweep of other sessions |
//! | a whole journal | the session is settled and committed, verified, and nothing was written to it for more than the retention | a Stop worker's sweep |
//!
//! A hook never prunes. Segment pruning journals [`Event::Pruned`] first (what goes, how big,
//! how old), so `ovreplay why` can say what history is gone; the snapshot keeps the state,
//! delivered identities included.
//!
//! A whole journal leaves a tombstone, `journals/<name>.pruned` (a file, not a session), written
//! durably before the directory is removed. When the session comes back (a resumed session, a
//! transcript read again), its new journal knows nothing: the first worker that finds the
//! tombstone journals [`Event::JournalDamaged`] before anything else, so what the server holds
//! of the session decides which turns are delivered before any is sent (see
//! [`crate::delivery`]), then removes the tombstone. A journal deleted by hand leaves no
//! tombstone, and a transcript read again then sends its turns again.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ov_journal::{Durability, FileLock};

use crate::event::Event;
use crate::projector::State;
use crate::store::{SessionStore, StoreError};

/// One day in milliseconds.
pub const DAY_MS: u64 = 86_400_000;

/// The tombstone a whole pruned journal leaves next to where it was.
pub fn tombstone(journal_dir: &Path) -> PathBuf {
    let mut name = journal_dir
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".pruned");
    journal_dir.with_file_name(name)
}

fn ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn io_err(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn journal_err(path: &Path, source: ov_journal::Error) -> StoreError {
    StoreError::Journal {
        path: path.to_path_buf(),
        source,
    }
}

/// Nothing is left to do for the session and nothing of it is in doubt.
fn finished(state: &State) -> bool {
    state.is_settled() && !state.acks_unverified
}

/// Removes the segments before the latest snapshot of `store` when they are due (see the
/// module documentation), journaling [`Event::Pruned`] first. `now_ms` is the time to judge
/// by. Returns the event journaled, if any.
pub fn prune_segments(
    store: &SessionStore,
    retention_days: u64,
    now_ms: u64,
) -> Result<Option<Event>, StoreError> {
    let dir = store.dir();
    let files = ov_journal::prune::segment_files(dir).map_err(|e| journal_err(dir, e))?;
    if files.len() < 2 {
        return Ok(None);
    }
    let folded = store.fold()?;
    let Some(snapshot) = folded.snapshot_segment else {
        return Ok(None);
    };
    if folded.lost || !folded.skipped.is_empty() || !finished(&folded.state) {
        return Ok(None);
    }
    let old: Vec<_> = files.iter().filter(|f| f.id < snapshot).collect();
    let Some(newest) = old.iter().map(|f| ms(f.modified)).max() else {
        return Ok(None);
    };
    if now_ms.saturating_sub(newest) < retention_days.saturating_mul(DAY_MS) {
        return Ok(None);
    }
    let event = Event::Pruned {
        segments: old.iter().map(|f| f.id).collect(),
        bytes: old.iter().map(|f| f.len).sum(),
        newest_ms: newest,
        retention_days,
    };
    store.append(event.clone(), Durability::Sync)?;
    store
        .journal()
        .remove_segments_before(snapshot)
        .map_err(|e| journal_err(dir, e))?;
    Ok(Some(event))
}

/// Removes the whole journal at `dir` when its session is finished and untouched for the
/// retention (see the module documentation), leaving its tombstone. Returns the bytes
/// removed, or `None` when it is not due or someone holds its locks.
pub fn prune_journal(
    dir: &Path,
    retention_days: u64,
    now_ms: u64,
) -> Result<Option<u64>, StoreError> {
    let horizon = retention_days.saturating_mul(DAY_MS);
    let files = ov_journal::prune::segment_files(dir).map_err(|e| journal_err(dir, e))?;
    let Some(newest) = files.iter().map(|f| ms(f.modified)).max() else {
        return Ok(None);
    };
    if now_ms.saturating_sub(newest) < horizon {
        return Ok(None);
    }
    // No worker on it while it goes.
    let lock_path = crate::paths::worker_lock(dir);
    let Some(_worker) =
        FileLock::try_exclusive(&lock_path, Duration::ZERO).map_err(|e| journal_err(dir, e))?
    else {
        return Ok(None);
    };
    let reader = ov_journal::Reader::open(dir, Duration::from_millis(50))
        .map_err(|e| journal_err(dir, e))?;
    let folded = crate::store::fold_reader(&reader);
    drop(reader);
    let st = &folded.state;
    if folded.lost
        || !finished(st)
        || st.commit.uncommitted() > 0
        || now_ms.saturating_sub(st.last_at_ms) < horizon
    {
        return Ok(None);
    }
    let stone = tombstone(dir);
    let body = serde_json::json!({
        "session_id": st.session_id,
        "harness": st.harness,
        "last_event_ms": st.last_at_ms,
        "pruned_at_ms": now_ms,
        "retention_days": retention_days,
    });
    write_durably(&stone, body.to_string().as_bytes())?;
    match ov_journal::prune::remove_journal(dir, Duration::from_millis(50)) {
        Ok(Some(bytes)) => Ok(Some(bytes)),
        Ok(None) => {
            // A writer holds it: the session is alive again; no tombstone for a live journal.
            let _ = std::fs::remove_file(&stone);
            Ok(None)
        }
        Err(e) => Err(journal_err(dir, e)),
    }
}

fn write_durably(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    use std::io::Write;
    let tmp = path.with_extension("pruned.tmp");
    let mut f = std::fs::File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
    f.write_all(bytes).map_err(|e| io_err(&tmp, e))?;
    f.sync_all().map_err(|e| io_err(&tmp, e))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| io_err(path, e))?;
    if let Some(parent) = path.parent() {
        crate::spill::sync_dir(parent);
    }
    Ok(())
}

/// When a tombstone of this session's journal is there (its journal was pruned and the
/// session came back), journals [`Event::JournalDamaged`] so nothing is sent before the
/// server is asked what it holds, then removes the tombstone. Called by a worker under the
/// session's worker lock, before it folds. Returns true when it found one.
pub fn adopt_tombstone(store: &SessionStore) -> Result<bool, StoreError> {
    let stone = tombstone(store.dir());
    let body = match std::fs::read_to_string(&stone) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io_err(&stone, e)),
    };
    let pruned_at = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("pruned_at_ms").and_then(serde_json::Value::as_u64))
        .unwrap_or(0);
    store.append(
        Event::JournalDamaged {
            segment: 0,
            offset: 0,
            len: 0,
            reason: format!(
                "an earlier journal of this session was pruned (at {pruned_at} ms) after its \
                 retention: what the server holds decides what is delivered"
            ),
        },
        Durability::Sync,
    )?;
    std::fs::remove_file(&stone).map_err(|e| io_err(&stone, e))?;
    Ok(true)
}

/// The time now, in ms, for the callers that judge by the clock.
pub fn now_ms() -> u64 {
    ms(SystemTime::now())
}
