//! A session's journal as events: append, fold, compact.
//!
//! The store is the only user of both [`ov_journal`] and [`crate::codec`]. A
//! record that does not decode (written by a newer ovhook, or damaged in a way
//! the frame checksum could not see) is skipped and reported, never fatal: the
//! hooks must keep working on whatever is readable.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ov_journal::{Durability, FrameKind, Journal, Options, Position};

use crate::codec::{self, CodecError};
use crate::event::{Envelope, Event};
use crate::projector::State;

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The journal failed.
    #[error("journal {path}: {source}")]
    Journal {
        /// Journal directory.
        path: PathBuf,
        /// Cause.
        #[source]
        source: ov_journal::Error,
    },
    /// An event could not be encoded.
    #[error("could not encode an event: {0}")]
    Encode(#[source] CodecError),
    /// A folder could not be created.
    #[error("could not create {path}: {source}")]
    Io {
        /// Path.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
}

/// A record that was skipped while folding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRecord {
    /// Where it is.
    pub position: Position,
    /// Why it was skipped.
    pub reason: String,
}

/// The result of a fold.
#[derive(Debug, Clone)]
pub struct Folded {
    /// The state.
    pub state: State,
    /// Position after the last frame folded.
    pub end: Position,
    /// Records skipped (undecodable) and a read error that ended the fold early.
    pub skipped: Vec<SkippedRecord>,
    /// Whether the fold started from a snapshot.
    pub from_snapshot: bool,
    /// Segment of the snapshot the fold started from.
    pub snapshot_segment: Option<u64>,
    /// Records folded after that snapshot (or from the start).
    pub records_after_snapshot: u64,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A journal record and its decoding.
pub type DecodedRecord = (Position, Result<Envelope, CodecError>);

/// One session's journal.
pub struct SessionStore {
    journal: Journal,
}

impl SessionStore {
    /// Opens (creating if needed) the journal in `dir`, with a bounded lock wait.
    pub fn open(dir: &Path) -> Result<SessionStore, StoreError> {
        Self::open_with(dir, Duration::from_secs(2))
    }

    /// Opens with an explicit lock wait.
    pub fn open_with(dir: &Path, lock_timeout: Duration) -> Result<SessionStore, StoreError> {
        if let Some(parent) = dir.parent() {
            crate::paths::create_private_dir(parent).map_err(|source| StoreError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let opts = Options {
            lock_timeout,
            ..Options::default()
        };
        match Journal::open(dir, opts.clone()) {
            Ok(journal) => Ok(SessionStore { journal }),
            Err(ov_journal::Error::Corruption { offset, kind, .. }) => Self::quarantine(
                dir,
                opts,
                &format!("corruption at offset {offset}: {kind:?}"),
            ),
            Err(source) => Err(StoreError::Journal {
                path: dir.to_path_buf(),
                source,
            }),
        }
    }

    /// A journal whose active segment is corrupt can take no appends. Its
    /// readable prefix is folded, the directory moved aside to
    /// `<dir>.corrupt-<ms>` (kept for `ovreplay`), and a fresh journal starts
    /// with a snapshot of that state. Events after the damage are unknown, so
    /// every message not known to be acknowledged is put in doubt: the next
    /// worker asks the server what it holds before sending anything.
    fn quarantine(dir: &Path, opts: Options, why: &str) -> Result<SessionStore, StoreError> {
        let jerr = |source| StoreError::Journal {
            path: dir.to_path_buf(),
            source,
        };
        let state = ov_journal::Reader::open(dir, opts.lock_timeout)
            .map(|r| fold_reader(&r).state)
            .unwrap_or_default();
        let aside = dir.with_extension(format!("corrupt-{}", now_ms()));
        std::fs::rename(dir, &aside).map_err(|source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        log::warn!(
            "journal {}: {why}; moved to {} and restarted from its readable prefix",
            dir.display(),
            aside.display()
        );
        let journal = Journal::open(dir, opts).map_err(jerr)?;
        let store = SessionStore { journal };
        let mut buf = Vec::new();
        codec::encode_snapshot(&state, &mut buf).map_err(StoreError::Encode)?;
        store.journal.roll_with_snapshot(&buf).map_err(jerr)?;
        let unsettled: Vec<_> = state.outbox().into_iter().map(|(k, _)| k.clone()).collect();
        let mut events = vec![Event::Problem {
            context: "journal".into(),
            message: format!("{why}; restarted from {}", aside.display()),
        }];
        if !unsettled.is_empty() {
            events.push(Event::SendStarted {
                send_id: state.next_send_id,
                keys: unsettled,
                single: false,
            });
        }
        store.append_all(events, Durability::Sync)?;
        Ok(store)
    }

    /// Folds and, when more than `max_records` records follow the latest
    /// snapshot, rolls to a new segment that starts with a snapshot, so later
    /// folds start there. Old segments are kept: a snapshot is only a cache of
    /// the fold, and if a later build cannot decode it, the events behind it
    /// still give the state (removing them is `ovreplay compact`'s explicit
    /// job). It also rolls when the records after the snapshot pass `max_active_bytes`:
    /// every hook process checks the active segment's frames when it opens the
    /// journal, so that size is the hot path's cost. Returns true when it rolled.
    pub fn compact_if_due(
        &self,
        max_records: u64,
        max_active_bytes: u64,
    ) -> Result<bool, StoreError> {
        let reader = self.journal.reader().map_err(|e| self.err(e))?;
        let end = reader.end();
        // Bytes of records in the active segment, not counting a snapshot it starts with.
        let records_start = match reader.latest_snapshot() {
            Some(snap) if snap.position.segment == end.segment => snap.next_position().offset,
            _ => 0,
        };
        let active_bytes = end.offset.saturating_sub(records_start);
        let folded = fold_reader(&reader);
        drop(reader);
        if folded.records_after_snapshot <= max_records && active_bytes <= max_active_bytes {
            return Ok(false);
        }
        if folded.records_after_snapshot == 0 {
            return Ok(false);
        }
        self.compact()?;
        Ok(true)
    }

    /// The journal directory.
    pub fn dir(&self) -> &Path {
        self.journal.dir()
    }

    /// The underlying journal.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    fn err(&self, source: ov_journal::Error) -> StoreError {
        StoreError::Journal {
            path: self.journal.dir().to_path_buf(),
            source,
        }
    }

    /// Position after the last valid frame, read from disk now.
    pub fn end(&self) -> Result<Position, StoreError> {
        self.journal.end().map_err(|e| self.err(e))
    }

    /// Stamps and appends one event.
    pub fn append(&self, event: Event, durability: Durability) -> Result<Envelope, StoreError> {
        let env = Envelope {
            at_ms: now_ms(),
            pid: std::process::id(),
            event,
        };
        let mut buf = Vec::with_capacity(256);
        codec::encode_event(&env, &mut buf).map_err(StoreError::Encode)?;
        self.journal
            .append(&buf, durability)
            .map_err(|e| self.err(e))?;
        Ok(env)
    }

    /// Stamps and appends events as one batch: all land or none.
    pub fn append_all(
        &self,
        events: Vec<Event>,
        durability: Durability,
    ) -> Result<Vec<Envelope>, StoreError> {
        let at = now_ms();
        let pid = std::process::id();
        let envs: Vec<Envelope> = events
            .into_iter()
            .map(|event| Envelope {
                at_ms: at,
                pid,
                event,
            })
            .collect();
        let mut bufs = Vec::with_capacity(envs.len());
        for env in &envs {
            let mut buf = Vec::new();
            codec::encode_event(env, &mut buf).map_err(StoreError::Encode)?;
            bufs.push(buf);
        }
        let slices: Vec<&[u8]> = bufs.iter().map(Vec::as_slice).collect();
        self.journal
            .append_batch(&slices, durability)
            .map_err(|e| self.err(e))?;
        Ok(envs)
    }

    /// Folds the whole journal, starting from the latest snapshot.
    pub fn fold(&self) -> Result<Folded, StoreError> {
        let reader = self.journal.reader().map_err(|e| self.err(e))?;
        Ok(fold_reader(&reader))
    }

    /// Every decodable event with its position (for `ovreplay dump` / `why`),
    /// from the first segment still on disk.
    pub fn events(&self) -> Result<Vec<DecodedRecord>, StoreError> {
        let reader = self.journal.reader().map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for frame in reader.frames() {
            let frame = frame.map_err(|e| self.err(e))?;
            if frame.kind == FrameKind::Record {
                out.push((frame.position, codec::decode_event(frame.payload)));
            }
        }
        Ok(out)
    }

    /// Rolls the journal to a new segment that starts with a snapshot of the
    /// current state, so later opens fold only what comes after it.
    pub fn compact(&self) -> Result<Position, StoreError> {
        let folded = self.fold()?;
        let mut buf = Vec::new();
        codec::encode_snapshot(&folded.state, &mut buf).map_err(StoreError::Encode)?;
        self.journal
            .roll_with_snapshot(&buf)
            .map_err(|e| self.err(e))
    }
}

/// Folds what a reader sees: the latest snapshot, then every record after it.
/// A read error ends the fold (reported in `skipped`); an undecodable record is skipped.
pub fn fold_reader(reader: &ov_journal::Reader) -> Folded {
    let mut skipped = Vec::new();
    let mut records_after_snapshot = 0u64;
    let (mut state, start, from_snapshot) = match reader.latest_snapshot() {
        Some(frame) => match codec::decode_snapshot(frame.payload) {
            Ok(state) => (state, frame.position, true),
            Err(e) => {
                skipped.push(SkippedRecord {
                    position: frame.position,
                    reason: format!("snapshot: {e}"),
                });
                (State::default(), reader.start(), false)
            }
        },
        None => (State::default(), reader.start(), false),
    };
    let mut end = start;
    for frame in reader.frames_from(start) {
        let frame = match frame {
            Ok(f) => f,
            Err(e) => {
                skipped.push(SkippedRecord {
                    position: end,
                    reason: format!("read stopped: {e}"),
                });
                break;
            }
        };
        end = frame.position;
        if frame.kind != FrameKind::Record {
            continue;
        }
        records_after_snapshot += 1;
        match codec::decode_event(frame.payload) {
            Ok(env) => state.apply(&env),
            Err(e) => skipped.push(SkippedRecord {
                position: frame.position,
                reason: e.to_string(),
            }),
        }
    }
    Folded {
        state,
        end: reader.end(),
        skipped,
        snapshot_segment: from_snapshot.then_some(start.segment),
        from_snapshot,
        records_after_snapshot,
    }
}

/// Journal directories of every session under a state root.
pub fn session_dirs(root: &Path) -> Vec<PathBuf> {
    let dir = crate::paths::journals_dir(root);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}
