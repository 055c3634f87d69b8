//! Incremental, bounded-memory reading of a rollout file into a [`TranscriptChunk`].

use std::io;
use std::path::Path;

use crate::tool::TurnTools;
use crate::transcript::turns::{TurnState, Turns};
use crate::turn::{FileIdentity, TranscriptChunk, TurnFragment};

use super::line::{parse_line, LineFacts};

pub use crate::transcript::tail::CHUNK_LINE_BYTES;

/// One model call of a turn, after retries of the same `requestId` collapsed.
struct Call {
    request_id: Option<String>,
    facts: LineFacts,
}

/// A turn's lines within one chunk.
struct Acc {
    /// The turn id, prompt and steering, as [`TurnFragment::merge`] keeps them.
    words: TurnFragment,
    calls: Vec<Call>,
}

impl Acc {
    fn add(&mut self, facts: LineFacts) {
        // Each line is read as a fragment of its own: the first prompt wins, a later
        // user message further on in the conversation is steering.
        self.words.merge(&TurnFragment {
            trace_id: facts.trace_id.clone(),
            prompt: facts.prompt.clone(),
            prompt_at: facts.prompt_at,
            prompt_ms: facts.started_ms,
            ..TurnFragment::default()
        });
        let request_id = facts.request_id.clone();
        // A retry (same requestId) replaces the earlier attempt in place.
        if let Some(rid) = &request_id {
            if let Some(c) = self
                .calls
                .iter_mut()
                .find(|c| c.request_id.as_ref() == Some(rid) && facts.attempt >= c.facts.attempt)
            {
                c.facts = facts;
                return;
            }
        }
        self.calls.push(Call { request_id, facts });
    }
}

impl Acc {
    /// The turn's tool calls: each call's `response.toolCalls`, with the results a later
    /// call's request ends with (a result whose call is not in the range keeps an empty name:
    /// the worker names it from the call the turn keeps).
    fn tools(&self) -> TurnTools {
        let mut tools = TurnTools {
            turn_id: self.words.turn_id.clone(),
            calls: Vec::new(),
        };
        for c in &self.calls {
            for (id, output, failed) in &c.facts.tool_results {
                tools.result(id.clone(), output.clone(), *failed);
            }
            for (id, name, input) in &c.facts.tool_calls {
                tools.call(id.clone(), name.clone(), input.clone());
            }
        }
        tools
    }
}

impl TurnState for Acc {
    fn take_tools(&mut self) -> Option<TurnTools> {
        Some(self.tools())
    }

    fn new(turn_id: String) -> Acc {
        Acc {
            words: TurnFragment {
                turn_id,
                ..TurnFragment::default()
            },
            calls: Vec::new(),
        }
    }

    fn into_fragment(self, superseded: bool) -> TurnFragment {
        let nonempty = |c: &&Call| {
            c.facts
                .text
                .as_deref()
                .is_some_and(|t| !t.trim().is_empty())
        };
        let final_call = self
            .calls
            .iter()
            .rev()
            .filter(|c| c.facts.is_terminal())
            .find(nonempty);
        let last_call = self.calls.iter().rev().find(nonempty);
        let final_text = final_call.and_then(|c| c.facts.text.clone());
        let last_text = last_call.and_then(|c| c.facts.text.clone());
        let answer_ms = final_call
            .or(last_call)
            .and_then(|c| c.facts.completed_ms.or(c.facts.started_ms));
        TurnFragment {
            turn_id: self.words.turn_id,
            trace_id: self.words.trace_id,
            prompt: self.words.prompt,
            prompt_at: self.words.prompt_at,
            steering: self.words.steering,
            final_text,
            last_text,
            finished: self.calls.iter().any(|c| c.facts.is_terminal()),
            interrupted: self
                .calls
                .last()
                .is_some_and(|c| c.facts.finish_reason.is_none()),
            calls: u32::try_from(self.calls.len()).unwrap_or(u32::MAX),
            superseded,
            prompt_ms: self.words.prompt_ms,
            answer_ms,
        }
    }
}

/// Reads the complete lines of the rollout at `path` past the saved position.
///
/// * `None` when the file does not exist.
/// * `resume = Some((identity, offset))` continues at `offset` when the file still has
///   that identity and is at least `offset` long; otherwise the file is read from 0 and
///   the chunk says `rescanned: true`.
/// * Only newline-terminated lines are consumed; `end` is one past the last one, so a
///   line that ZCode is still writing is read again, whole, next time.
/// * Memory is bounded: the file is streamed through one reused line buffer, never held
///   whole or mapped, and a line over [`crate::transcript::tail::MAX_LINE_BYTES`] is
///   skipped unread and counted as a bad line ([`crate::transcript::tail::Tail`]).
/// * The read stops at the length observed when the file was opened, so a file that
///   grows meanwhile gives a well-defined chunk, and after the line that takes it to
///   [`CHUNK_LINE_BYTES`]: `end < file_len` then says there is more to read from `end`.
pub fn read_chunk(
    path: &Path,
    resume: Option<(FileIdentity, u64)>,
) -> io::Result<Option<TranscriptChunk>> {
    let Some(mut turns) = Turns::<Acc>::open(path, resume)? else {
        return Ok(None);
    };
    // Every line's last user message is decoded: after the prompt, it is steering.
    while let Some(line) = turns.next_entry(parse_line)? {
        match line {
            Some(facts) => turns.turn(facts.turn_id.clone()).add(facts),
            None => turns.skip(),
        }
    }
    Ok(Some(turns.finish()))
}
