//! The only place that memory-maps segment files.

use std::fs::File;
use std::path::Path;

use memmap2::Mmap;

use crate::error::{IoContext, Result};

/// A read-only view of a segment file (empty files are not mapped).
#[derive(Debug)]
pub(crate) struct Map(Option<Mmap>);

impl Map {
    /// Maps the whole of `file` as it is now.
    ///
    /// Callers must hold the journal `LOCK` (shared or exclusive) while they touch bytes past the
    /// last valid frame, and must never touch them after releasing it.
    pub(crate) fn new(file: &File, path: &Path) -> Result<Map> {
        let len = file.metadata().at(path)?.len();
        if len == 0 {
            return Ok(Map(None));
        }
        // SAFETY: the mapping is read-only and shared. Touching a page that lies wholly past the
        // end of the file raises SIGBUS, and bytes changed by another process would break the
        // `&[u8]` contract, so the protocol guarantees:
        // - journal files are only ever appended to, and a segment is never modified below its
        //   last valid frame (unlinking a segment does not affect existing mappings);
        // - the only truncation, repair of a torn tail, happens under the exclusive `LOCK` and cuts
        //   only bytes *beyond* the last valid frame;
        // - readers map and scan while holding a shared `LOCK` (no repair can run), and afterwards
        //   only touch bytes below the valid end they found, which no one truncates or rewrites.
        // Nothing outside this crate may write to or truncate journal files.
        let m = unsafe { Mmap::map(file) }.at(path)?;
        Ok(Map(Some(m)))
    }

    /// The mapped bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.0.as_deref().unwrap_or_default()
    }
}
