//! Incremental, bounded-memory reading of Copilot's `events.jsonl` into a [`TranscriptChunk`].

use std::io;
use std::path::Path;

use crate::transcript::tail::Tail;
use crate::turn::{FileIdentity, TranscriptChunk, TurnFragment};

use super::line::{parse_entry, AssistantLine, Entry};

/// A turn's events within one range. Each assistant message collapses into the answer
/// fields at once: memory per turn is its prompt and two texts.
struct Acc {
    turn_id: String,
    prompt: Option<String>,
    prompt_ms: Option<u64>,
    answer_ms: Option<u64>,
    final_text: Option<String>,
    last_text: Option<String>,
    failed: bool,
    calls: u32,
}

impl Acc {
    fn new(turn_id: String) -> Acc {
        Acc {
            turn_id,
            prompt: None,
            prompt_ms: None,
            answer_ms: None,
            final_text: None,
            last_text: None,
            failed: false,
            calls: 0,
        }
    }

    fn add(&mut self, line: AssistantLine) {
        self.calls = self.calls.saturating_add(1);
        self.failed = false;
        let text = line.text.trim();
        if text.is_empty() {
            return;
        }
        self.answer_ms = line.at_ms.or(self.answer_ms);
        if !line.tool_requests {
            self.final_text = Some(text.to_owned());
        }
        self.last_text = Some(text.to_owned());
    }

    fn into_fragment(self, superseded: bool) -> TurnFragment {
        TurnFragment {
            finished: self.final_text.is_some(),
            turn_id: self.turn_id,
            // Texts over the message limit travel as their stand-ins.
            prompt: self.prompt.map(crate::text::oversized::bounded),
            final_text: self.final_text.map(crate::text::oversized::bounded),
            last_text: self.last_text.map(crate::text::oversized::bounded),
            interrupted: self.failed,
            calls: self.calls,
            superseded,
            prompt_ms: self.prompt_ms,
            answer_ms: self.answer_ms,
            ..TurnFragment::default()
        }
    }
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
    let Some(mut tail) = Tail::open(path, resume)? else {
        return Ok(None);
    };
    let mut accs: Vec<Acc> = Vec::new();
    // The turn that received the latest line (an index into `accs`).
    let mut last: Option<usize> = None;
    let mut latest_prompt: Option<usize> = None;
    let mut skipped = 0u32;
    let mut bad = 0u32;
    let turn_of = |accs: &mut Vec<Acc>, id: String| match accs.iter().rposition(|a| a.turn_id == id)
    {
        Some(i) => i,
        None => {
            accs.push(Acc::new(id));
            accs.len() - 1
        }
    };
    while let Some((at, body)) = tail.next_line()? {
        if body.is_empty() {
            skipped += 1;
            continue;
        }
        let entry = match parse_entry(body) {
            Ok(e) => e,
            Err(e) => {
                log::debug!("transcript {}: bad line at byte {at}: {e}", path.display());
                bad += 1;
                continue;
            }
        };
        match entry {
            Entry::Prompt {
                message_id,
                text,
                at_ms,
            } => {
                let i = turn_of(&mut accs, message_id);
                if let Some(acc) = accs.get_mut(i) {
                    if acc.prompt.is_none() {
                        acc.prompt = Some(text);
                        acc.prompt_ms = at_ms;
                    }
                }
                latest_prompt = Some(i);
                last = Some(i);
            }
            Entry::Assistant(a) => {
                let i = match a.origin.clone() {
                    Some(origin) => turn_of(&mut accs, origin),
                    None => match latest_prompt {
                        Some(i) => i,
                        None => {
                            skipped += 1;
                            continue;
                        }
                    },
                };
                if let Some(acc) = accs.get_mut(i) {
                    acc.add(a);
                }
                last = Some(i);
            }
            Entry::Failed { message_id } => {
                let i = turn_of(&mut accs, message_id);
                if let Some(acc) = accs.get_mut(i) {
                    // The failed call counts as the turn's latest call.
                    acc.calls = acc.calls.saturating_add(1);
                    acc.failed = true;
                }
                last = Some(i);
            }
            Entry::Skip => skipped += 1,
        }
    }
    let mut chunk = tail.chunk;
    chunk.skipped_lines = chunk.skipped_lines.saturating_add(skipped);
    chunk.bad_lines = chunk.bad_lines.saturating_add(bad);
    chunk.fragments = accs
        .into_iter()
        .enumerate()
        .map(|(i, acc)| acc.into_fragment(Some(i) != last))
        .collect();
    Ok(Some(chunk))
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
