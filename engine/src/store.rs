//! A session's journal as events: append, fold, compact.
//!
//! The store is the only user of both [`ov_journal`] and [`crate::codec`]. A
//! record that does not decode (written by a newer ovhook, or damaged in a way
//! the frame checksum could not see) is skipped and reported, never fatal: the
//! hooks must keep working on whatever is readable.
//!
//! # Damage
//!
//! A damaged range of the journal is kept in place and read around (the
//! journal resynchronises on the next whole frame); appends go on after it.
//! Events inside it are lost, so an acknowledgement may be missing: the first
//! fold that meets an unreported damaged range journals
//! [`Event::JournalDamaged`], and the worker then asks the server what it holds of
//! the session before anything is sent: every message it holds counts as
//! delivered, also one read from the transcript only later ([`Event::ServerHolds`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ov_journal::{Durability, Entry, FrameKind, Journal, Options, Position};

use crate::codec::{self, CodecError};
use crate::event::{Envelope, Event};

mod fold;
mod spill;

pub use fold::{fold_reader, Folded, SkippedRecord};

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
        let store = match Journal::open(dir, opts) {
            Ok(journal) => SessionStore { journal },
            Err(source) => {
                return Err(StoreError::Journal {
                    path: dir.to_path_buf(),
                    source,
                })
            }
        };
        if let Err(e) = store.ingest_spills() {
            log::error!("journal {}: spill files not ingested: {e}", dir.display());
        }
        Ok(store)
    }

    /// Whether `e` is a lock that could not be had in time (the caller may spill instead).
    pub fn is_lock_timeout(e: &StoreError) -> bool {
        matches!(
            e,
            StoreError::Journal {
                source: ov_journal::Error::LockTimeout { .. },
                ..
            }
        )
    }

    fn stamp(&self, event: Event) -> Envelope {
        Envelope {
            at_ms: now_ms(),
            pid: std::process::id(),
            event,
        }
    }

    /// Appends already stamped events as one batch: all land or none.
    fn append_envelopes(
        &self,
        envs: &[Envelope],
        durability: Durability,
    ) -> Result<(), StoreError> {
        let mut bufs = Vec::with_capacity(envs.len());
        for env in envs {
            let mut buf = Vec::new();
            codec::encode_event(env, &mut buf).map_err(StoreError::Encode)?;
            bufs.push(buf);
        }
        let slices: Vec<&[u8]> = bufs.iter().map(Vec::as_slice).collect();
        self.journal
            .append_batch(&slices, durability)
            .map_err(|e| self.err(e))?;
        Ok(())
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
        self.append_envelopes(&envs, durability)?;
        Ok(envs)
    }

    /// Every decodable event with its position (for `ovreplay dump` / `why`),
    /// from the first segment still on disk; damaged ranges are read around.
    pub fn events(&self) -> Result<Vec<DecodedRecord>, StoreError> {
        let reader = self.journal.reader().map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for entry in reader.entries() {
            if let Entry::Frame(frame) = entry.map_err(|e| self.err(e))? {
                if frame.kind == FrameKind::Record {
                    out.push((frame.position, codec::decode_event(frame.payload)));
                }
            }
        }
        Ok(out)
    }
}

/// Journal directories of every session under a state root. Directories an
/// older build moved aside as corrupt (`<session>.corrupt-<ms>`) are not sessions.
pub fn session_dirs(root: &Path) -> Vec<PathBuf> {
    let dir = crate::paths::journals_dir(root);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().contains(".corrupt-"))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}
