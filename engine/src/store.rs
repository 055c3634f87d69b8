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
        let journal = Journal::open(dir, opts).map_err(|source| StoreError::Journal {
            path: dir.to_path_buf(),
            source,
        })?;
        Ok(SessionStore { journal })
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
        let mut skipped = Vec::new();
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
            match codec::decode_event(frame.payload) {
                Ok(env) => state.apply(&env),
                Err(e) => skipped.push(SkippedRecord {
                    position: frame.position,
                    reason: e.to_string(),
                }),
            }
        }
        Ok(Folded {
            state,
            end: reader.end(),
            skipped,
            from_snapshot,
        })
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
