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
    /// Acknowledged state may be missing: a damaged range was met, or the fold could not
    /// reach back to the journal's first event (no snapshot it could decode, older segments
    /// removed).
    pub lost: bool,
    /// What was lost and has no [`Event::JournalDamaged`] after it yet.
    pub unreported: Vec<Event>,
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

    /// Stamps `events` and writes them to a spill file in `dir` ([`crate::spill`]), for a
    /// process that could not get the journal's lock in time.
    pub fn spill(dir: &Path, events: Vec<Event>) -> Result<PathBuf, crate::spill::SpillError> {
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
        crate::spill::write(dir, &envs)
    }

    /// Appends the events of every spill file in the journal directory, in name order, and
    /// removes each file once its events are durable; returns how many files were ingested.
    /// Each file's events go in one batch with [`Event::SpillIngested`], and a file whose name
    /// the journal already holds is only removed, so a crash between the append and the
    /// removal never appends twice. A damaged file is renamed `<name>.damaged` and journaled
    /// as a [`Event::Problem`]. Runs on every open; costs one directory read when there is
    /// nothing to ingest.
    pub fn ingest_spills(&self) -> Result<usize, StoreError> {
        let files = crate::spill::pending(self.dir());
        if files.is_empty() {
            return Ok(0);
        }
        let lock_path = self.dir().join(crate::spill::INGEST_LOCK);
        // Another process is ingesting: it will take these too.
        let Some(_ingesting) = ov_journal::FileLock::try_exclusive(&lock_path, Duration::ZERO)
            .map_err(|e| self.err(e))?
        else {
            return Ok(0);
        };
        let done: std::collections::BTreeSet<String> = self
            .events()?
            .into_iter()
            .filter_map(|(_, r)| match r.ok()?.event {
                Event::SpillIngested { name, .. } => Some(name),
                _ => None,
            })
            .collect();
        let mut ingested = 0;
        // Files that appeared after the listing above are left to the next writer.
        for path in crate::spill::pending(self.dir()) {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if !done.contains(&name) {
                match crate::spill::read(&path) {
                    Ok(mut envs) => {
                        let count = u32::try_from(envs.len()).unwrap_or(u32::MAX);
                        envs.push(self.stamp(Event::SpillIngested {
                            name: name.clone(),
                            events: count,
                        }));
                        self.append_envelopes(&envs, Durability::Sync)?;
                        ingested += 1;
                    }
                    Err(e) => {
                        log::error!("{e}");
                        let aside = crate::spill::set_aside_path(&path);
                        std::fs::rename(&path, &aside).map_err(|source| StoreError::Io {
                            path: path.clone(),
                            source,
                        })?;
                        self.append(
                            Event::Problem {
                                context: "spill".into(),
                                message: format!("{e}; kept as {}", aside.display()),
                            },
                            Durability::Sync,
                        )?;
                        continue;
                    }
                }
            }
            if let Err(source) = std::fs::remove_file(&path) {
                if source.kind() != std::io::ErrorKind::NotFound {
                    return Err(StoreError::Io { path, source });
                }
            }
            crate::spill::sync_dir(self.dir());
        }
        Ok(ingested)
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
        // Counting frames (no decoding) is enough to decide.
        let from = reader
            .latest_snapshot()
            .map_or(reader.start(), |s| s.position);
        let records = reader
            .entries_from(from)
            .filter(|e| matches!(e, Ok(Entry::Frame(f)) if f.kind == FrameKind::Record))
            .count() as u64;
        drop(reader);
        if records <= max_records && active_bytes <= max_active_bytes {
            return Ok(false);
        }
        if records == 0 {
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
        self.append_envelopes(&envs, durability)?;
        Ok(envs)
    }

    /// Folds the whole journal, starting from the latest snapshot.
    pub fn fold(&self) -> Result<Folded, StoreError> {
        let reader = self.journal.reader().map_err(|e| self.err(e))?;
        Ok(fold_reader(&reader))
    }

    /// [`SessionStore::fold`], then journals [`Event::JournalDamaged`] for whatever it found lost
    /// and not yet reported (once per damaged range), folded into the returned state. Every
    /// writer that acts on the state (a worker, a compaction) folds with this.
    pub fn fold_reporting_damage(&self) -> Result<Folded, StoreError> {
        let mut folded = self.fold()?;
        let events = std::mem::take(&mut folded.unreported);
        if events.is_empty() {
            return Ok(folded);
        }
        for e in &events {
            log::warn!("journal {}: {e:?}", self.dir().display());
        }
        self.append_all(events, Durability::Sync)?;
        // Damage is rare: fold again rather than guess where others' appends fell.
        self.fold()
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

    /// Rolls the journal to a new segment that starts with a snapshot of the
    /// current state, so later opens fold only what comes after it. The roll
    /// happens only if nothing was appended since the fold (checked under the
    /// journal lock); otherwise the new events are folded in and it tries again,
    /// so an event appended meanwhile is never left behind the snapshot.
    pub fn compact(&self) -> Result<Position, StoreError> {
        // Damage behind the snapshot is never read again: report it first.
        let mut folded = self.fold_reporting_damage()?;
        let mut buf = Vec::new();
        for _ in 0..64 {
            codec::encode_snapshot(&folded.state, &mut buf).map_err(StoreError::Encode)?;
            if let Some(pos) = self
                .journal
                .roll_with_snapshot_if_end(folded.end, &buf)
                .map_err(|e| self.err(e))?
            {
                return Ok(pos);
            }
            let reader = self.journal.reader().map_err(|e| self.err(e))?;
            folded = match fold_after(&reader, folded.state.clone(), folded.end) {
                Some(f) => f,
                // Rolled or removed by someone else meanwhile: start over.
                None => self.fold_reporting_damage()?,
            };
        }
        Err(self.err(ov_journal::Error::LockTimeout {
            path: self.dir().join(ov_journal::LOCK_FILE),
            waited: Duration::ZERO,
        }))
    }
}

/// `state` (the fold up to `end`) with the records after `end` applied; None when `end` is no
/// longer the start of what follows (the journal was rolled, or damage lies after it).
fn fold_after(reader: &ov_journal::Reader, mut state: State, end: Position) -> Option<Folded> {
    if reader.end().segment != end.segment {
        return None;
    }
    let mut records = 0;
    let mut skipped = Vec::new();
    for entry in reader.entries_from(end) {
        match entry.ok()? {
            Entry::Damage(_) => return None,
            Entry::Frame(f) if f.kind == FrameKind::Record => {
                records += 1;
                match codec::decode_event(f.payload) {
                    Ok(env) => state.apply(&env),
                    Err(e) => skipped.push(SkippedRecord {
                        position: f.position,
                        reason: e.to_string(),
                    }),
                }
            }
            Entry::Frame(_) => return None,
        }
    }
    Some(Folded {
        state,
        end: reader.end(),
        skipped,
        from_snapshot: false,
        snapshot_segment: None,
        records_after_snapshot: records,
        lost: false,
        unreported: Vec::new(),
    })
}

/// Folds what a reader sees: the newest snapshot that decodes (else every event
/// from the start), then every record after it, reading around damaged ranges.
/// An undecodable record is skipped and reported.
pub fn fold_reader(reader: &ov_journal::Reader) -> Folded {
    let mut skipped = Vec::new();
    let mut records_after_snapshot = 0u64;
    let mut base = None;
    for frame in reader.snapshots() {
        match codec::decode_snapshot(frame.payload) {
            Ok(state) => {
                base = Some((state, frame.position));
                break;
            }
            Err(e) => skipped.push(SkippedRecord {
                position: frame.position,
                reason: format!("snapshot: {e}"),
            }),
        }
    }
    let from_snapshot = base.is_some();
    let (mut state, start) = base.unwrap_or_else(|| (State::default(), reader.start()));
    // Older segments were removed, and no snapshot that covers them decodes.
    let lost_prefix = !from_snapshot && start.segment > 0;
    let mut damage = Vec::new();
    let mut reported = std::collections::BTreeSet::new();
    for entry in reader.entries_from(start) {
        let frame = match entry {
            Ok(Entry::Frame(f)) => f,
            Ok(Entry::Damage(d)) => {
                damage.push(d);
                continue;
            }
            Err(e) => {
                skipped.push(SkippedRecord {
                    position: start,
                    reason: format!("read stopped: {e}"),
                });
                break;
            }
        };
        if frame.kind != FrameKind::Record {
            continue;
        }
        records_after_snapshot += 1;
        match codec::decode_event(frame.payload) {
            Ok(env) => {
                if let Event::JournalDamaged {
                    segment, offset, ..
                } = &env.event
                {
                    reported.insert((*segment, *offset));
                }
                state.apply(&env);
            }
            Err(e) => skipped.push(SkippedRecord {
                position: frame.position,
                reason: e.to_string(),
            }),
        }
    }
    let mut unreported: Vec<Event> = damage
        .iter()
        .filter(|d| !reported.contains(&(d.segment, d.offset)))
        .map(|d| Event::JournalDamaged {
            segment: d.segment,
            offset: d.offset,
            len: d.len,
            reason: d.kind.to_string(),
        })
        .collect();
    let first_snapshot = skipped
        .iter()
        .find(|s| s.position.segment == start.segment && s.reason.starts_with("snapshot"));
    if lost_prefix
        && !reported.contains(&(start.segment, start.offset))
        && !damage.iter().any(|d| d.position() == start)
    {
        unreported.push(Event::JournalDamaged {
            segment: start.segment,
            offset: start.offset,
            len: 0,
            reason: match first_snapshot {
                Some(s) => format!("segments before {} removed; {}", start.segment, s.reason),
                None => format!("segments before {} removed", start.segment),
            },
        });
    }
    Folded {
        state,
        end: reader.end(),
        skipped,
        snapshot_segment: from_snapshot.then_some(start.segment),
        from_snapshot,
        records_after_snapshot,
        lost: lost_prefix || !damage.is_empty(),
        unreported,
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
