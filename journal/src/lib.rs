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
//! | format | `format.rs`, `FORMAT.md` | little-endian, self-validating frames, zero fill never parses, length capped before use |
//! | recovery | `recovery.rs` | torn tail cut back to the last whole unit; damage followed by data is corruption |
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

mod error;
mod format;
mod journal;
mod lock;
mod map;
mod reader;
mod recovery;
mod segment;
mod writer;

use std::fmt;
use std::time::Duration;

pub use error::{CorruptionKind, Error, Result};
pub use format::{
    FORMAT_VERSION, FRAME_HEADER_LEN, MAGIC, MAX_PAYLOAD_LEN, MIN_READ_VERSION, SEGMENT_HEADER_LEN,
};
pub use journal::{Journal, LOCK_FILE};
pub use lock::FileLock;
pub use reader::{Frames, Reader, SegmentInfo};
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
}

impl Default for Options {
    /// Tolerate a torn tail, wait at most 1 s for a lock, create when missing.
    fn default() -> Self {
        Options {
            recovery: RecoveryMode::default(),
            lock_timeout: Duration::from_secs(1),
            create: true,
        }
    }
}

/// What recovery does with a torn tail (a crash during an append).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoveryMode {
    /// Cut the tail back to the last whole frame or batch, with a `log::warn!` naming the path and
    /// offset. Corruption followed by valid data is still an error.
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
