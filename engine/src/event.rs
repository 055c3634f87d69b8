//! The events of a session journal.
//!
//! Events record what happened — a hook was received, a rollout range was read,
//! messages were planned, a send started, the server answered — never a
//! conclusion drawn from them. Every conclusion (what is acknowledged, what is
//! in doubt, where the cursor is) is the projector's fold of these events, so a
//! fix to the projector re-derives the state of every existing journal.
//!
//! # Versioning
//!
//! The codec ([`crate::codec`]) prefixes each encoded event with a version
//! byte. The current version is these types as they are; a variant is only ever
//! added at the end of an enum, and a change to an existing variant's fields
//! creates a new codec version with a frozen copy of the old shape and a
//! conversion from it (`codec/v1.rs`).

use serde::{Deserialize, Serialize};

use crate::turn::{DedupKey, Role, TranscriptChunk};

/// One journal record: an event with when and by whom it was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// Wall-clock time of the write, milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Process id of the writer.
    pub pid: u32,
    /// What happened.
    pub event: Event,
}

/// Which hook fired. Harness-neutral names; the harness's own name for the
/// event is in [`HookReceived::harness`] and the wire module that parsed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum HookKind {
    /// A session started or resumed.
    SessionStart,
    /// The user submitted a prompt.
    PromptSubmit,
    /// The agent is about to use a tool.
    PreToolUse,
    /// The agent finished its turn.
    Stop,
    /// The session ended (the agent process is exiting).
    SessionEnd,
    /// The agent is about to compact (summarise) its context: its worker sends and commits
    /// what the session holds before the hook returns.
    PreCompact,
    /// A subagent the agent spawned finished (its turn is [`Event::SubagentTurn`]).
    SubagentStop,
}

impl HookKind {
    /// A short stable name (`session-start`, `prompt-submit`, `pre-tool-use`, `stop`).
    pub fn as_str(self) -> &'static str {
        match self {
            HookKind::SessionStart => "session-start",
            HookKind::PromptSubmit => "prompt-submit",
            HookKind::PreToolUse => "pre-tool-use",
            HookKind::Stop => "stop",
            HookKind::SessionEnd => "session-end",
            HookKind::PreCompact => "pre-compact",
            HookKind::SubagentStop => "subagent-stop",
        }
    }
}

/// A hook invocation as received: the payload fields ovhook uses.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HookReceived {
    /// Which hook.
    pub kind: Option<HookKind>,
    /// Which harness sent it (`"zcode"`).
    pub harness: String,
    /// The native session id, as resolved (payload, else fallbacks).
    pub session_id: Option<String>,
    /// The payload's turn id.
    pub turn_id: Option<String>,
    /// The payload's trace id.
    pub trace_id: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// UserPromptSubmit: the prompt, verbatim but for the privacy rule ([`crate::privacy`]).
    pub prompt: Option<String>,
    /// Stop: the final answer (`responseText`), verbatim but for the privacy rule.
    pub response_text: Option<String>,
    /// Stop: `responsePreview`, a truncated preview of the answer, verbatim but for the privacy
    /// rule. Used only
    /// when neither `responseText` nor the rollout gives the answer.
    pub response_preview: Option<String>,
    /// SessionStart: `startup | resume | clear | compact`; PreCompact: its trigger (`manual`,
    /// `auto`: one short word).
    pub source: Option<String>,
    /// PreToolUse: the tool name.
    pub tool_name: Option<String>,
    /// PreToolUse: the `viking://` URI that was denied, if any.
    pub denied_uri: Option<String>,
    /// Stop: the payload's `toolCallCount`.
    pub tool_call_count: Option<u64>,
    /// Size of the raw payload in bytes.
    pub raw_len: u64,
    /// Why the payload could not be fully used (malformed JSON, not UTF-8,
    /// wrong types, too large); the hook passed through.
    pub malformed: Option<String>,
}

impl HookReceived {
    /// The id this hook names its turn by ([`hook_turn`]).
    pub fn turn(&self) -> Option<&str> {
        hook_turn(self.turn_id.as_deref(), self.trace_id.as_deref())
    }
}

/// The id a hook names its turn by: its payload's turn id, else its trace id (a harness that
/// gives no turn id names the turn by its trace); `None` when it gives neither. The one rule:
/// the projector's turns, a refusal's turn and the turn of redaction counts all use it.
pub fn hook_turn<'a>(turn_id: Option<&'a str>, trace_id: Option<&'a str>) -> Option<&'a str> {
    turn_id.or(trace_id)
}

/// A message as planned for sending: exactly what will be sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedMessage {
    /// Idempotency identity (computed on the raw text).
    pub key: DedupKey,
    /// The turn id, when known.
    pub turn_id: Option<String>,
    /// User or assistant.
    pub role: Role,
    /// The content to send: the built-in privacy rule applied ([`crate::privacy::builtin`]),
    /// truncated to `capture.max_length`.
    pub content: String,
    /// Length in bytes of the raw text before truncation.
    pub raw_len: u64,
    /// The turn ended without a final answer.
    pub interrupted: bool,
    /// When the message was written (ms since the epoch: the hook's or the transcript's
    /// time, see [`crate::turnbook`]); sent as its `created_at`. `None` when unknown (the
    /// server then stamps it when it arrives).
    pub created_at_ms: Option<u64>,
}

/// Why a worker (or a drain) ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WorkerReason {
    /// Spawned by a Stop hook.
    Stop,
    /// Spawned by SessionStart, or `ovhook drain`: open turns count as over.
    Drain,
    /// A Stop worker, after its own session, sending another session's unsent
    /// work (nothing forced, back-off respected).
    Sweep,
    /// Spawned by SessionEnd: open turns count as over and the session is
    /// committed.
    SessionEnd,
    /// The drain of a session that is being resumed: open turns count as over,
    /// but the commit waits for its usual threshold (a resume is no reason to
    /// commit).
    Resume,
    /// Run inside a PreCompact hook, bounded by its budget: what is complete is sent and
    /// the session committed before the agent compacts its context; open turns stay open
    /// (the turn in progress goes on after the compaction).
    PreCompact,
}

impl WorkerReason {
    /// The agent has just ended a turn or the session: its transcript may still owe what the
    /// hook named (an agent that writes its transcript after its hooks run), so the worker
    /// waits for it, bounded ([`crate::delivery::TRANSCRIPT_LAG_WAIT`]).
    pub fn awaits_transcript(self) -> bool {
        matches!(self, WorkerReason::Stop | WorkerReason::SessionEnd)
    }

    /// Open turns count as over (`OpenTurnsClosed` is journaled first).
    pub fn closes_open_turns(self) -> bool {
        matches!(
            self,
            WorkerReason::Drain | WorkerReason::SessionEnd | WorkerReason::Resume
        )
    }

    /// Whatever is acknowledged and uncommitted is committed, threshold or not.
    pub fn forces_commit(self) -> bool {
        matches!(
            self,
            WorkerReason::Drain | WorkerReason::SessionEnd | WorkerReason::PreCompact
        )
    }

    /// The server is tried even inside the unreachable back-off window (not by a Stop's
    /// worker, nor inside a PreCompact hook, which the agent waits for).
    pub fn ignores_backoff(self) -> bool {
        !matches!(self, WorkerReason::Stop | WorkerReason::PreCompact)
    }

    /// A short stable name (`stop`, `drain`, `sweep`, `session-end`, `resume`, `pre-compact`).
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerReason::Stop => "stop",
            WorkerReason::Drain => "drain",
            WorkerReason::Sweep => "sweep",
            WorkerReason::SessionEnd => "session-end",
            WorkerReason::Resume => "resume",
            WorkerReason::PreCompact => "pre-compact",
        }
    }
}

/// Events of a session journal. Append-only: new variants go at the end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Event {
    /// A hook invocation was received.
    HookReceived(HookReceived),
    /// A worker took the session's worker lock and started.
    WorkerStarted {
        /// Why it runs.
        reason: WorkerReason,
    },
    /// Open turns are to be treated as over (a drain: a later session start or
    /// `ovhook drain`).
    OpenTurnsClosed,
    /// A range of the rollout file was read.
    RolloutRead {
        /// The file that was read.
        path: String,
        /// What the range held.
        chunk: TranscriptChunk,
    },
    /// The rollout file was looked for and is not there.
    RolloutMissing {
        /// The path looked at.
        path: String,
    },
    /// Messages were planned for sending, in sending order.
    MessagesPlanned {
        /// The messages.
        messages: Vec<PlannedMessage>,
    },
    /// A send request is about to go out. Journaled durably before the request.
    SendStarted {
        /// Unique per journal, increasing.
        send_id: u64,
        /// The messages in the request, in order.
        keys: Vec<DedupKey>,
        /// One `POST …/messages` per message instead of a batch.
        single: bool,
    },
    /// The server accepted a send.
    SendAcked {
        /// Which send.
        send_id: u64,
    },
    /// The server (or the network) refused a send.
    SendFailed {
        /// Which send.
        send_id: u64,
        /// HTTP status; 0 for a network failure.
        status: u16,
        /// Worth retrying as it is (network, 408, 429, 5xx, retryable 409).
        retryable: bool,
        /// The server's error message.
        error: String,
        /// The request body had left when it failed: a network error or a 5xx
        /// then leaves the send in doubt rather than failed.
        request_sent: bool,
    },
    /// In-doubt sends were checked against what the server holds.
    Reconciled {
        /// The in-doubt sends this settles.
        send_ids: Vec<u64>,
        /// Keys the server already holds.
        present: Vec<DedupKey>,
        /// Keys the server does not hold.
        absent: Vec<DedupKey>,
    },
    /// A commit request is about to go out.
    CommitStarted {
        /// Unique per journal, increasing.
        commit_id: u64,
        /// The server's commit count read just before, when known.
        commit_count_before: Option<u64>,
    },
    /// The server accepted a commit.
    CommitAcked {
        /// Which commit.
        commit_id: u64,
        /// The server's task id.
        task_id: Option<String>,
        /// The archive the commit wrote.
        archive_uri: Option<String>,
    },
    /// A commit failed.
    CommitFailed {
        /// Which commit.
        commit_id: u64,
        /// HTTP status; 0 for a network failure.
        status: u16,
        /// Worth retrying.
        retryable: bool,
        /// The server's error message.
        error: String,
        /// The request had left when it failed (in doubt on a network error or 5xx).
        request_sent: bool,
    },
    /// An in-doubt commit was checked against the server's commit count.
    CommitReconciled {
        /// Which commit.
        commit_id: u64,
        /// The server did apply it.
        applied: bool,
    },
    /// A recall was served for a prompt.
    RecallServed {
        /// The prompt's turn id.
        turn_id: Option<String>,
        /// xxh3 of the cleaned prompt.
        prompt_hash: u64,
        /// Which tier answered (0 = none, cached or skipped).
        tier: u8,
        /// The injected block (None = nothing injected).
        block: Option<String>,
        /// The server does not support the context face (tier 1).
        context_face_unsupported: bool,
        /// The block came from the recall cache.
        cached: bool,
    },
    /// The SessionStart profile was served.
    ProfileServed {
        /// Bytes injected (0 = nothing).
        bytes: u64,
    },
    /// The server could not be reached; network work is skipped until
    /// `at_ms + retry_after_ms`.
    ServerUnreachable {
        /// What failed.
        error: String,
        /// The back-off window chosen.
        retry_after_ms: u64,
    },
    /// The server answered a request (clears a back-off).
    ServerReachable,
    /// A hook or worker hit a problem it could not act on (for `why` and doctor).
    Problem {
        /// Where.
        context: String,
        /// What.
        message: String,
    },
    /// The server's trace id of a commit's reply (acknowledged or refused), journaled right
    /// after the commit's outcome so a commit can be found in the server's logs.
    CommitTraced {
        /// Which commit.
        commit_id: u64,
        /// `result.trace_id` / `error.trace_id` / `trace_id` of the reply, else its
        /// `X-Request-Id` header.
        trace_id: String,
    },
    /// Part of the journal cannot be read (a damaged range, or a snapshot that does not decode
    /// with the segments before it removed): events in it are lost, so no absent acknowledgement
    /// can be trusted any more. Until [`Event::AllReconciled`], every message not known to be
    /// acknowledged is checked against the server before anything is sent.
    JournalDamaged {
        /// Segment of the damaged range.
        segment: u64,
        /// Its offset in that segment.
        offset: u64,
        /// Its length in bytes.
        len: u64,
        /// What is wrong.
        reason: String,
    },
    /// After [`Event::JournalDamaged`], every message not known to be acknowledged was checked
    /// against the session's messages on the server (by turn id and role).
    AllReconciled {
        /// Keys the server already holds (acknowledged now); the others stay to be sent.
        present: Vec<DedupKey>,
    },
    /// The events of a spill file ([`crate::spill`]) were appended in the same batch as this
    /// event; a file of this name found later is removed without appending again.
    SpillIngested {
        /// The spill file's name.
        name: String,
        /// How many events it held.
        events: u32,
    },
    /// A hook did not capture its turn (capture paused, off, or bypassed): that turn is never
    /// sent, whatever arrives later ([`crate::turnbook::TurnBook::observe_refused`]).
    CaptureRefused {
        /// The hook's turn id (else its `traceId`); `None` when the payload named none.
        turn_id: Option<String>,
        /// Why (`paused (project)`, `capture off`, …).
        reason: String,
    },
    /// The user forgot a turn or the whole session (`ovhook forget`): nothing of it is sent
    /// from now on, and what was planned and not yet acknowledged is set aside.
    Forgotten {
        /// The turn; `None` for the whole session.
        turn_id: Option<String>,
        /// What was removed from the server, in the user's words (for `why`).
        note: String,
    },
    /// Text of a turn was redacted where it entered ([`crate::privacy`]), before it was
    /// journaled: how many things of each kind were removed, never what.
    Redacted {
        /// The turn, when known.
        turn_id: Option<String>,
        /// Where the text entered: `hook` (a payload) or `transcript` (a transcript read).
        origin: String,
        /// Counts per kind (`private`, a secret kind, `rule-drop`, `rule-edit`).
        counts: crate::privacy::Redactions,
    },
    /// What the server held for the session (live and archived) when it was asked after
    /// [`Event::JournalDamaged`]: the identities of those messages
    /// ([`crate::projector::delivered`]). Every message with one of them counts as delivered,
    /// also one read from the transcript later, so a transcript re-read from its first byte
    /// sends none of them again. Journaled just before [`Event::AllReconciled`].
    ServerHolds {
        /// Identities of the messages the server holds.
        identities: Vec<u64>,
    },
    /// The worker removed segments of this journal that only a snapshot still needed (see
    /// `journal.retention_days`); their events are gone, the snapshot holds their state.
    Pruned {
        /// Ids of the segments removed.
        segments: Vec<u64>,
        /// Their size in bytes.
        bytes: u64,
        /// The newest of them was last written then (ms).
        newest_ms: u64,
        /// The retention they had passed, in days.
        retention_days: u64,
    },
    /// A Stop's payload named the session's transcript file, and its harness reads that file
    /// (Claude Code's `transcript_path`, Copilot's `transcriptPath`, Gemini's): the worker
    /// reads it instead of searching the agent's folders. Journaled with the Stop; the
    /// latest one holds ([`crate::projector::State::transcript_path`]).
    TranscriptNamed {
        /// The file, as the payload named it.
        path: String,
    },
    /// Tool calls of a turn (`capture.tools` on), as they entered: the privacy rule applied and
    /// bounded ([`crate::tool::ToolCall::capture`]). They go with the turn's assistant message,
    /// as its tool parts; calls of a turn whose answer was already planned are ignored.
    ToolCalls {
        /// The turn.
        turn_id: String,
        /// Where they entered: `hook` (a PostToolUse payload) or `transcript`.
        origin: String,
        /// The calls, in the order the agent made them.
        calls: Vec<crate::tool::ToolCall>,
    },
    /// A subagent's whole turn, as its harness reported it when the subagent finished: the
    /// task it was given and its final answer (both through the privacy rule). A turn of its
    /// own, complete as it arrives, that leaves every other turn of the session as it is (the
    /// parent's turn that spawned it is still running). See [`crate::subagent`].
    SubagentTurn {
        /// The turn's identity ([`crate::subagent::turn_id`]).
        turn_id: String,
        /// The subagent's id (the harness's agent id, or its own session id).
        agent: String,
        /// The task it was given, when known.
        prompt: Option<String>,
        /// Its final answer, when known.
        answer: Option<String>,
    },
}

impl Event {
    /// A short stable name of the variant, for `ovreplay dump --kind`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Event::HookReceived(_) => "hook",
            Event::WorkerStarted { .. } => "worker-started",
            Event::OpenTurnsClosed => "open-turns-closed",
            Event::RolloutRead { .. } => "rollout-read",
            Event::RolloutMissing { .. } => "rollout-missing",
            Event::MessagesPlanned { .. } => "planned",
            Event::SendStarted { .. } => "send-started",
            Event::SendAcked { .. } => "send-acked",
            Event::SendFailed { .. } => "send-failed",
            Event::Reconciled { .. } => "reconciled",
            Event::CommitStarted { .. } => "commit-started",
            Event::CommitAcked { .. } => "commit-acked",
            Event::CommitFailed { .. } => "commit-failed",
            Event::CommitReconciled { .. } => "commit-reconciled",
            Event::RecallServed { .. } => "recall",
            Event::ProfileServed { .. } => "profile",
            Event::ServerUnreachable { .. } => "server-unreachable",
            Event::ServerReachable => "server-reachable",
            Event::Problem { .. } => "problem",
            Event::CommitTraced { .. } => "commit-traced",
            Event::JournalDamaged { .. } => "journal-damaged",
            Event::AllReconciled { .. } => "all-reconciled",
            Event::SpillIngested { .. } => "spill-ingested",
            Event::CaptureRefused { .. } => "capture-refused",
            Event::Forgotten { .. } => "forgotten",
            Event::Redacted { .. } => "redacted",
            Event::ServerHolds { .. } => "server-holds",
            Event::Pruned { .. } => "pruned",
            Event::TranscriptNamed { .. } => "transcript-named",
            Event::ToolCalls { .. } => "tool-calls",
            Event::SubagentTurn { .. } => "subagent-turn",
        }
    }

    /// Turn ids this event is about (for filtering and `why`).
    pub fn turn_ids(&self) -> Vec<&str> {
        match self {
            Event::HookReceived(h) => h.turn_id.as_deref().into_iter().collect(),
            Event::ToolCalls { turn_id, .. } => vec![turn_id.as_str()],
            Event::RolloutRead { chunk, .. } => {
                chunk.fragments.iter().map(|f| f.turn_id.as_str()).collect()
            }
            Event::MessagesPlanned { messages } => messages
                .iter()
                .filter_map(|m| m.turn_id.as_deref())
                .collect(),
            Event::RecallServed { turn_id, .. }
            | Event::CaptureRefused { turn_id, .. }
            | Event::Forgotten { turn_id, .. }
            | Event::Redacted { turn_id, .. } => turn_id.as_deref().into_iter().collect(),
            Event::SubagentTurn { turn_id, .. } => vec![turn_id.as_str()],
            _ => Vec::new(),
        }
    }
}
