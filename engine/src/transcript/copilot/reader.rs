//! Incremental, bounded-memory reading of Copilot's `events.jsonl` into a [`TranscriptChunk`].

use std::io;
use std::path::Path;

use std::collections::HashMap;

use crate::tool::TurnTools;
use crate::transcript::turns::{TurnState, TurnText, Turns};
use crate::turn::{FileIdentity, TranscriptChunk, TurnFragment};

use super::line::{parse_entry, AssistantLine, Entry};

/// A turn's prompt and answer, and its tool calls.
struct Turn {
    text: TurnText,
    tools: TurnTools,
}

impl TurnState for Turn {
    fn new(turn_id: String) -> Turn {
        Turn {
            tools: TurnTools {
                turn_id: turn_id.clone(),
                calls: Vec::new(),
            },
            text: TurnText::new(turn_id),
        }
    }

    fn into_fragment(self, superseded: bool) -> TurnFragment {
        self.text.into_fragment(superseded)
    }

    fn take_tools(&mut self) -> Option<TurnTools> {
        Some(std::mem::take(&mut self.tools))
    }
}

/// One assistant message of `turn`: a model call whose text, unless it requests tools, is
/// the answer so far; the tools it requests are the turn's calls.
fn add(turn: &mut Turn, line: AssistantLine) {
    turn.text.call();
    turn.text.interrupted = false;
    turn.text
        .answer(&line.text, line.at_ms, !line.tool_requests);
    for (id, name, input) in line.tool_calls {
        turn.tools.call(id, name, input);
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
    let Some(mut turns) = Turns::<Turn>::open(path, resume)? else {
        return Ok(None);
    };
    // The turn of the latest prompt: an assistant line that names none belongs to it.
    let mut latest_prompt: Option<String> = None;
    // The turn of each tool call requested in this range (a result follows its request).
    let mut call_turns: HashMap<String, String> = HashMap::new();
    // Results of calls requested before this range (turn id left empty).
    let mut orphans = TurnTools::default();
    while let Some(entry) = turns.next_entry(parse_entry)? {
        match entry {
            Entry::Prompt {
                message_id,
                text,
                at_ms,
            } => {
                latest_prompt = Some(message_id.clone());
                turns.turn(message_id).text.prompt_once(text, at_ms);
            }
            Entry::Assistant(a) => match a.origin.clone().or_else(|| latest_prompt.clone()) {
                Some(id) => {
                    for (call, _, _) in &a.tool_calls {
                        if let Some(call) = call {
                            call_turns.insert(call.clone(), id.clone());
                        }
                    }
                    add(turns.turn(id), a);
                }
                None => turns.skip(),
            },
            Entry::ToolDone {
                call_id,
                output,
                failed,
            } => match call_turns.get(&call_id).or(latest_prompt.as_ref()) {
                // Not `turns.turn`: a result does not make its turn the running one.
                Some(id) => {
                    let id = id.clone();
                    let running = turns.running().map(|t| t.text.turn_id.clone());
                    turns.turn(id).tools.result(call_id, output, failed);
                    if let Some(r) = running {
                        turns.turn(r);
                    }
                }
                // Its request was in an earlier range: the turn that keeps the call takes it.
                None => orphans.result(call_id, output, failed),
            },
            Entry::Failed { message_id } => {
                let turn = &mut turns.turn(message_id).text;
                // The failed call counts as the turn's latest call.
                turn.call();
                turn.interrupted = true;
            }
            Entry::Skip => turns.skip(),
        }
    }
    let mut chunk = turns.finish();
    if !orphans.calls.is_empty() {
        chunk.tools.push(orphans);
    }
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
