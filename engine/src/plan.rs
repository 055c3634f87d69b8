//! The capture plan of a first capture: what `ovreplay plan ROLLOUT.jsonl --json` prints.
//!
//! Pure: no network, no state. The file is read in chunks into a fresh
//! [`TurnBook`]; the last turn counts as stopped when its latest call finished (this is
//! the plan at the Stop of the last turn); `<private>` spans are removed (a message left
//! empty is dropped); nothing is truncated.

use std::io;
use std::path::Path;

use serde::Serialize;

use crate::rollout::read_chunk;
use crate::text::strip_private;
use crate::turn::{DedupKey, Role};
use crate::turnbook::TurnBook;

/// One message a capture sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedMessage {
    /// The turn id, when known.
    pub turn_id: Option<String>,
    /// User or assistant.
    pub role: Role,
    /// What is sent: injected blocks and `<private>` spans removed, not truncated.
    pub content: String,
    /// Idempotency identity (computed before `<private>` removal).
    pub key: DedupKey,
    /// The turn ended without a final answer; `content` is its last text.
    pub interrupted: bool,
}

/// The messages a first capture of the rollout at `path` sends, in order.
///
/// An absent file is an error ([`io::ErrorKind::NotFound`]).
pub fn first_capture(path: &Path) -> io::Result<Vec<PlannedMessage>> {
    let mut book = TurnBook::new();
    let mut resume = None;
    loop {
        let Some(chunk) = read_chunk(path, resume)? else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("rollout {} does not exist", path.display()),
            ));
        };
        let progressed = chunk.end > chunk.start;
        let done = !progressed || chunk.end >= chunk.file_len || chunk.rescanned;
        resume = Some((chunk.identity, chunk.end));
        book.observe_chunk(&chunk);
        if done {
            break;
        }
    }
    Ok(plan_book(book))
}

/// The plan of `book` at the Stop of its last rollout turn: that turn counts as stopped
/// when its latest call finished. Used by [`first_capture`].
pub fn plan_book(mut book: TurnBook) -> Vec<PlannedMessage> {
    let last_finished = book
        .last_rollout_turn()
        .and_then(|id| {
            book.turns()
                .iter()
                .rev()
                .find(|t| t.turn_id.as_deref() == Some(id))
        })
        .and_then(|t| {
            let r = t.rollout.as_ref()?;
            (r.finished && !r.interrupted).then(|| t.turn_id.clone())
        })
        .flatten();
    if let Some(id) = last_finished {
        book.observe_stop(Some(&id), None);
    }
    book.candidates()
        .into_iter()
        .filter_map(|c| {
            let content = strip_private(&c.content);
            (!content.is_empty()).then_some(PlannedMessage {
                turn_id: c.turn_id,
                role: c.role,
                content,
                key: c.key,
                interrupted: c.interrupted,
            })
        })
        .collect()
}

#[derive(Serialize)]
struct JsonMessage<'a> {
    turn_id: Option<&'a str>,
    role: &'static str,
    content: &'a str,
}

/// `[{"turn_id":…,"role":"user"|"assistant","content":…}, …]`, in order, compact;
/// `turn_id` is `null` when absent.
pub fn to_json(messages: &[PlannedMessage]) -> String {
    let out: Vec<JsonMessage<'_>> = messages
        .iter()
        .map(|m| JsonMessage {
            turn_id: m.turn_id.as_deref(),
            role: m.role.as_str(),
            content: &m.content,
        })
        .collect();
    serde_json::to_string(&out).unwrap_or_else(|_| "[]".to_owned())
}
