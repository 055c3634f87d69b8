//! A session's transcript file as the worker reads it, for every harness that has one.
//!
//! A harness supplies only what is its own: where the file is (a path it knows, or a search
//! of its folders) and which engine reader parses it (`ov_engine::transcript::<agent>`).
//! Reading, peeking and naming the file are the same for all.
//!
//! | rule | where |
//! |---|---|
//! | a searched-for file is searched for at most once per source, and again by the next source until it exists | [`TranscriptFile::found`] |
//! | "anything new?" is answered from the metadata alone; a file not there yet holds nothing | [`TranscriptFile`]'s `peek` ([`ov_engine::transcript::tail::changed_since`]) |

use std::cell::OnceCell;
use std::io;
use std::path::{Path, PathBuf};

use ov_engine::delivery::TranscriptSource;
use ov_engine::turn::{FileIdentity, TranscriptChunk};

/// The engine reader of an agent's transcript: the range past `resume`, given the turn of
/// the previous range's last line (for a reader whose lines do not all name their turn).
pub type Reader =
    fn(&Path, Option<(FileIdentity, u64)>, Option<&str>) -> io::Result<Option<TranscriptChunk>>;

/// A search of the agent's folders for the transcript of a session (`home`, session id, its
/// last known working directory); `None` when there is none (yet).
pub type Finder = fn(&Path, &str, Option<&str>) -> Option<PathBuf>;

/// Where the file is.
enum Place {
    /// Known up front.
    At(PathBuf),
    /// Searched for on first use.
    Found {
        find: Finder,
        home: PathBuf,
        session_id: String,
        cwd: Option<String>,
        path: OnceCell<Option<PathBuf>>,
    },
}

/// A session's transcript file and the reader that parses it.
pub struct TranscriptFile {
    place: Place,
    reader: Reader,
}

impl TranscriptFile {
    /// The file at `path`, parsed by `reader`.
    pub fn at(path: PathBuf, reader: Reader) -> TranscriptFile {
        TranscriptFile {
            place: Place::At(path),
            reader,
        }
    }

    /// The file `find` finds for `session_id` (whose folder was `cwd`), parsed by `reader`.
    /// The search runs when the file is first needed; while it finds nothing, reads give
    /// nothing, and the next source (the next worker pass) searches again.
    pub fn found(
        find: Finder,
        home: &Path,
        session_id: &str,
        cwd: Option<&str>,
        reader: Reader,
    ) -> TranscriptFile {
        TranscriptFile {
            place: Place::Found {
                find,
                home: home.to_owned(),
                session_id: session_id.to_owned(),
                cwd: cwd.map(str::to_owned),
                path: OnceCell::new(),
            },
            reader,
        }
    }

    /// The file, when it is known or found.
    fn file(&self) -> Option<&Path> {
        match &self.place {
            Place::At(p) => Some(p),
            Place::Found {
                find,
                home,
                session_id,
                cwd,
                path,
            } => path
                .get_or_init(|| find(home, session_id, cwd.as_deref()))
                .as_deref(),
        }
    }
}

impl TranscriptSource for TranscriptFile {
    fn read(&self, resume: Option<(FileIdentity, u64)>) -> io::Result<Option<TranscriptChunk>> {
        self.read_after(resume, None)
    }

    fn read_after(
        &self,
        resume: Option<(FileIdentity, u64)>,
        last_turn: Option<&str>,
    ) -> io::Result<Option<TranscriptChunk>> {
        match self.file() {
            Some(p) => (self.reader)(p, resume, last_turn),
            None => Ok(None),
        }
    }

    fn path(&self) -> String {
        match (self.file(), &self.place) {
            (Some(p), _) => p.display().to_string(),
            (None, Place::Found { session_id, .. }) => {
                format!("<no transcript file found for {session_id}>")
            }
            (None, Place::At(p)) => p.display().to_string(),
        }
    }

    fn peek(&self, resume: Option<(FileIdentity, u64)>) -> Option<bool> {
        match self.file() {
            Some(p) => ov_engine::transcript::tail::changed_since(p, resume),
            None => Some(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_read(
        path: &Path,
        resume: Option<(FileIdentity, u64)>,
        _last_turn: Option<&str>,
    ) -> io::Result<Option<TranscriptChunk>> {
        ov_engine::transcript::zcode::read_chunk(path, resume)
    }

    fn in_home(home: &Path, session_id: &str, _cwd: Option<&str>) -> Option<PathBuf> {
        let p = home.join(format!("{session_id}.jsonl"));
        p.is_file().then_some(p)
    }

    #[test]
    fn a_file_not_found_yet_holds_nothing_and_is_searched_again_by_the_next_source() {
        let home = tempfile::tempdir().expect("tmp");
        let early = TranscriptFile::found(in_home, home.path(), "s1", None, lines_read);
        assert_eq!(early.peek(None), Some(false));
        assert!(early.read(None).expect("read").is_none());
        assert_eq!(early.path(), "<no transcript file found for s1>");
        let file = home.path().join("s1.jsonl");
        std::fs::write(&file, "{}\n").expect("write");
        // The search ran once for this source; the next one finds the file.
        assert!(early.read(None).expect("read").is_none());
        let later = TranscriptFile::found(in_home, home.path(), "s1", None, lines_read);
        assert_eq!(later.path(), file.display().to_string());
        assert_eq!(later.peek(None), Some(true));
        let chunk = later.read(None).expect("read").expect("chunk");
        assert_eq!(chunk.end, 3);
        let at = TranscriptFile::at(file.clone(), lines_read);
        assert_eq!(at.peek(Some((chunk.identity, chunk.end))), Some(false));
        assert_eq!(at.path(), file.display().to_string());
    }
}
