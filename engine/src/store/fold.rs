//! Folding a session's journal into its state, and compacting it behind a snapshot.

use std::time::Duration;

use ov_journal::{Durability, Entry, FrameKind, Position};

use super::{SessionStore, StoreError};
use crate::codec;
use crate::event::Event;
use crate::projector::State;

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

impl SessionStore {
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
