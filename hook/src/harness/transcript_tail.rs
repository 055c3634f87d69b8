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
//! | [`rev_lines`] reads back from the end in growing windows (64 KiB, then eight times more each time) | a reader that stops at the last turn reads only that much |

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The first window [`rev_lines`] reads.
const FIRST_WINDOW: u64 = 64 << 10;

/// Whether `needle` occurs in `hay` (a line is searched before it is parsed).
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

/// The text of a message's `content` in the shape Claude Code, Cursor and Droid write it: a
/// string, or parts whose `type:"text"` ones are joined by newlines; trimmed, with `strip`
/// removed first; `None` when no text is left.
pub fn text_parts(content: &serde_json::Value, strip: Option<&str>) -> Option<String> {
    use serde_json::Value;
    let mut text = match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    if let Some(strip) = strip {
        text = text.replace(strip, "");
    }
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The complete lines among the last `max` bytes of the file at `path`, newest first, read
/// lazily: the lines [`last_lines`] gives, in reverse. `None` when the file is missing or
/// cannot be opened (logged).
pub fn rev_lines(path: &Path, max: u64) -> Option<RevLines> {
    rev_lines_from(path, max, FIRST_WINDOW)
}

fn rev_lines_from(path: &Path, max: u64, first_window: u64) -> Option<RevLines> {
    let (file, len) = match ov_engine::regular_file::open(path) {
        Ok(Some(f)) => f,
        Ok(None) => return None,
        Err(e) => {
            log::warn!("transcript: {e}");
            return None;
        }
    };
    Some(RevLines {
        file,
        limit: len.saturating_sub(max),
        end: len,
        window: first_window.max(1),
        trailing: true,
        pending: Vec::new(),
    })
}

/// The iterator of [`rev_lines`].
pub struct RevLines {
    file: File,
    /// Nothing before this offset is read (the file's length less `max`).
    limit: u64,
    /// Everything from here on was read (a line starts here, or the file ends).
    end: u64,
    /// The size of the next window.
    window: u64,
    /// The unfinished last line (no newline yet) is still to be dropped.
    trailing: bool,
    /// Whole lines of the last window not given out yet, oldest first.
    pending: Vec<Vec<u8>>,
}

impl RevLines {
    /// Reads the window before `end`: its whole lines go to `pending`; `end` moves back to the
    /// start of the first of them (a line the window cut is read whole by the next window,
    /// or dropped at `limit`, as [`last_lines`] drops it).
    fn read_window(&mut self) {
        let from = self.end.saturating_sub(self.window).max(self.limit);
        self.window = self.window.saturating_mul(8);
        let mut buf = Vec::new();
        let read = self
            .file
            .seek(SeekFrom::Start(from))
            .and_then(|_| (&mut self.file).take(self.end - from).read_to_end(&mut buf));
        if let Err(e) = read {
            log::warn!("transcript: {e}");
            self.end = self.limit;
            return;
        }
        let mut hi = buf.len();
        if self.trailing {
            match buf.iter().rposition(|b| *b == b'\n') {
                Some(i) => {
                    hi = i + 1;
                    self.trailing = false;
                }
                None => {
                    // All of it belongs to the unfinished last line.
                    self.end = from;
                    return;
                }
            }
        }
        let body = buf.get(..hi).unwrap_or_default();
        let lo = if from == 0 {
            0
        } else {
            body.iter().position(|b| *b == b'\n').map_or(hi, |i| i + 1)
        };
        self.end = if from == self.limit {
            self.limit
        } else {
            from + lo as u64
        };
        self.pending = body
            .get(lo..)
            .unwrap_or_default()
            .split(|b| *b == b'\n')
            .map(|l| l.trim_ascii().to_vec())
            .filter(|l| !l.is_empty())
            .collect();
    }
}

impl Iterator for RevLines {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(line) = self.pending.pop() {
                return Some(line);
            }
            if self.end <= self.limit {
                return None;
            }
            self.read_window();
        }
    }
}

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
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Read back in windows of any size, the lines are [`last_lines`]'s, newest first.
        #[test]
        fn rev_lines_are_the_last_lines_reversed(
            lines in prop::collection::vec("[a-z \\n]{0,12}", 0..24),
            unfinished in "[a-z]{0,6}",
            max in 0u64..400,
            first_window in 1u64..64,
        ) {
            let dir = tempfile::tempdir().expect("tmp");
            let p = dir.path().join("t.jsonl");
            let text = format!("{}{unfinished}", lines.iter().map(|l| format!("{l}\n")).collect::<String>());
            std::fs::write(&p, text).expect("write");
            let mut want = last_lines(&p, max).expect("read");
            want.reverse();
            let got: Vec<Vec<u8>> = rev_lines_from(&p, max, first_window).expect("open").collect();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn contains_finds_a_needle_anywhere() {
        assert!(contains(b"{\"role\":\"user\"}", b"\"role\""));
        assert!(!contains(b"{\"rol\":1}", b"\"role\""));
        assert!(contains(b"abc", b""));
    }

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
