//! The incremental, bounded-memory line walk every transcript reader shares.
//!
//! | rule | where |
//! |---|---|
//! | resume only on the same (dev, inode) and a size ≥ the offset, else rescan from 0 | [`Tail::open`] |
//! | only newline-terminated lines are consumed; a line still being written is read again, whole, next time | [`Tail::next_line`] |
//! | the read stops at the length observed at open, so a growing file gives a well-defined range | [`Tail::open`] |
//! | memory is one reused line buffer, never the file; a line over [`MAX_LINE_BYTES`] is skipped unread and counted as a bad line | [`Tail::next_line`] |
//! | a read ends after the line that reaches [`CHUNK_LINE_BYTES`]; the caller reads on from `end` | [`Tail::next_line`] |
//! | "anything new?" is answered from the metadata alone | [`changed_since`] |

use std::fs::File;
use std::fs::Metadata;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Take};
use std::path::{Path, PathBuf};

use crate::turn::{FileIdentity, TranscriptChunk};

/// Read buffer size; longer lines grow the reused line buffer.
const READ_BUF: usize = 64 * 1024;

/// The longest line kept in memory. A longer one is streamed past without being held
/// (its bytes are consumed, it counts in `chunk.bad_lines`): a rollout line carries the
/// conversation so far, and a session whose window alone outgrows this is captured from its
/// hook payloads.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// A read stops after the line that takes it to this many bytes of lines; the caller reads
/// on from its `end` (`end < file_len` says there is more). With every text bounded by
/// [`crate::text::oversized::MAX_MESSAGE_BYTES`], one read's fragments stay far below the
/// journal's 64 MiB frame cap.
pub const CHUNK_LINE_BYTES: u64 = 16 << 20;

/// An open transcript positioned at the first byte to read, and the chunk being filled.
pub struct Tail {
    path: PathBuf,
    reader: BufReader<Take<File>>,
    line: Vec<u8>,
    /// Identity, start, end (advanced line by line), file length and `rescanned`; the
    /// caller fills in fragments and line counts.
    pub chunk: TranscriptChunk,
}

/// An I/O failure while reading a transcript, with where it happened. Wrapped in the
/// returned [`io::Error`] (same [`io::ErrorKind`]).
#[derive(Debug, thiserror::Error)]
#[error("could not read transcript {} at byte {offset}: {source}", path.display())]
pub struct TranscriptIoError {
    /// The transcript file.
    pub path: PathBuf,
    /// Byte offset where the failing operation started.
    pub offset: u64,
    /// The underlying error.
    #[source]
    pub source: io::Error,
}

/// The identity of an open file (device and inode; zeros where the platform has none).
pub fn identity_of(meta: &Metadata) -> FileIdentity {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        FileIdentity::default()
    }
}

/// Attaches the path and offset of a failed read to the error (same [`io::ErrorKind`]).
pub fn io_context(path: &Path, offset: u64) -> impl FnOnce(io::Error) -> io::Error + '_ {
    move |source| {
        io::Error::new(
            source.kind(),
            TranscriptIoError {
                path: path.to_owned(),
                offset,
                source,
            },
        )
    }
}

impl Tail {
    /// Opens `path` for reading past `resume` (identity and offset of the last read).
    /// `None` when the file does not exist.
    pub fn open(path: &Path, resume: Option<(FileIdentity, u64)>) -> io::Result<Option<Tail>> {
        // Only a regular file: a FIFO or a device there is an error, never a wait.
        let mut file = match crate::regular_file::open_stream(path) {
            Ok(Some(f)) => f,
            Ok(None) => return Ok(None),
            Err(e) => return Err(io_context(path, 0)(e)),
        };
        let meta = file.metadata().map_err(io_context(path, 0))?;
        let identity = identity_of(&meta);
        let file_len = meta.len();
        let (start, rescanned) = match resume {
            Some((id, off)) if id == identity && off <= file_len => (off, false),
            Some(_) => (0, true),
            None => (0, false),
        };
        if start > 0 {
            file.seek(SeekFrom::Start(start))
                .map_err(io_context(path, start))?;
        }
        Ok(Some(Tail {
            path: path.to_owned(),
            reader: BufReader::with_capacity(READ_BUF, file.take(file_len - start)),
            line: Vec::new(),
            chunk: TranscriptChunk {
                identity,
                start,
                end: start,
                file_len,
                rescanned,
                ..TranscriptChunk::default()
            },
        }))
    }

    /// The next complete line, trimmed of surrounding ASCII whitespace, with the offset
    /// it starts at; `None` at the end of the range or before a line still being written.
    /// `chunk.end` moves past every line returned, and past every line over
    /// [`MAX_LINE_BYTES`], which is skipped (counted in `chunk.bad_lines`). `None` too once
    /// the read holds [`CHUNK_LINE_BYTES`] of lines.
    pub fn next_line(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        if self.chunk.end - self.chunk.start >= CHUNK_LINE_BYTES {
            return Ok(None);
        }
        loop {
            self.line.clear();
            let at = self.chunk.end;
            let mut n = 0u64;
            let mut overlong = false;
            loop {
                let buf = self
                    .reader
                    .fill_buf()
                    .map_err(io_context(&self.path, at + n))?;
                if buf.is_empty() {
                    // The end of the range before a newline: a line still being written.
                    return Ok(None);
                }
                let (take, complete) = match memchr::memchr(b'\n', buf) {
                    Some(i) => (i + 1, true),
                    None => (buf.len(), false),
                };
                if !overlong {
                    if self.line.len() + take > MAX_LINE_BYTES {
                        overlong = true;
                        self.line = Vec::new();
                    } else {
                        self.line
                            .extend_from_slice(buf.get(..take).unwrap_or_default());
                    }
                }
                self.reader.consume(take);
                n += take as u64;
                if complete {
                    break;
                }
            }
            self.chunk.end += n;
            if overlong {
                log::warn!(
                    "{}: line at byte {at} is {n} bytes, over the {MAX_LINE_BYTES}-byte limit: skipped",
                    self.path.display()
                );
                self.chunk.bad_lines = self.chunk.bad_lines.saturating_add(1);
                continue;
            }
            return Ok(Some((at, self.line.trim_ascii())));
        }
    }
}

/// Whether the file at `path` holds anything past `resume` (a different identity, or a
/// length other than the saved offset), without reading it; `None` when it cannot tell.
/// A missing file holds nothing.
pub fn changed_since(path: &Path, resume: Option<(FileIdentity, u64)>) -> Option<bool> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Some(false),
        Err(_) => return None,
    };
    Some(match resume {
        None => meta.len() > 0,
        Some((id, offset)) => identity_of(&meta) != id || meta.len() != offset,
    })
}
