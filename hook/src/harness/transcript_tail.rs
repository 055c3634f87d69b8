//! The last lines of a JSON-lines transcript, read at hook time by harnesses whose payloads
//! name the transcript file but carry none of the turn's text (Cursor's `stop`,
//! Antigravity's `PreInvocation` and `Stop`).
//!
//! | rule | why |
//! |---|---|
//! | at most the file's last `max` bytes are read | a hook never reads a whole long conversation |
//! | the window's first line is dropped unless it starts the file | it may be cut |
//! | a last line without its newline is dropped | it is still being written |
//! | only a regular file is opened; a FIFO or device at the path is an error, never a wait | this runs in a hook |

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The complete lines among the last `max` bytes of the file at `path`, oldest first, without
/// their newlines. `None` when the file is missing or cannot be read (logged).
pub fn last_lines(path: &Path, max: u64) -> Option<Vec<Vec<u8>>> {
    let (mut file, len) = match ov_engine::regular_file::open(path) {
        Ok(Some(f)) => f,
        Ok(None) => return None,
        Err(e) => {
            log::warn!("transcript: {e}");
            return None;
        }
    };
    let from = len.saturating_sub(max);
    let mut buf = Vec::new();
    let read = file
        .seek(SeekFrom::Start(from))
        .and_then(|_| file.take(len - from).read_to_end(&mut buf));
    if let Err(e) = read {
        log::warn!("transcript {}: {e}", path.display());
        return None;
    }
    let Some(last_nl) = buf.iter().rposition(|b| *b == b'\n') else {
        return Some(Vec::new());
    };
    let begin = if from == 0 {
        0
    } else {
        match buf.iter().position(|b| *b == b'\n') {
            Some(i) => i + 1,
            None => return Some(Vec::new()),
        }
    };
    let whole = buf.get(begin..last_nl).unwrap_or_default();
    Some(
        whole
            .split(|b| *b == b'\n')
            .map(|l| l.trim_ascii().to_vec())
            .filter(|l| !l.is_empty())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_lines_of_the_window_only() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, "first\nsecond\nthird\npartial").expect("write");
        let all = last_lines(&p, 1 << 20).expect("read");
        assert_eq!(
            all,
            [b"first".to_vec(), b"second".to_vec(), b"third".to_vec()]
        );
        // A window starting inside "second" drops it: it may be cut.
        let tail = last_lines(&p, 17).expect("read");
        assert_eq!(tail, [b"third".to_vec()]);
        assert!(last_lines(&dir.path().join("missing"), 10).is_none());
        assert!(
            last_lines(dir.path(), 10).is_none(),
            "a directory is no file"
        );
    }
}
