//! Incremental, bounded-memory reading of Copilot's `events.jsonl` into a [`TranscriptChunk`].

use std::io;
use std::path::Path;

use crate::transcript::turns::{TurnText, Turns};
use crate::turn::{FileIdentity, TranscriptChunk};

use super::line::{parse_entry, AssistantLine, Entry};

/// One assistant message of `turn`: a model call whose text, unless it requests tools, is
/// the answer so far.
fn add(turn: &mut TurnText, line: AssistantLine) {
    turn.call();
    turn.interrupted = false;
    turn.answer(&line.text, line.at_ms, !line.tool_requests);
}

/// Reads the complete lines of the events file at `path` past the saved position.
///
/// * `None` when the file does not exist.
/// * `resume = Some((identity, offset))` continues at `offset` when the file still has
///   that identity and is at least `offset` long; otherwise the file is read from 0 and
///   the chunk says `rescanned: true`.
/// * Every assistant line names its turn, so a range needs nothing from earlier reads:
///   a turn whose prompt was read before appears with `prompt: None` and merges.
/// * Only newline-terminated lines are consumed; memory is bounded by the longest line
///   and each turn's prompt and answer.
pub fn read_chunk(
    path: &Path,
    resume: Option<(FileIdentity, u64)>,
) -> io::Result<Option<TranscriptChunk>> {
    let Some(mut turns) = Turns::<TurnText>::open(path, resume)? else {
        return Ok(None);
    };
    // The turn of the latest prompt: an assistant line that names none belongs to it.
    let mut latest_prompt: Option<String> = None;
    while let Some(entry) = turns.next_entry(parse_entry)? {
        match entry {
            Entry::Prompt {
                message_id,
                text,
                at_ms,
            } => {
                latest_prompt = Some(message_id.clone());
                turns.turn(message_id).prompt_once(text, at_ms);
            }
            Entry::Assistant(a) => match a.origin.clone().or_else(|| latest_prompt.clone()) {
                Some(id) => add(turns.turn(id), a),
                None => turns.skip(),
            },
            Entry::Failed { message_id } => {
                let turn = turns.turn(message_id);
                // The failed call counts as the turn's latest call.
                turn.call();
                turn.interrupted = true;
            }
            Entry::Skip => turns.skip(),
        }
    }
    Ok(Some(turns.finish()))
}

/// Longest tail of the file searched for the latest user message.
const LATEST_PROMPT_MAX_TAIL: u64 = 8 << 20;

/// The `messageId` of the last `user.message` in the events file at `path`: the turn
/// Copilot's `agentStop` closes (its final answer is written before the hook fires).
/// Reads the file's tail only, 64 KiB first and doubling up to 8 MiB; `None` when the
/// file is missing or holds no user message there.
pub fn latest_prompt_id(path: &Path) -> io::Result<Option<String>> {
    use std::io::{Read, Seek, SeekFrom};
    // Only a regular file: a FIFO or a device at the payload's path is an error, never a wait
    // (this runs in the Stop hook).
    let mut file = match crate::regular_file::open_stream(path) {
        Ok(Some(f)) => f,
        Ok(None) => return Ok(None),
        Err(e) => return Err(crate::transcript::tail::io_context(path, 0)(e)),
    };
    let len = file
        .metadata()
        .map_err(crate::transcript::tail::io_context(path, 0))?
        .len();
    let mut window: u64 = 64 << 10;
    loop {
        let start = len.saturating_sub(window);
        file.seek(SeekFrom::Start(start))
            .map_err(crate::transcript::tail::io_context(path, start))?;
        let mut buf = Vec::with_capacity(usize::try_from(len - start).unwrap_or(0));
        file.by_ref()
            .take(len - start)
            .read_to_end(&mut buf)
            .map_err(crate::transcript::tail::io_context(path, start))?;
        // Whole lines only: the window's first line is cut unless it starts the file. Each
        // line is parsed as JSON; the key search only skips lines that cannot be a user
        // message (its type is spelled `user.message` or with `\u` escapes).
        let whole = if start == 0 {
            buf.as_slice()
        } else {
            memchr::memchr(b'\n', &buf).map_or(&[][..], |i| buf.get(i + 1..).unwrap_or_default())
        };
        for line in whole.rsplit(|b| *b == b'\n') {
            let may_be = memchr::memmem::find(line, b"user.message").is_some()
                || memchr::memmem::find(line, b"\\u").is_some();
            if !may_be {
                continue;
            }
            if let Ok(Entry::Prompt { message_id, .. }) = parse_entry(line.trim_ascii()) {
                return Ok(Some(message_id));
            }
        }
        if start == 0 || window >= LATEST_PROMPT_MAX_TAIL {
            return Ok(None);
        }
        window = window.saturating_mul(2);
    }
}
