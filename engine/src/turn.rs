//! Shared vocabulary of capture: roles, dedup keys, transcript fragments, candidates.
//!
//! These types sit between the transcript readers of [`crate::transcript`] (which produce
//! [`TranscriptChunk`]s), the [`crate::turnbook::TurnBook`] (which merges transcript
//! fragments with hook payloads into turns) and the projector (which journals
//! what was planned and sent). They are harness-agnostic: nothing here knows
//! about any agent's wire format.

use serde::{Deserialize, Serialize};

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Role {
    /// The human's prompt.
    User,
    /// The agent's final answer.
    Assistant,
}

impl Role {
    /// The wire name used by OpenViking (`"user"` / `"assistant"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    /// The message's kind in OpenViking's taxonomy (`message_kind`): a user message is the
    /// user's query (`user_query`, never a tool result), an assistant message one answer of
    /// the agent (`assistant_step`). The server groups a session into turns by it.
    pub fn message_kind(self) -> &'static str {
        match self {
            Role::User => "user_query",
            Role::Assistant => "assistant_step",
        }
    }
}

/// The idempotency identity of one message.
///
/// `turn:<turnId>:<role>` when the turn id is known; otherwise
/// `hash:<role>:<xxh3-64 hex of the raw text>`. The key is computed on the raw
/// (cleaned, untruncated) text, so changing `capture.max_length` never changes it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DedupKey(pub String);

impl DedupKey {
    /// Key of a message whose turn id is known.
    pub fn for_turn(turn_id: &str, role: Role) -> DedupKey {
        DedupKey(format!("turn:{turn_id}:{}", role.as_str()))
    }

    /// Key of a message with no turn id: a content hash of the raw text.
    pub fn for_content(role: Role, raw: &str) -> DedupKey {
        let h = xxhash_rust::xxh3::xxh3_64(raw.as_bytes());
        DedupKey(format!("hash:{}:{h:016x}", role.as_str()))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for DedupKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Identity of a file on disk: a transcript that was replaced (rotated, rewritten)
/// has a different identity even at the same path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct FileIdentity {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

/// What one read of a transcript range says about one turn.
///
/// Fragments of the same turn from successive reads are merged by
/// [`TurnFragment::merge`]: the first known prompt wins, a later final answer
/// replaces an earlier one (a retry or the next call of a tool loop).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TurnFragment {
    /// `turnId` of the lines, else their `traceId`.
    pub turn_id: String,
    /// `traceId` of the lines, when they have one (a hook payload without a `turnId`
    /// names its turn by it).
    pub trace_id: Option<String>,
    /// The turn's real prompt (injected blocks removed), when a line of this range
    /// carried it. `None` when only a `tail` window without the prompt was seen.
    pub prompt: Option<String>,
    /// Where the prompt sits in the conversation (index of its message, windows placed
    /// by `messageOffset`), when known.
    pub prompt_at: Option<u64>,
    /// What the user typed into the running turn (steering), as their words, in
    /// conversation order, each with the index of its message.
    pub steering: Vec<(u64, String)>,
    /// Text of the latest call that ended the turn (a `finishReason` other than `tool-calls`).
    pub final_text: Option<String>,
    /// Latest non-empty response text of any call (used for an interrupted turn).
    pub last_text: Option<String>,
    /// A call with a terminal `finishReason` was seen.
    pub finished: bool,
    /// The latest call of this range had no `finishReason` (killed, timed out).
    pub interrupted: bool,
    /// Distinct model calls (retries of one `requestId` count once).
    pub calls: u32,
    /// A line of a *different* turn followed this turn's lines in the file, so
    /// this turn is over even if its Stop never came.
    pub superseded: bool,
    /// When the transcript says the prompt was sent (ms since the epoch): the time of the
    /// entry that gave [`TurnFragment::prompt`] (ZCode: `startedAt` of its line).
    pub prompt_ms: Option<u64>,
    /// When the transcript says the turn's latest answer text was written (ms since the
    /// epoch; ZCode: `completedAt` of the call, else its `startedAt`).
    pub answer_ms: Option<u64>,
}

impl TurnFragment {
    /// Folds a later fragment of the same turn into this one.
    pub fn merge(&mut self, later: &TurnFragment) {
        match (self.prompt_at, later.prompt_at, &later.prompt) {
            _ if self.prompt.is_none() => {
                self.prompt.clone_from(&later.prompt);
                self.prompt_at = later.prompt_at;
                self.prompt_ms = later.prompt_ms;
            }
            // A later read whose last user message sits after this turn's prompt: the
            // user typed it into the running turn.
            (Some(mine), Some(at), Some(p)) if at > mine => self.add_steering(at, p),
            _ => {}
        }
        for (at, s) in &later.steering {
            self.add_steering(*at, s);
        }
        if self.trace_id.is_none() {
            self.trace_id.clone_from(&later.trace_id);
        }
        if later.final_text.is_some() {
            self.final_text.clone_from(&later.final_text);
        }
        if later.last_text.is_some() {
            self.last_text.clone_from(&later.last_text);
        }
        if later.answer_ms.is_some() && (later.final_text.is_some() || later.last_text.is_some()) {
            self.answer_ms = later.answer_ms;
        }
        self.finished |= later.finished;
        if later.calls > 0 {
            self.interrupted = later.interrupted;
        }
        self.calls = self.calls.saturating_add(later.calls);
        self.superseded |= later.superseded;
    }
}

impl TurnFragment {
    /// Records a steering message at conversation index `at` (once per index; kept in
    /// conversation order; never at or before the prompt).
    pub fn add_steering(&mut self, at: u64, words: &str) {
        if self.prompt_at.is_some_and(|p| at <= p) || self.steering.iter().any(|(i, _)| *i == at) {
            return;
        }
        let pos = self.steering.partition_point(|(i, _)| *i < at);
        self.steering.insert(pos, (at, words.to_owned()));
    }
}

/// The result of reading one byte range of a transcript file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TranscriptChunk {
    /// Identity of the file that was read.
    pub identity: FileIdentity,
    /// First byte read (0 after a rescan).
    pub start: u64,
    /// One past the last byte of the last *complete* line consumed.
    pub end: u64,
    /// File length observed when reading.
    pub file_len: u64,
    /// True when the saved position did not apply (new file, rotated, truncated) and the
    /// file was read from the start.
    pub rescanned: bool,
    /// Fragments in file order of their first line.
    pub fragments: Vec<TurnFragment>,
    /// Lines ignored on purpose (e.g. a rollout's lines that are not `model_io` of the main
    /// turn, a transcript's entries that are not conversation).
    pub skipped_lines: u32,
    /// Complete lines that were not valid JSON or lacked the needed fields.
    pub bad_lines: u32,
    /// The tool calls of the range's turns, raw (readers that know them: Claude Code). Never
    /// serialized: the worker passes them through [`crate::tool::ToolCall::capture`] and
    /// journals what that keeps, only with `capture.tools` on.
    #[serde(skip)]
    pub tools: Vec<crate::tool::TurnTools>,
}

/// A message that is ready to be planned: its turn is complete and its content known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// Idempotency identity.
    pub key: DedupKey,
    /// The turn id, when known.
    pub turn_id: Option<String>,
    /// User or assistant.
    pub role: Role,
    /// Raw content: injected blocks removed, nothing truncated, `<private>` not yet removed.
    pub content: String,
    /// The turn ended without a final answer; `content` is what it had.
    pub interrupted: bool,
    /// When the message was written (ms since the epoch), when known: the hook's time,
    /// else the transcript's ([`crate::turnbook`] says which).
    pub created_at_ms: Option<u64>,
}
