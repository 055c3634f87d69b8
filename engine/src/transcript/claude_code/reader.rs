//! Incremental, bounded-memory reading of a transcript into a [`TranscriptChunk`].

use std::collections::HashSet;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use crate::transcript::tail::Tail;
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

/// A turn's lines within one range. Finished messages collapse into the
/// answer fields at once: memory per turn is one message's text.
struct Acc {
    turn_id: String,
    prompt: Option<String>,
    prompt_ms: Option<u64>,
    answer_ms: Option<u64>,
    current: Option<Message>,
    final_text: Option<String>,
    last_text: Option<String>,
    last_failed: bool,
    calls: u32,
}

impl Acc {
    fn new(turn_id: String) -> Acc {
        Acc {
            turn_id,
            prompt: None,
            prompt_ms: None,
            answer_ms: None,
            current: None,
            final_text: None,
            last_text: None,
            last_failed: false,
            calls: 0,
        }
    }

    fn add(&mut self, line: AssistantLine) {
        if self
            .current
            .as_ref()
            .is_some_and(|m| m.id != line.message_id)
        {
            self.close_message();
        }
        let msg = self.current.get_or_insert_with(|| {
            self.calls = self.calls.saturating_add(1);
            Message::new(line.message_id.clone())
        });
        msg.add(line);
    }

    fn close_message(&mut self) {
        let Some(msg) = self.current.take() else {
            return;
        };
        self.last_failed = msg.api_error;
        if msg.api_error {
            return;
        }
        let terminal = !msg.tool_use;
        let at_ms = msg.at_ms;
        if let Some(text) = msg.text() {
            self.answer_ms = at_ms.or(self.answer_ms);
            if terminal {
                self.final_text = Some(text.clone());
            }
            self.last_text = Some(text);
        }
    }

    fn into_fragment(mut self, superseded: bool) -> TurnFragment {
        self.close_message();
        TurnFragment {
            finished: self.final_text.is_some(),
            turn_id: self.turn_id,
            // Texts over the message limit travel as their stand-ins.
            prompt: self.prompt.map(crate::text::oversized::bounded),
            final_text: self.final_text.map(crate::text::oversized::bounded),
            last_text: self.last_text.map(crate::text::oversized::bounded),
            interrupted: self.last_failed,
            calls: self.calls,
            superseded,
            prompt_ms: self.prompt_ms,
            answer_ms: self.answer_ms,
            ..TurnFragment::default()
        }
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
    let Some(mut tail) = Tail::open(path, resume)? else {
        return Ok(None);
    };
    let start = tail.chunk.start;
    let mut accs: Vec<Acc> = Vec::new();
    // The turn assistant lines belong to: an index into `accs`, a turn not yet
    // seen in this range, or none (a turn that is not the user's words).
    enum Current {
        Acc(usize),
        Carried(String),
        Dropped,
    }
    let mut current = match last_turn {
        Some(t) if start > 0 => Current::Carried(t.to_owned()),
        _ => Current::Dropped,
    };
    let mut not_user: HashSet<String> = HashSet::new();
    let mut skipped = 0u32;
    let mut bad = 0u32;
    let find = |accs: &[Acc], id: &str| accs.iter().rposition(|a| a.turn_id == id);
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
        let turn_of = |accs: &mut Vec<Acc>, id: String| match find(accs, &id) {
            Some(i) => i,
            None => {
                accs.push(Acc::new(id));
                accs.len() - 1
            }
        };
        match entry {
            Entry::Prompt {
                prompt_id,
                text,
                at_ms,
            } => {
                not_user.remove(&prompt_id);
                let i = turn_of(&mut accs, prompt_id);
                if let Some(acc) = accs.get_mut(i) {
                    if acc.prompt.is_none() {
                        acc.prompt = Some(text);
                        acc.prompt_ms = at_ms;
                    }
                }
                current = Current::Acc(i);
            }
            Entry::TurnContinues { prompt_id } => {
                current = if not_user.contains(&prompt_id) {
                    Current::Dropped
                } else {
                    Current::Acc(turn_of(&mut accs, prompt_id))
                };
            }
            Entry::NotUserWords { prompt_id } => {
                skipped += 1;
                let same = match (&current, &prompt_id) {
                    (Current::Acc(i), Some(p)) => accs.get(*i).is_some_and(|a| a.turn_id == *p),
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
            Entry::Assistant(a) => {
                let i = match &current {
                    Current::Acc(i) => *i,
                    Current::Carried(t) => {
                        let i = turn_of(&mut accs, t.clone());
                        current = Current::Acc(i);
                        // The previous read may have ended inside this message:
                        // its earlier blocks are just before `start`.
                        if let Some(acc) = accs.get_mut(i) {
                            for earlier in preceding_blocks(path, start, &a.message_id) {
                                acc.add(earlier);
                            }
                        }
                        i
                    }
                    Current::Dropped => {
                        skipped += 1;
                        continue;
                    }
                };
                if let Some(acc) = accs.get_mut(i) {
                    acc.add(a);
                }
            }
            Entry::Skip => skipped += 1,
        }
    }
    // Every turn but the last one to receive a line was followed by another turn's line.
    let mut chunk = tail.chunk;
    chunk.skipped_lines = chunk.skipped_lines.saturating_add(skipped);
    chunk.bad_lines = chunk.bad_lines.saturating_add(bad);
    let last = accs.len().checked_sub(1);
    chunk.fragments = accs
        .into_iter()
        .enumerate()
        .map(|(i, acc)| acc.into_fragment(Some(i) != last))
        .collect();
    Ok(Some(chunk))
}
