//! Gemini CLI's session file `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`.
//!
//! # Context
//!
//! One JSON record a line, appended as the session goes; a `--resume` appends to the same
//! file. Gemini's hook payloads name no turn, and the AfterAgent payload's
//! `prompt_response` is not the answer (it joins every model call's text and repeats
//! streamed chunks): this file is where the answer is. Its lines:
//!
//! * a header `{"sessionId", "projectHash", "startTime", "lastUpdated", "kind"}`, written
//!   again at every resume;
//! * message records `{"id", "timestamp", "type": "user"|"gemini", "content", …}`. A
//!   `user` record's `content` is a list of parts: text parts (the prompt, with SessionStart
//!   context prepended as `<hook_context>…</hook_context>` and BeforeAgent context as a part
//!   of its own), or `functionResponse` parts (a tool result). A `gemini` record's `content`
//!   is the whole text of one model call, and `toolCalls` lists its tool calls. A record is
//!   written again under the same `id` when it is updated (a model call gets its
//!   `toolCalls` that way);
//! * `{"$set": {…}}` patches of the header. A resume writes `{"$set": {"messages": [...]}}`
//!   with the whole history restated (without the prompts), under the same ids.
//!
//! The first `user` message, `<session_context>…`, is the CLI's own (date, OS, folder
//! listing). A turn's prompt record is written after BeforeAgent fires, its final `gemini`
//! record before AfterAgent fires.
//!
//! # Rules
//!
//! | rule | where |
//! |---|---|
//! | header and `$set` lines are skipped without being parsed: every message is read from its own record | [`parse_entry`] |
//! | turn = a `user` record with text: its `id`; prompt = its text parts, joined (injected blocks are removed downstream) | [`parse_entry`] |
//! | a `user` record of `functionResponse` parts only (a tool result) or starting `<session_context>` is no turn | [`parse_entry`] |
//! | a `gemini` record belongs to the latest prompt before it (in the range, else looked up before the range) | [`read_chunk`], [`prompt_before`] |
//! | answer = the text of the turn's latest `gemini` record without `toolCalls`; a record rewritten with `toolCalls` under the same id is not one | [`read_chunk`] |
//! | a prompt id seen again (a rescan) is the same turn, running again; every turn but the running one (the one the range's latest turn line named) is `superseded` | [`read_chunk`], [`crate::transcript::turns`] |
//! | the prompt's time = its record's `timestamp`; the answer's = that of the turn's latest record with text | [`read_chunk`] |
//! | incremental by byte offset, resumed only on the same file identity | [`crate::transcript::tail`] |
//! | the turn an AfterAgent or BeforeTool belongs to = the file's last prompt (read from the tail) | [`latest_prompt_id`] |

mod line;
mod reader;

pub use line::{parse_entry, AnswerLine, Entry, EntryError};
pub use reader::{latest_prompt_id, prompt_before, read_chunk};
