//! GitHub Copilot CLI's session log `~/.copilot/session-state/<sessionId>/events.jsonl`.
//!
//! # Context
//!
//! One event a line, `{"type":…,"data":{…},"id":…,"timestamp":…,"parentId":…}`, appended
//! as the session goes (a `--resume` appends to the same file). Copilot's hook payloads
//! carry neither a turn id nor the answer: this file is the only place the answer is.
//! Only `user.message`, `assistant.message`, `tool.execution_complete` (a tool call's result)
//! and `session.error` matter; every other type (`system.message` holds the whole system
//! prompt, `session.*`, `hook.*`, `tool.execution_start`, `assistant.turn_*`) is bookkeeping.
//! A `user.message` has the user's words in `content` (`transformedContent` adds the date and
//! injected context) and a `messageId`; every `assistant.message` names it in `originatingMessageId`.
//! `assistant.turn_start`'s `turnId` counts model calls within one user message, not user
//! turns. The final `assistant.message` is written before the `agentStop` hook fires. A
//! model call that failed for good leaves a `session.error` naming the user message and
//! no `agentStop`.
//!
//! # Rules
//!
//! | rule | where |
//! |---|---|
//! | a line starting `{"type":"<kind>"` of any other kind is skipped without being parsed | [`parse_entry`] |
//! | turn = the `user.message`'s `messageId`; prompt = its `content` (blank: no turn) | [`parse_entry`] |
//! | an `assistant.message` belongs to the turn its `originatingMessageId` names (none: the range's latest prompt); a subagent's (`parentToolCallId`) is skipped | [`parse_entry`], [`read_chunk`] |
//! | answer = the text of the turn's last `assistant.message` without `toolRequests` (blank ones ignored) | [`read_chunk`] |
//! | a turn whose latest event is a `session.error` naming it is `interrupted` (its model call failed) | [`read_chunk`] |
//! | tool calls = the `toolRequests` items of the turn's `assistant.message`s (`toolCallId`, `name`, `arguments`), each with the `tool.execution_complete` naming its `toolCallId` (`result.content`, else `error.message`; `success: false` is a failure), raw in the chunk's `tools`; a result whose request was read before the range goes there without a turn (the worker gives it to the turn that keeps its call) | [`read_chunk`] |
//! | every turn but the running one (the one the range's latest turn line named) is `superseded` | [`crate::transcript::turns`] |
//! | incremental by byte offset, resumed only on the same file identity | [`crate::transcript::tail`] |
//! | the turn an `agentStop` closes = the file's last `user.message` (read from the tail) | [`latest_prompt_id`] |

mod line;
mod reader;

pub use line::{parse_entry, AssistantLine, Entry, EntryError};
pub use reader::{latest_prompt_id, read_chunk};
