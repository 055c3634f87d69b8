//! Incremental, bounded-memory reading of Gemini CLI's session file into a [`TranscriptChunk`].

use std::io;
use std::path::Path;

use crate::transcript::tail::io_context;
use crate::transcript::turns::{TurnState, TurnText, Turns};
use crate::turn::{FileIdentity, TranscriptChunk, TurnFragment};

use super::line::{parse_entry, AnswerLine, Entry};

/// A turn's messages within one range: its prompt and answer, and which record the
/// answers came from (Gemini rewrites a record in place as it learns more of it).
struct Acc {
    text: TurnText,
    /// The id of the record whose text is the final answer.
    final_id: Option<String>,
    /// The id of the latest model record.
    last_call: Option<String>,
}

impl Acc {
    fn add(&mut self, line: AnswerLine) {
        if self.last_call.as_deref() != Some(line.id.as_str()) {
            self.text.call();
        }
        if line.tool_calls {
            // The same record rewritten with its tool calls: its text was no final answer.
            if self.final_id.as_deref() == Some(line.id.as_str()) {
                self.text.final_text = None;
                self.final_id = None;
            }
        } else if !line.text.trim().is_empty() {
            self.final_id = Some(line.id.clone());
        }
        self.text.answer(&line.text, line.at_ms, !line.tool_calls);
        self.last_call = Some(line.id);
    }
}

impl TurnState for Acc {
    fn new(turn_id: String) -> Acc {
        Acc {
            text: TurnText::new(turn_id),
            final_id: None,
            last_call: None,
        }
    }

    fn into_fragment(self, superseded: bool) -> TurnFragment {
        self.text.into_fragment(superseded)
    }
}

/// Reads the complete lines of the session file at `path` past the saved position.
///
/// * `None` when the file does not exist.
/// * `resume = Some((identity, offset))` continues at `offset` when the file still has
///   that identity and is at least `offset` long; otherwise the file is read from 0 and
///   the chunk says `rescanned: true`.
/// * A model call belongs to the latest prompt before it; when the range starts with model
///   calls, their prompt is looked up before the range ([`prompt_before`]) and the turn
///   appears with `prompt: None` (it merges with the fragment that had the prompt).
/// * Only newline-terminated lines are consumed; memory is bounded by the longest line
///   and each turn's prompt and answer.
pub fn read_chunk(
    path: &Path,
    resume: Option<(FileIdentity, u64)>,
) -> io::Result<Option<TranscriptChunk>> {
    let Some(mut turns) = Turns::<Acc>::open(path, resume)? else {
        return Ok(None);
    };
    let start = turns.start();
    // Looked up at most once: the prompt of the turn running when the range began.
    let mut before: Option<Option<String>> = None;
    while let Some(entry) = turns.next_entry(parse_entry)? {
        match entry {
            // A prompt id seen again (a rescan's repeat) is the same turn, running again.
            Entry::Prompt { id, text, at_ms } => turns.turn(id).text.prompt_once(text, at_ms),
            Entry::Answer(a) => {
                if let Some(turn) = turns.running() {
                    turn.add(a);
                    continue;
                }
                let earlier = match &before {
                    Some(t) => t.clone(),
                    None => {
                        let t = prompt_before(path, start)?;
                        before = Some(t.clone());
                        t
                    }
                };
                match earlier {
                    Some(id) => turns.turn(id).add(a),
                    None => turns.skip(),
                }
            }
            Entry::Skip => turns.skip(),
        }
    }
    Ok(Some(turns.finish()))
}

/// Longest stretch of the file searched backwards for a prompt.
const PROMPT_SEARCH_MAX: u64 = 8 << 20;

/// The `id` of the last user prompt in the session file at `path`: the turn Gemini CLI's
/// AfterAgent closes (its final answer is written before the hook fires) and BeforeTool runs
/// in. `None` when the file is missing or holds no prompt in its last 8 MiB.
pub fn latest_prompt_id(path: &Path) -> io::Result<Option<String>> {
    prompt_before(path, u64::MAX)
}

/// The `id` of the last user prompt that ends at or before byte `end`, searched backwards
/// through at most the 8 MiB before it, 64 KiB first and doubling; `None` when there is
/// none there or the file is missing.
pub fn prompt_before(path: &Path, end: u64) -> io::Result<Option<String>> {
    use std::io::{Read, Seek, SeekFrom};
    // Only a regular file: a FIFO or a device at the payload's path is an error, never a wait
    // (this runs in a hook).
    let mut file = match crate::regular_file::open_stream(path) {
        Ok(Some(f)) => f,
        Ok(None) => return Ok(None),
        Err(e) => return Err(io_context(path, 0)(e)),
    };
    let len = file.metadata().map_err(io_context(path, 0))?.len();
    let end = end.min(len);
    // `buf` holds the bytes `start..end`; each wider window reads only the bytes before it and
    // parses only the lines no earlier window could (the earlier window's cut first line,
    // and what precedes it).
    let mut buf: Vec<u8> = Vec::new();
    let mut start = end;
    // The index in `buf` of the newline ending the lines not parsed yet; `None` until a window
    // held a newline.
    let mut unparsed_end: Option<usize> = None;
    let mut window: u64 = 64 << 10;
    loop {
        let from = end.saturating_sub(window);
        file.seek(SeekFrom::Start(from))
            .map_err(io_context(path, from))?;
        let mut head = Vec::with_capacity(usize::try_from(start - from).unwrap_or(0) + buf.len());
        file.by_ref()
            .take(start - from)
            .read_to_end(&mut head)
            .map_err(io_context(path, from))?;
        let added = head.len();
        head.extend_from_slice(&buf);
        buf = head;
        start = from;
        // Whole lines only: the window's first line is cut unless it starts the file, and a
        // last line without its newline is still being written.
        let first_nl = memchr::memchr(b'\n', &buf);
        let begin = if start == 0 {
            0
        } else {
            first_nl.map_or(buf.len(), |i| i + 1)
        };
        let limit = match unparsed_end {
            Some(i) => Some(i + added),
            None => memchr::memrchr(b'\n', &buf),
        };
        let lines = limit
            .filter(|&l| begin <= l)
            .and_then(|l| buf.get(begin..l))
            .unwrap_or_default();
        for line in lines.rsplit(|b| *b == b'\n') {
            // Only lines that may be a user message are parsed.
            let may_be = memchr::memmem::find(line, b"\"user\"").is_some()
                || memchr::memmem::find(line, b"\\u").is_some();
            if !may_be {
                continue;
            }
            if let Ok(Entry::Prompt { id, .. }) = parse_entry(line.trim_ascii()) {
                return Ok(Some(id));
            }
        }
        if start == 0 || window >= PROMPT_SEARCH_MAX {
            return Ok(None);
        }
        if limit.is_some() {
            unparsed_end = first_nl;
        }
        window = window.saturating_mul(2);
    }
}
