//! Claude Code's session transcript `~/.claude/projects/<project>/<sessionId>.jsonl`.
//!
//! # Context
//!
//! One JSON object per line, appended as the session goes (a `--resume` appends to the
//! same file). Only `user` and `assistant` lines are conversation; every other `type`
//! (`attachment`, `system`, `queue-operation`, `api-request*`, `last-prompt`, …) is
//! bookkeeping, holds most of the bytes (lines of tens of KB) and new kinds appear across
//! versions. A user entry carries the turn's `promptId` (the hooks' `prompt_id`); an
//! assistant message is written as one line per content block, all sharing `message.id`,
//! ordered by `apiBlockIndex`, with no `promptId`. The final answer's lines are written
//! before the Stop hook fires.
//!
//! # Rules
//!
//! | rule | where |
//! |---|---|
//! | lines without `"type":"user"` or `"type":"assistant"` are skipped without being parsed | [`parse_entry`] |
//! | sidechain entries (`isSidechain`, subagents) are skipped: a subagent is captured from its SubagentStop hook ([`crate::subagent`]), its task from its own transcript ([`subagent_task`]) | [`parse_entry`] |
//! | turn = the user entry's `promptId`; assistant lines belong to the turn of the user entry before them (the previous read's last turn at the start of a range) | [`read_chunk`] |
//! | prompt = the turn's main-chain user entry with string content that is the user's words: not a task notification (`origin.kind`, `promptSource:"system"`), a compaction summary (`isCompactSummary`), `isMeta`, or a local command (`<command-name>`, `<local-command-stdout>`, …) | [`parse_entry`] |
//! | a user entry that is not the user's words under a new `promptId` starts a turn that is not captured: the assistant lines after it are dropped | [`read_chunk`] |
//! | answer = the last message (by `message.id`) whose `stop_reason` is not `tool_use`, that has no `tool_use` block and is not an API error (`isApiErrorMessage`), all its text blocks in `apiBlockIndex` order, joined by a blank line | [`read_chunk`] |
//! | a turn whose latest message is an API error is `interrupted` (its model call failed) | [`read_chunk`] |
//! | tool calls = the turn's `tool_use` blocks (`id`, `name`, `input`), each with the `tool_result` block of a later user entry whose `tool_use_id` is its id (`content`: a string, or the text of its `text` blocks; `is_error`), raw in the chunk's `tools` | [`read_chunk`], [`crate::tool::TurnTools`] |
//! | every turn but the running one (the one the range's latest turn line named) is `superseded` | [`crate::transcript::turns`] |
//! | resume only on the same (dev, inode) and a size ≥ the offset, else rescan from 0 | [`read_chunk`] |
//!
//! A range may end between a user entry that is not the user's words and the assistant
//! lines after it (a read in the middle of a task notification's reply); those lines then
//! continue the previous turn, whose answer is normally planned already by then.

mod line;
mod reader;
mod task;

pub use line::{parse_entry, AssistantLine, Entry, EntryError, ToolResult, ToolUse};
pub use reader::read_chunk;
pub use task::{subagent_task, TASK_READ_BYTES};

/// The project folder name Claude Code gives a working directory (its transcripts are under
/// `projects/<name>/`): every character other than an ASCII letter or digit becomes `-`.
pub fn project_dir_name(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}
