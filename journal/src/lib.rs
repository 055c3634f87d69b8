//! Append-only, checksummed, multi-process journal of opaque frames.
//!
//! # Context
//!
//! Every ovhook hook invocation appends to a per-session journal before doing anything else, and
//! detached workers append and read at the same time. This crate stores *frames* (opaque byte
//! payloads); it knows nothing about what they mean.
//!
//! # Design
//!
//! | piece | file | what it guarantees |
//! |---|---|---|
//! | format | `format.rs`, `FORMAT.md` | little-endian, self-validating frames whose checksums are keyed with a random per-segment salt (text inside a payload never verifies as a frame), zero fill never parses, length capped before use |
//! | recovery | `recovery.rs`, `active.rs` | only a proven torn tail cut back to the last whole unit; damage kept in place and read around (resynchronisation) |
//! | journal | `journal.rs` | appends under an exclusive `flock` with a bounded wait; batches whole or not at all |
//! | writer | `writer.rs` | buffered bulk appends under one lock hold |
//! | reader | `reader.rs`, `map.rs` | mmap views that never see a half-written tail |
//! | lock | `lock.rs` | `flock` with bounded waits, released on process death |
//!
//! A journal is a directory (`0700`) of segment files `<id as 16 hex>.ovj` (`0600`) and a `LOCK`
//! file. The highest segment is active; [`Journal::roll_with_snapshot`] starts a new one whose
//! first frame is a caller-supplied snapshot, and [`Journal::remove_segments_before`] drops old
//! ones.
//!
//! ```
//! # fn main() -> ov_journal::Result<()> {
//! use ov_journal::{Durability, Journal, Options};
//! let dir = tempfile::tempdir().expect("tempdir");
//! let j = Journal::open(&dir.path().join("j"), Options::default())?;
//! let p = j.append(b"hello", Durability::Sync)?;
//! j.append_batch(&[b"a", b"b"], Durability::Buffered)?;
//! let r = j.reader()?;
//! let frames: Vec<_> = r.frames_from(p).collect::<Result<_, _>>()?;
//! assert_eq!(frames.len(), 3);
//! assert_eq!(frames[0].payload, b"hello");
//! # Ok(()) }
//! ```
#![deny(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

mod active;
mod error;
mod format;
mod journal;
mod lock;
mod map;
pub mod prune;
mod reader;
mod recovery;
mod segment;
mod writer;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub use error::{CorruptionKind, Error, Result};
pub use format::{
    encode_frame, frame_header, Salt, FLAG_BEGIN, FLAG_END, FORMAT_VERSION, FRAME_HEADER_LEN,
    MAGIC, MAX_PAYLOAD_LEN, MIN_READ_VERSION, SEGMENT_HEADER_LEN,
};
pub use journal::{Journal, LOCK_FILE};
pub use lock::FileLock;
pub use reader::{Entries, Frames, Reader, SegmentInfo};
pub use segment::{is_journal, segment_id, segment_path};
pub use writer::Writer;

/// How to open a journal.
#[derive(Debug, Clone)]
pub struct Options {
    /// What to do with a torn tail.
    pub recovery: RecoveryMode,
    /// The longest any call waits for a lock before failing with [`Error::LockTimeout`].
    pub lock_timeout: Duration,
    /// Create the directory and first segment when missing.
    pub create: bool,
    /// Derive every new segment's salt from this seed and the segment id instead of the
    /// operating system's random source. **Only for reproducible fixtures** (golden journals):
    /// text that knows the salt can carry a frame that verifies. `None` (the default) in every
    /// real use.
    pub salt_seed: Option<u64>,
}

impl Default for Options {
    /// Tolerate a torn tail, wait at most 1 s for a lock, create when missing.
    fn default() -> Self {
        Options {
            recovery: RecoveryMode::default(),
            lock_timeout: Duration::from_secs(1),
            create: true,
            salt_seed: None,
        }
    }
}

/// What recovery does with a torn tail (a crash during an append).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoveryMode {
    /// Cut the tail back to the last whole frame or batch, with a `log::warn!` naming the path and
    /// offset. Damage followed by valid data is kept in place, reported and read around.
    #[default]
    TolerateTailCorruption,
    /// Refuse to open or append: [`Error::TornTail`]. Nothing is changed on disk.
    AbsoluteConsistency,
}

/// When an append returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// After the frame is written to the file (visible to other processes, survives a crash of
    /// this process, not a power loss).
    Buffered,
    /// After the frame is on stable storage (`fdatasync`).
    Sync,
}

/// A byte position: a segment and an offset inside its file. Ordered by segment, then offset.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Position {
    /// The segment id.
    pub segment: u64,
    /// The byte offset inside the segment file.
    pub offset: u64,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.segment, self.offset)
    }
}

/// What a frame holds.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FrameKind {
    /// An appended record.
    Record,
    /// A snapshot, the first frame of a segment made by [`Journal::roll_with_snapshot`].
    Snapshot,
}

/// A verified frame, borrowed from a [`Reader`].
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Frame<'a> {
    /// Where the frame starts.
    pub position: Position,
    /// Its kind.
    pub kind: FrameKind,
    /// Its payload.
    pub payload: &'a [u8],
}

impl Frame<'_> {
    /// The position just after this frame (where the next frame starts, if any).
    pub fn next_position(&self) -> Position {
        Position {
            segment: self.position.segment,
            offset: self.position.offset + FRAME_HEADER_LEN + self.payload.len() as u64,
        }
    }
}

/// A byte range of a segment that does not verify, with whole units that verify on both sides
/// (or the segment's start or end). Nothing in it is ever returned as a frame, and nothing in it
/// is ever cut: it is kept for inspection, and reading resumes after it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Damage {
    /// The segment file.
    pub path: PathBuf,
    /// The segment id.
    pub segment: u64,
    /// Where the damaged unit starts (0: the segment header itself does not verify).
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// What was wrong first.
    pub kind: CorruptionKind,
}

impl Damage {
    /// Where the damaged range starts.
    pub fn position(&self) -> Position {
        Position {
            segment: self.segment,
            offset: self.offset,
        }
    }
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} bytes damaged in {} at offset {} ({})",
            self.len,
            self.path.display(),
            self.offset,
            self.kind
        )
    }
}

/// What a resynchronising read yields: a verified frame, or a damaged range skipped over.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Entry<'a> {
    /// A verified frame.
    Frame(Frame<'a>),
    /// A range that does not verify; reading resumed after it.
    Damage(Damage),
}
