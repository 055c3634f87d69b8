//! Incremental, bounded-memory reading of a transcript into a [`TranscriptChunk`].

use std::collections::HashSet;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use crate::tool::TurnTools;
use crate::transcript::turns::{TurnState, TurnText, Turns};
use crate::turn::{FileIdentity, TranscriptChunk, TurnFragment};

use super::line::{parse_entry, AssistantLine, Entry};

/// The assistant message being read: its blocks arrive one line each.
struct Message {
    id: String,
    /// (apiBlockIndex, or arrival order past every index) → text.
    texts: Vec<(u64, String)>,
    tool_use: bool,
    api_error: bool,
    /// Time of its latest line.
    at_ms: Option<u64>,
}

impl Message {
    fn new(id: String) -> Message {
        Message {
            id,
            texts: Vec::new(),
            tool_use: false,
            api_error: false,
            at_ms: None,
        }
    }

    fn add(&mut self, line: AssistantLine) {
        self.tool_use |= line.tool_use;
        self.api_error |= line.api_error;
        self.at_ms = line.at_ms.or(self.at_ms);
        let base = line
            .block_index
            .map_or(u64::from(u32::MAX) + self.texts.len() as u64, u64::from);
        for t in line.texts {
            self.texts.push((base, t));
        }
    }

    /// All text blocks in block order, joined by a blank line; None when blank.
    fn text(mut self) -> Option<String> {
        self.texts.sort_by_key(|(i, _)| *i);
        let parts: Vec<&str> = self
            .texts
            .iter()
            .map(|(_, t)| t.trim())
            .filter(|t| !t.is_empty())
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
}

/// A turn's lines within one range. Finished messages collapse into the answer fields at
/// once: memory per turn is one message's text.
struct Acc {
    text: TurnText,
    current: Option<Message>,
    /// The turn's tool calls, paired with their results by id.
    tools: TurnTools,
}

impl Acc {
    fn add(&mut self, mut line: AssistantLine) {
        for call in std::mem::take(&mut line.tool_calls) {
            self.tools.call(call.id, call.name, call.input);
        }
        if self
            .current
            .as_ref()
            .is_some_and(|m| m.id != line.message_id)
        {
            self.close_message();
        }
        let msg = self.current.get_or_insert_with(|| {
            self.text.call();
            Message::new(line.message_id.clone())
        });
        msg.add(line);
    }

    fn close_message(&mut self) {
        let Some(msg) = self.current.take() else {
            return;
        };
        self.text.interrupted = msg.api_error;
        if msg.api_error {
            return;
        }
        let terminal = !msg.tool_use;
        let at_ms = msg.at_ms;
        if let Some(text) = msg.text() {
            self.text.answer(&text, at_ms, terminal);
        }
    }
}

impl TurnState for Acc {
    fn new(turn_id: String) -> Acc {
        Acc {
            tools: TurnTools {
                turn_id: turn_id.clone(),
                calls: Vec::new(),
            },
            text: TurnText::new(turn_id),
            current: None,
        }
    }

    fn take_tools(&mut self) -> Option<TurnTools> {
        Some(std::mem::take(&mut self.tools))
    }

    fn into_fragment(mut self, superseded: bool) -> TurnFragment {
        self.close_message();
        self.text.into_fragment(superseded)
    }
}

/// How far back [`preceding_blocks`] looks.
const LOOK_BACK: u64 = 1 << 20;

/// The lines of assistant message `message_id` that end right before `start` (other
/// assistant messages' lines and bookkeeping in between are passed over; a user entry
/// ends the search), in file order. Looks back at most [`LOOK_BACK`] bytes; an I/O
/// error gives what was found.
fn preceding_blocks(path: &Path, start: u64, message_id: &str) -> Vec<AssistantLine> {
    let from = start.saturating_sub(LOOK_BACK);
    let mut buf = Vec::new();
    let read = crate::regular_file::open_stream(path).and_then(|f| {
        let mut f = f.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        f.seek(SeekFrom::Start(from))?;
        f.take(start - from).read_to_end(&mut buf)
    });
    if read.is_err() {
        return Vec::new();
    }
    let mut lines: Vec<&[u8]> = buf.split(|b| *b == b'\n').collect();
    if from > 0 && !lines.is_empty() {
        lines.remove(0); // cut by the window: not a whole line
    }
    let mut found = Vec::new();
    for line in lines.into_iter().rev() {
        let body = line.trim_ascii();
        if body.is_empty() {
            continue;
        }
        match parse_entry(body) {
            Ok(Entry::Assistant(a)) if a.message_id == message_id => found.push(a),
            Ok(Entry::Assistant(_)) | Ok(Entry::Skip) | Err(_) => {}
            Ok(_) => break,
        }
    }
    found.reverse();
    found
}

/// Reads the complete lines of the transcript at `path` past the saved position.
///
/// * `None` when the file does not exist.
/// * `resume = Some((identity, offset))` continues at `offset` when the file still has
///   that identity and is at least `offset` long; otherwise the file is read from 0 and
///   the chunk says `rescanned: true`.
/// * `last_turn`: the turn of the last line of the previous range; assistant lines
///   before the first user entry of this range continue it (ignored on a rescan).
/// * Only newline-terminated lines are consumed; a line still being written is read
///   again, whole, next time. Memory is bounded by the longest line and one assistant
///   message's text per turn of the range; the read stops at the length observed when
///   the file was opened.
pub fn read_chunk(
    path: &Path,
    resume: Option<(FileIdentity, u64)>,
    last_turn: Option<&str>,
) -> io::Result<Option<TranscriptChunk>> {
    let Some(mut turns) = Turns::<Acc>::open(path, resume)? else {
        return Ok(None);
    };
    let start = turns.start();
    // The turn assistant lines belong to: the running turn, a turn not yet seen in this
    // range, or none (a turn that is not the user's words).
    enum Current {
        Running,
        Carried(String),
        Dropped,
    }
    let mut current = match last_turn {
        Some(t) if start > 0 => Current::Carried(t.to_owned()),
        _ => Current::Dropped,
    };
    let mut not_user: HashSet<String> = HashSet::new();
    while let Some(entry) = turns.next_entry(parse_entry)? {
        match entry {
            Entry::Prompt {
                prompt_id,
                text,
                at_ms,
            } => {
                not_user.remove(&prompt_id);
                turns.turn(prompt_id).text.prompt_once(text, at_ms);
                current = Current::Running;
            }
            Entry::TurnContinues { prompt_id, results } => {
                current = if not_user.contains(&prompt_id) {
                    Current::Dropped
                } else {
                    let turn = turns.turn(prompt_id);
                    for r in results {
                        turn.tools.result(r.tool_use_id, r.output, r.failed);
                    }
                    Current::Running
                };
            }
            Entry::NotUserWords { prompt_id } => {
                turns.skip();
                let same = match (&current, &prompt_id) {
                    (Current::Running, Some(p)) => {
                        turns.running().is_some_and(|a| a.text.turn_id == *p)
                    }
                    (Current::Carried(t), Some(p)) => t == p,
                    _ => true,
                };
                if !same {
                    if let Some(p) = prompt_id {
                        not_user.insert(p);
                    }
                    current = Current::Dropped;
                }
            }
            Entry::Assistant(a) => match &current {
                Current::Running => {
                    if let Some(turn) = turns.running() {
                        turn.add(a);
                    }
                }
                Current::Carried(t) => {
                    let turn = turns.turn(t.clone());
                    current = Current::Running;
                    // The previous read may have ended inside this message: its earlier
                    // blocks are just before `start`.
                    for earlier in preceding_blocks(path, start, &a.message_id) {
                        turn.add(earlier);
                    }
                    turn.add(a);
                }
                Current::Dropped => turns.skip(),
            },
            Entry::Skip => turns.skip(),
        }
    }
    Ok(Some(turns.finish()))
}
