//! The turn accumulator every transcript reader fills: one range of lines, read through
//! [`Tail`], becomes one [`TranscriptChunk`] of turn fragments.
//!
//! A reader supplies what is its own: how a line parses into an entry, which turn an entry
//! belongs to, and what a turn keeps while its lines arrive (a [`TurnState`]: most readers
//! use [`TurnText`], the prompt and the answer texts). The rest is here, once:
//!
//! | rule | where |
//! |---|---|
//! | a blank line is skipped on purpose; a line the reader cannot parse is a bad line (logged by position and the error's shape, never its text) | [`Turns::next_entry`] |
//! | a turn is found by its id, else appended: fragments are in file order of their turn's first line | [`Turns::turn`] |
//! | the running turn is the one the latest [`Turns::turn`] named; every other turn of the range is `superseded` (a later turn's line followed it) | [`Turns::finish`] |
//! | the first prompt of a turn wins; an answer text is trimmed, a blank one is no answer; a terminal call's text is the final answer, any call's the latest text | [`TurnText`] |
//! | texts over the message limit travel as their stand-ins | [`TurnText::into_fragment`] |

use std::collections::HashMap;
use std::fmt::Display;
use std::io;
use std::path::{Path, PathBuf};

use crate::transcript::tail::Tail;
use crate::turn::{FileIdentity, TranscriptChunk, TurnFragment};

/// What a reader keeps of one turn while its lines arrive.
pub trait TurnState {
    /// A turn first seen under `turn_id`.
    fn new(turn_id: String) -> Self;
    /// The turn's fragment once the range is read; `superseded` when it is not the running
    /// turn.
    fn into_fragment(self, superseded: bool) -> TurnFragment;
    /// The turn's tool calls, raw, for readers that collect them (taken before
    /// [`TurnState::into_fragment`]).
    fn take_tools(&mut self) -> Option<crate::tool::TurnTools> {
        None
    }
}

/// The prompt and answer of one turn, as most transcripts give them: each model call
/// collapses into the answer fields at once, so memory per turn is its prompt and two texts.
#[derive(Debug, Default)]
pub struct TurnText {
    /// The turn's id.
    pub turn_id: String,
    /// The user's words that started the turn.
    pub prompt: Option<String>,
    /// When the prompt was written.
    pub prompt_ms: Option<u64>,
    /// When the latest answer text was written.
    pub answer_ms: Option<u64>,
    /// The text of the latest terminal call (no tool call follows it).
    pub final_text: Option<String>,
    /// The text of the latest call that had any.
    pub last_text: Option<String>,
    /// The latest model call failed.
    pub interrupted: bool,
    /// Model calls seen.
    pub calls: u32,
}

impl TurnText {
    /// The turn's prompt and its time, unless it has one already (a rescan's repeat, or
    /// the same turn named again).
    pub fn prompt_once(&mut self, text: String, at_ms: Option<u64>) {
        if self.prompt.is_none() {
            self.prompt = Some(text);
            self.prompt_ms = at_ms;
        }
    }

    /// One more model call.
    pub fn call(&mut self) {
        self.calls = self.calls.saturating_add(1);
    }

    /// A model call's text, written at `at_ms`: the latest text, and the final answer when
    /// the call is `terminal`. Trimmed; a blank text changes nothing.
    pub fn answer(&mut self, text: &str, at_ms: Option<u64>, terminal: bool) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        self.answer_ms = at_ms.or(self.answer_ms);
        if terminal {
            self.final_text = Some(text.to_owned());
        }
        self.last_text = Some(text.to_owned());
    }
}

impl TurnState for TurnText {
    fn new(turn_id: String) -> TurnText {
        TurnText {
            turn_id,
            ..TurnText::default()
        }
    }

    fn into_fragment(self, superseded: bool) -> TurnFragment {
        TurnFragment {
            finished: self.final_text.is_some(),
            turn_id: self.turn_id,
            // Texts over the message limit travel as their stand-ins.
            prompt: self.prompt.map(crate::text::oversized::bounded),
            final_text: self.final_text.map(crate::text::oversized::bounded),
            last_text: self.last_text.map(crate::text::oversized::bounded),
            interrupted: self.interrupted,
            calls: self.calls,
            superseded,
            prompt_ms: self.prompt_ms,
            answer_ms: self.answer_ms,
            ..TurnFragment::default()
        }
    }
}

/// One range of a transcript being read into turns.
pub struct Turns<T> {
    path: PathBuf,
    tail: Tail,
    turns: Vec<T>,
    index: HashMap<String, usize>,
    running: Option<usize>,
    skipped: u32,
    bad: u32,
}

impl<T: TurnState> Turns<T> {
    /// Opens `path` for reading past `resume` ([`Tail::open`]); `None` when the file does
    /// not exist.
    pub fn open(path: &Path, resume: Option<(FileIdentity, u64)>) -> io::Result<Option<Turns<T>>> {
        Ok(Tail::open(path, resume)?.map(|tail| Turns {
            path: path.to_owned(),
            tail,
            turns: Vec::new(),
            index: HashMap::new(),
            running: None,
            skipped: 0,
            bad: 0,
        }))
    }

    /// The first byte of the range (0 after a rescan).
    pub fn start(&self) -> u64 {
        self.tail.chunk.start
    }

    /// The next line parsed by `parse`; `None` at the end of the range. Blank lines are
    /// skipped and counted; a line `parse` refuses is counted as bad and logged by its
    /// offset and the error (whose text must not quote the line).
    pub fn next_entry<E, Er: Display>(
        &mut self,
        mut parse: impl FnMut(&[u8]) -> Result<E, Er>,
    ) -> io::Result<Option<E>> {
        while let Some((at, body)) = self.tail.next_line()? {
            if body.is_empty() {
                self.skipped = self.skipped.saturating_add(1);
                continue;
            }
            match parse(body) {
                Ok(entry) => return Ok(Some(entry)),
                Err(e) => {
                    log::debug!(
                        "transcript {}: bad line at byte {at}: {e}",
                        self.path.display()
                    );
                    self.bad = self.bad.saturating_add(1);
                }
            }
        }
        Ok(None)
    }

    /// Counts a line ignored on purpose (not conversation, or no turn to put it in).
    pub fn skip(&mut self) {
        self.skipped = self.skipped.saturating_add(1);
    }

    /// The turn `turn_id`, appended when the range has not named it yet; it becomes the
    /// running turn.
    pub fn turn(&mut self, turn_id: String) -> &mut T {
        let i = match self.index.get(&turn_id) {
            Some(&i) => i,
            None => {
                self.index.insert(turn_id.clone(), self.turns.len());
                self.turns.push(T::new(turn_id));
                self.turns.len() - 1
            }
        };
        self.running = Some(i);
        // NOTE: `index` holds only positions of `turns`, which never shrinks.
        #[expect(
            clippy::indexing_slicing,
            reason = "`i` was found in `index` or just appended"
        )]
        &mut self.turns[i]
    }

    /// The running turn, if the range named one.
    pub fn running(&mut self) -> Option<&mut T> {
        self.turns.get_mut(self.running?)
    }

    /// The chunk: the range read, its line counts and one fragment per turn.
    pub fn finish(self) -> TranscriptChunk {
        let mut chunk = self.tail.chunk;
        chunk.skipped_lines = chunk.skipped_lines.saturating_add(self.skipped);
        chunk.bad_lines = chunk.bad_lines.saturating_add(self.bad);
        let running = self.running;
        chunk.fragments = self
            .turns
            .into_iter()
            .enumerate()
            .map(|(i, mut t)| {
                if let Some(tools) = t.take_tools().filter(|t| !t.calls.is_empty()) {
                    chunk.tools.push(tools);
                }
                t.into_fragment(Some(i) != running)
            })
            .collect();
        chunk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[u8]) -> Result<(String, Option<String>), &'static str> {
        let s = std::str::from_utf8(line).map_err(|_| "not UTF-8")?;
        match s.split_once(' ') {
            Some(("prompt", id)) => Ok((id.to_owned(), None)),
            Some(("answer", rest)) => {
                let (id, text) = rest.split_once(' ').ok_or("no text")?;
                Ok((id.to_owned(), Some(text.to_owned())))
            }
            Some(("skip", _)) => Ok((String::new(), None)),
            _ => Err("unknown line"),
        }
    }

    #[test]
    fn turns_in_first_line_order_and_only_the_running_one_open() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("t.jsonl");
        let lines = "prompt a\n\nanswer a  first  \nprompt b\ngarbage\nskip x\nanswer b second\n\
                     answer a late\npartial";
        std::fs::write(&path, lines).expect("write");
        let mut turns = Turns::<TurnText>::open(&path, None)
            .expect("open")
            .expect("exists");
        while let Some((id, text)) = turns.next_entry(parse).expect("read") {
            if id.is_empty() {
                turns.skip();
                continue;
            }
            let turn = turns.turn(id.clone());
            match text {
                None => turn.prompt_once(format!("words of {id}"), Some(1)),
                Some(t) => {
                    turn.call();
                    turn.answer(&t, Some(2), true);
                }
            }
        }
        let chunk = turns.finish();
        // The blank line and `skip x`; `garbage` is bad; `partial` is still being written.
        assert_eq!((chunk.skipped_lines, chunk.bad_lines), (2, 1));
        assert_eq!(chunk.end, lines.rfind('\n').map_or(0, |i| i as u64 + 1));
        let got: Vec<_> = chunk
            .fragments
            .iter()
            .map(|f| {
                (
                    f.turn_id.as_str(),
                    f.prompt.as_deref(),
                    f.final_text.as_deref(),
                    f.calls,
                    f.superseded,
                )
            })
            .collect();
        // `a` was named last: it runs, `b` is superseded.
        assert_eq!(
            got,
            [
                ("a", Some("words of a"), Some("late"), 2, false),
                ("b", Some("words of b"), Some("second"), 1, true),
            ]
        );
    }

    #[test]
    fn the_first_prompt_wins_and_only_terminal_text_is_final() {
        let mut t = TurnText::new("t".into());
        t.prompt_once("first".into(), Some(1));
        t.prompt_once("again".into(), Some(2));
        t.answer("  calling a tool ", Some(3), false);
        t.answer(" \n ", Some(4), true);
        assert_eq!((t.prompt.as_deref(), t.prompt_ms), (Some("first"), Some(1)));
        let f = t.into_fragment(false);
        assert_eq!(
            (
                f.final_text,
                f.last_text.as_deref(),
                f.finished,
                f.answer_ms
            ),
            (None, Some("calling a tool"), false, Some(3))
        );
    }
}
