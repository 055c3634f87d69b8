//! ZCode's rollout file `~/.zcode/cli/rollout/model-io-<sessionId>.jsonl`.
//!
//! # Context
//!
//! One line per model API call, not per turn (`docs/zcode-hooks.md`). A tool-using turn
//! writes several lines sharing a `turnId`, each repeating the whole conversation in
//! `request.messages`; a retry repeats a `requestId` with `attempt` > 1; `querySource`
//! other than `main_turn` (titles, subagents) is not conversation; `messagesKind:"tail"`
//! carries only a recent window, which may start after the prompt; an interrupted call
//! has no `finishReason`; the last line may be incomplete while ZCode writes it. Files
//! reach gigabytes.
//!
//! # Design
//!
//! ```text
//!  file ──► read_chunk(path, resume) ──► TranscriptChunk { identity, start, end, fragments… }
//!            │ streams complete lines        one TurnFragment per turn, in file order
//!            ▼
//!           parse_line(&[u8]) ──► LineFacts (turn, request, attempt, prompt, finish, text)
//! ```
//!
//! | rule | where |
//! |---|---|
//! | keep `type:"model_io"` of the main conversation: `querySource` `main_turn`, or absent unless `model.role` is `subagent`/`compact` or the system prompt asks for a session title | [`parse_line`] |
//! | turn = `turnId`, else `traceId` | [`parse_line`] |
//! | a line's user words = its last user message holding the user's words ([`crate::text::classify_user`]), placed in the conversation by `messageOffset` (`tail`, `delta`); a task notification stops the search | [`parse_line`] |
//! | prompt = the first line of the turn carrying user words; a later line's user words further on in the conversation are steering | [`read_chunk`], [`crate::turn::TurnFragment::merge`] |
//! | same `requestId` again replaces the earlier attempt | [`read_chunk`] |
//! | final answer = text of the latest call with a terminal `finishReason` (present, not `tool-calls`) | [`read_chunk`] |
//! | tool calls = each call's `response.toolCalls` (`id`, `name`, `input`; a replaced attempt's are dropped with it), each with the `role:"tool"` message naming its id (`toolCallId`, content, `isError`) among those a later call's `request.messages` ends with, raw in the chunk's `tools` | [`parse_line`], [`read_chunk`] |
//! | every turn but the running one (the one the range's latest turn line named) is `superseded` | [`crate::transcript::turns`] |
//! | resume only on the same (dev, inode) and a size ≥ the offset, else rescan from 0 | [`read_chunk`] |

mod line;
mod reader;

pub use line::{parse_line, LineError, LineFacts};
pub use reader::{read_chunk, CHUNK_LINE_BYTES};
