//! What delivery needs from the outside: the server ([`Transport`]) and the
//! session's transcript ([`TranscriptSource`]).

use crate::failure::Failure;
use crate::turn::{FileIdentity, Role, TranscriptChunk};

/// A message as the transport sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingMessage {
    /// `user` / `assistant`.
    pub role: Role,
    /// Content.
    pub content: String,
    /// Turn id, when known.
    pub turn_id: Option<String>,
    /// When it was written (ms since the epoch), when known.
    pub created_at_ms: Option<u64>,
    /// The turn's tool calls, sent as the message's tool parts (`capture.tools`).
    pub tools: Vec<crate::tool::ToolCall>,
}

/// A message the server holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldMessage {
    /// `user` / `assistant` / other.
    pub role: String,
    /// Content.
    pub content: String,
    /// Turn id, when the server has one.
    pub turn_id: Option<String>,
}

/// Why a transport call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportError {
    /// HTTP status; 0 when no reply was read.
    pub status: u16,
    /// Worth retrying as is.
    pub retryable: bool,
    /// The server could not be reached at all (nothing was sent).
    pub unreachable: bool,
    /// What happened (never contains credentials).
    pub message: String,
    /// The server's trace id of the reply, when it answered.
    pub trace_id: Option<String>,
}

impl TransportError {
    /// What the failure means ([`Failure::classify`]); `request_sent` tells whether the
    /// request body had left. Reads send nothing: they pass `false`.
    pub fn failure(&self, request_sent: bool) -> Failure {
        if self.unreachable && !request_sent {
            return Failure::Unreachable;
        }
        Failure::classify(self.status, self.retryable, request_sent)
    }
}

/// What a commit returned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommitReply {
    /// Server task id.
    pub task_id: Option<String>,
    /// Archive written.
    pub archive_uri: Option<String>,
    /// The server's trace id of the reply.
    pub trace_id: Option<String>,
}

/// The server side of delivery. `on_sent` is called once the request body has
/// been handed to the socket, before the reply is read.
pub trait Transport {
    /// Adds messages in one batch request.
    fn add_batch(
        &self,
        session: &str,
        messages: &[OutgoingMessage],
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError>;
    /// Adds one message.
    fn add_one(
        &self,
        session: &str,
        message: &OutgoingMessage,
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError>;
    /// Commits the session.
    fn commit(&self, session: &str, on_sent: &dyn Fn()) -> Result<CommitReply, TransportError>;
    /// The session's commit count (None: the session does not exist).
    fn commit_count(&self, session: &str) -> Result<Option<u64>, TransportError>;
    /// Everything the server holds for the session, live and archived.
    fn held_messages(&self, session: &str) -> Result<Vec<HeldMessage>, TransportError>;
    /// One cheap question that says whether the server answers now, asked by a
    /// Stop worker inside a back-off window before it gives up on the server.
    /// A transport that cannot tell says no (the back-off holds).
    fn answers_now(&self) -> bool {
        false
    }
}

/// Where a session's transcript comes from (ZCode: its rollout file).
pub trait TranscriptSource {
    /// Reads what is new since `resume` (identity and offset of the last read).
    /// `Ok(None)` when there is no transcript file.
    fn read(&self, resume: Option<(FileIdentity, u64)>)
        -> std::io::Result<Option<TranscriptChunk>>;
    /// [`TranscriptSource::read`] for a transcript whose lines do not all name
    /// their turn: `last_turn` is the turn of the last line of the previous read
    /// (lines at the start of this range that name none continue it).
    fn read_after(
        &self,
        resume: Option<(FileIdentity, u64)>,
        last_turn: Option<&str>,
    ) -> std::io::Result<Option<TranscriptChunk>> {
        let _ = last_turn;
        self.read(resume)
    }
    /// The path, for the journal.
    fn path(&self) -> String;
    /// Whether anything new is there since `resume`, without reading it
    /// (None: cannot tell). Used to skip idle sessions in a drain.
    fn peek(&self, resume: Option<(FileIdentity, u64)>) -> Option<bool> {
        let _ = resume;
        None
    }
}
