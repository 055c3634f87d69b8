//! Typed errors. Every variant that concerns a file carries its path; corruption carries the
//! byte offset.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::Position;

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What is wrong with bytes that do not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CorruptionKind {
    /// The frame header crc does not match (length, kind or flags damaged, or not a frame).
    HeaderChecksum,
    /// The frame crc does not match (payload damaged).
    FrameChecksum,
    /// The frame length is over [`crate::MAX_PAYLOAD_LEN`].
    LengthOverCap {
        /// The stored length.
        len: u32,
    },
    /// The kind byte is not a known kind.
    UnknownKind(u8),
    /// Unknown flag bits or non-zero reserved bytes.
    UnknownFlags(u8),
    /// A batch was not finished before another unit began or the segment ended.
    IncompleteBatch,
    /// A frame that continues a batch without a batch having begun.
    OrphanBatchFrame,
    /// A sealed (not the newest) segment ends inside a frame.
    TruncatedSealedSegment,
    /// The segment header crc does not match.
    SegmentHeaderChecksum,
    /// The segment header has an unexpected field value.
    SegmentHeaderField,
    /// The segment header is shorter than its fixed size.
    SegmentHeaderTruncated,
    /// The segment id in the header differs from the one in the file name.
    SegmentIdMismatch {
        /// The id the file name says.
        expected: u64,
        /// The id the header says.
        found: u64,
    },
}

impl fmt::Display for CorruptionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HeaderChecksum => f.write_str("frame header checksum mismatch"),
            Self::FrameChecksum => f.write_str("frame checksum mismatch"),
            Self::LengthOverCap { len } => write!(f, "frame length {len} over the cap"),
            Self::UnknownKind(k) => write!(f, "unknown frame kind {k}"),
            Self::UnknownFlags(x) => write!(f, "unknown frame flags {x:#04x}"),
            Self::IncompleteBatch => f.write_str("incomplete batch"),
            Self::OrphanBatchFrame => f.write_str("batch frame without a batch start"),
            Self::TruncatedSealedSegment => f.write_str("sealed segment ends inside a frame"),
            Self::SegmentHeaderChecksum => f.write_str("segment header checksum mismatch"),
            Self::SegmentHeaderField => f.write_str("segment header field out of range"),
            Self::SegmentHeaderTruncated => f.write_str("segment header truncated"),
            Self::SegmentIdMismatch { expected, found } => {
                write!(
                    f,
                    "segment id {found} in a file named for segment {expected}"
                )
            }
        }
    }
}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O operation on `path` failed.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// Bytes at `offset` in `path` do not verify and are followed by more data, so this is not a
    /// torn tail. Nothing at or after `offset` in that segment is returned.
    #[error("corruption in {} at offset {offset}: {kind}", path.display())]
    Corruption {
        /// The segment file.
        path: PathBuf,
        /// Byte offset of the first bad byte range inside that file.
        offset: u64,
        /// What is wrong.
        kind: CorruptionKind,
    },
    /// [`crate::RecoveryMode::AbsoluteConsistency`] found a torn tail; nothing was changed.
    #[error("torn tail in {} at offset {offset} (absolute consistency: not repaired)", path.display())]
    TornTail {
        /// The segment file.
        path: PathBuf,
        /// Offset of the last whole frame's end (where tolerant recovery would cut).
        offset: u64,
    },
    /// The file does not start with the journal magic.
    #[error("{} is not an ovhook journal segment (bad magic)", path.display())]
    NotAJournal {
        /// The file.
        path: PathBuf,
    },
    /// The segment is in a format version this build cannot read.
    #[error(
        "{} uses journal format version {found}; this build reads versions {min}..={max}",
        path.display()
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// Oldest readable version.
        min: u32,
        /// Newest readable version.
        max: u32,
    },
    /// The journal does not exist and [`crate::Options::create`] is false.
    #[error("no journal at {}", path.display())]
    NotFound {
        /// The directory.
        path: PathBuf,
    },
    /// The lock could not be taken within the bounded wait.
    #[error("timed out after {waited:?} waiting for the lock on {}", path.display())]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long was waited.
        waited: Duration,
    },
    /// An fsync failed earlier; this handle accepts no more calls (the kernel may have dropped the
    /// dirty pages, see the fsyncgate paper). Close and re-open the journal.
    #[error("journal handle for {} is poisoned after a failed fsync; reopen the journal", path.display())]
    Poisoned {
        /// The journal directory.
        path: PathBuf,
    },
    /// A payload is over [`crate::MAX_PAYLOAD_LEN`].
    #[error("frame of {len} bytes for {} is over the {max} byte cap", path.display())]
    FrameTooLarge {
        /// The journal directory.
        path: PathBuf,
        /// The payload length.
        len: u64,
        /// The cap.
        max: u32,
    },
    /// The position lies in a segment that has been removed.
    #[error("position {position} in {} is in a removed segment", path.display())]
    PositionRemoved {
        /// The journal directory.
        path: PathBuf,
        /// The requested position.
        position: Position,
    },
}

/// Attaches a path to `io::Result`s.
pub(crate) trait IoContext<T> {
    fn at(self, path: &Path) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn at(self, path: &Path) -> Result<T> {
        self.map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}
