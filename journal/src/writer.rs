//! A buffered writer that holds the exclusive lock for many appends.

use std::sync::MutexGuard;

use crate::error::Result;
use crate::format::FORMAT_VERSION;
use crate::journal::{batch_size, encode_batch, Journal, State};
use crate::lock::Held;
use crate::Position;

/// Flush the in-memory buffer once it holds this many bytes.
const FLUSH_AT: usize = 256 * 1024;

/// Buffers appends in memory and writes them in large chunks, holding the journal's exclusive lock
/// (and its in-process state) until dropped. Obtained from [`Journal::writer`].
///
/// Appended frames reach the file on [`Writer::flush`], [`Writer::sync`], when the buffer fills,
/// or on drop (best effort; errors there are only logged, so call `flush` or `sync` to see them).
/// Only whole units are ever written, but a crash can tear the last one; recovery cuts it.
#[derive(Debug)]
pub struct Writer<'j> {
    journal: &'j Journal,
    st: MutexGuard<'j, State>,
    _held: Held<'j>,
}

impl<'j> Writer<'j> {
    pub(crate) fn new(journal: &'j Journal, st: MutexGuard<'j, State>, held: Held<'j>) -> Self {
        Writer {
            journal,
            st,
            _held: held,
        }
    }

    /// Where the next frame will go.
    pub fn end(&self) -> Position {
        Position {
            segment: self.st.active,
            offset: self.st.end + self.st.buf.len() as u64,
        }
    }

    /// Buffers one record frame; returns the position it will have.
    pub fn append(&mut self, payload: &[u8]) -> Result<Position> {
        self.append_batch(&[payload])
    }

    /// Buffers a batch (whole or nothing, as [`Journal::append_batch`]); returns the position of
    /// its first frame.
    pub fn append_batch(&mut self, payloads: &[&[u8]]) -> Result<Position> {
        self.journal.check_payloads(payloads)?;
        if payloads.is_empty() {
            return Ok(self.end());
        }
        if self.st.buf.len() as u64 + batch_size(payloads) > FLUSH_AT as u64 {
            self.flush()?;
        }
        if self.st.header.version != FORMAT_VERSION {
            // Nothing is buffered yet: the first append starts a segment of this version.
            self.flush()?;
            self.journal.migrate(&mut self.st)?;
        }
        let pos = self.end();
        let salt = self.st.header.salt;
        encode_batch(&mut self.st.buf, salt, payloads);
        if self.st.buf.len() >= FLUSH_AT {
            self.flush()?;
        }
        Ok(pos)
    }

    /// Writes buffered frames to the file (visible to readers, not yet durable).
    pub fn flush(&mut self) -> Result<()> {
        self.journal.check_poison()?;
        if self.st.buf.is_empty() {
            return Ok(());
        }
        // On error the buffered frames are dropped and any part that landed is cut.
        self.journal.write_buf(&mut self.st)
    }

    /// Flushes, then `fdatasync`s: every frame appended so far is durable.
    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.journal.sync(&self.st)
    }

    /// Flushes, then rolls to a new segment starting with `snapshot` (see
    /// [`Journal::roll_with_snapshot`]).
    pub fn roll_with_snapshot(&mut self, snapshot: &[u8]) -> Result<Position> {
        self.journal.check_payloads(&[snapshot])?;
        self.flush()?;
        self.journal.roll(&mut self.st, snapshot)
    }
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.flush() {
            log::warn!("journal writer dropped with unflushed frames: {e}");
        }
    }
}
