//! A journal as the inspection commands see it: every frame decoded for display, and the
//! engine's fold of the same reader (`ov_engine::store::fold_reader`; this crate never folds on
//! its own).
//!
//! Read-only: nothing is created, locked for writing or repaired.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use ov_engine::codec;
use ov_engine::event::Envelope;
use ov_engine::projector::State;
use ov_engine::store::{fold_reader, Folded};
use ov_journal::{FrameKind, Position, Reader};

/// How long a read-only command waits for the journal's shared lock.
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// One frame of a journal as read by the inspection commands.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Where the frame starts.
    pub position: Position,
    /// The decoded content, or why it does not decode.
    pub content: EntryContent,
}

/// What a frame holds, decoded.
#[derive(Debug, Clone)]
pub enum EntryContent {
    /// An event record.
    Event(Box<Envelope>),
    /// A state snapshot (the first frame of a compacted segment).
    Snapshot(Box<State>),
    /// A record or snapshot that does not decode.
    Undecodable {
        /// Snapshot or record.
        snapshot: bool,
        /// The codec's reason.
        reason: String,
    },
}

/// Frames of a reader from a position, decoded.
#[derive(Debug, Clone, Default)]
pub struct Entries {
    /// Frames in journal order.
    pub entries: Vec<Entry>,
    /// A read error that ended the walk early, where it stopped.
    pub read_error: Option<(Position, String)>,
    /// Damaged ranges read around (their frames are lost).
    pub damage: Vec<ov_journal::Damage>,
}

/// Every frame of a journal and the engine's fold, both from one reader (one moment).
#[derive(Debug, Clone)]
pub struct JournalView {
    /// Frames in journal order.
    pub entries: Vec<Entry>,
    /// A read error that ended the view early.
    pub read_error: Option<(Position, String)>,
    /// Damaged ranges read around (their frames are lost).
    pub damage: Vec<ov_journal::Damage>,
    /// `ov_engine::store::fold_reader` of the same reader.
    pub folded: Folded,
}

impl JournalView {
    /// The engine's fold of the journal.
    pub fn fold(&self) -> &Folded {
        &self.folded
    }

    /// The decoded events, with their positions.
    pub fn events(&self) -> impl Iterator<Item = (Position, &Envelope)> {
        self.entries.iter().filter_map(|e| match &e.content {
            EntryContent::Event(env) => Some((e.position, &**env)),
            _ => None,
        })
    }
}

/// Opens a read-only reader of the journal at `dir` (a shared lock with a bounded wait).
pub fn open_reader(dir: &Path) -> anyhow::Result<Reader> {
    Reader::open(dir, LOCK_WAIT).with_context(|| format!("could not read {}", dir.display()))
}

/// The engine's fold of the journal at `dir`.
pub fn fold(dir: &Path) -> anyhow::Result<Folded> {
    Ok(fold_reader(&open_reader(dir)?))
}

/// Reads every frame of the journal at `dir` and folds it. `progress` gets (bytes read, total
/// bytes) now and then.
pub fn read_journal_with(
    dir: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<JournalView> {
    let reader = open_reader(dir)?;
    let Entries {
        entries,
        read_error,
        damage,
    } = decode_from(&reader, reader.start(), progress);
    Ok(JournalView {
        entries,
        read_error,
        damage,
        folded: fold_reader(&reader),
    })
}

/// [`read_journal_with`] without progress.
pub fn read_journal(dir: &Path) -> anyhow::Result<JournalView> {
    read_journal_with(dir, &mut |_, _| {})
}

/// The frames of `reader` from `start`, decoded (`follow` re-reads only what is new).
pub fn decode_from(
    reader: &Reader,
    start: Position,
    progress: &mut dyn FnMut(u64, u64),
) -> Entries {
    let total = reader.valid_bytes();
    let mut out = Entries::default();
    let mut last = start;
    for (i, entry) in reader.entries_from(start).enumerate() {
        let frame = match entry {
            Ok(ov_journal::Entry::Frame(f)) => f,
            Ok(ov_journal::Entry::Damage(d)) => {
                out.damage.push(d);
                continue;
            }
            Err(e) => {
                out.read_error = Some((last, e.to_string()));
                break;
            }
        };
        last = frame.next_position();
        if i % 4096 == 0 {
            progress(reader.bytes_before(frame.position), total);
        }
        let content = match frame.kind {
            FrameKind::Record => match codec::decode_event(frame.payload) {
                Ok(env) => EntryContent::Event(Box::new(env)),
                Err(e) => EntryContent::Undecodable {
                    snapshot: false,
                    reason: e.to_string(),
                },
            },
            FrameKind::Snapshot => match codec::decode_snapshot(frame.payload) {
                Ok(s) => EntryContent::Snapshot(Box::new(s)),
                Err(e) => EntryContent::Undecodable {
                    snapshot: true,
                    reason: e.to_string(),
                },
            },
        };
        out.entries.push(Entry {
            position: frame.position,
            content,
        });
    }
    progress(total, total);
    out
}
