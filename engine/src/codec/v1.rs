//! Codec version 1, frozen: the event types as version 1 wrote them, and their
//! conversion to today's types. Never edit these types; a record of version 1 decodes
//! through them forever.
//!
//! Version 2 added `HookReceived::response_preview` and `TurnFragment::{prompt_at,
//! steering}`; everything else a version-1 event holds is today's type, unchanged, but for
//! `PlannedMessage`, which version 3 changed: a version-1 plan is version 2's
//! (`super::v2::PlannedMessage`).

use serde::{Deserialize, Serialize};

use super::v2::PlannedMessage;
use crate::event::{self, HookKind, WorkerReason};
use crate::turn::{self, DedupKey, FileIdentity};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Envelope {
    pub at_ms: u64,
    pub pid: u32,
    pub event: Event,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(super) struct HookReceived {
    pub kind: Option<HookKind>,
    pub harness: String,
    pub session_id: Option<String>,
    pub turn_id: Option<String>,
    pub trace_id: Option<String>,
    pub cwd: Option<String>,
    pub prompt: Option<String>,
    pub response_text: Option<String>,
    pub source: Option<String>,
    pub tool_name: Option<String>,
    pub denied_uri: Option<String>,
    pub tool_call_count: Option<u64>,
    pub raw_len: u64,
    pub malformed: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(super) struct TurnFragment {
    pub turn_id: String,
    pub prompt: Option<String>,
    pub final_text: Option<String>,
    pub last_text: Option<String>,
    pub finished: bool,
    pub interrupted: bool,
    pub calls: u32,
    pub superseded: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(super) struct TranscriptChunk {
    pub identity: FileIdentity,
    pub start: u64,
    pub end: u64,
    pub file_len: u64,
    pub rescanned: bool,
    pub fragments: Vec<TurnFragment>,
    pub skipped_lines: u32,
    pub bad_lines: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) enum Event {
    HookReceived(HookReceived),
    WorkerStarted {
        reason: WorkerReason,
    },
    OpenTurnsClosed,
    RolloutRead {
        path: String,
        chunk: TranscriptChunk,
    },
    RolloutMissing {
        path: String,
    },
    MessagesPlanned {
        messages: Vec<PlannedMessage>,
    },
    SendStarted {
        send_id: u64,
        keys: Vec<DedupKey>,
        single: bool,
    },
    SendAcked {
        send_id: u64,
    },
    SendFailed {
        send_id: u64,
        status: u16,
        retryable: bool,
        error: String,
        request_sent: bool,
    },
    Reconciled {
        send_ids: Vec<u64>,
        present: Vec<DedupKey>,
        absent: Vec<DedupKey>,
    },
    CommitStarted {
        commit_id: u64,
        commit_count_before: Option<u64>,
    },
    CommitAcked {
        commit_id: u64,
        task_id: Option<String>,
        archive_uri: Option<String>,
    },
    CommitFailed {
        commit_id: u64,
        status: u16,
        retryable: bool,
        error: String,
        request_sent: bool,
    },
    CommitReconciled {
        commit_id: u64,
        applied: bool,
    },
    RecallServed {
        turn_id: Option<String>,
        prompt_hash: u64,
        tier: u8,
        block: Option<String>,
        context_face_unsupported: bool,
        cached: bool,
    },
    ProfileServed {
        bytes: u64,
    },
    ServerUnreachable {
        error: String,
        retry_after_ms: u64,
    },
    ServerReachable,
    Problem {
        context: String,
        message: String,
    },
    CommitTraced {
        commit_id: u64,
        trace_id: String,
    },
    JournalDamaged {
        segment: u64,
        offset: u64,
        len: u64,
        reason: String,
    },
    AllReconciled {
        present: Vec<DedupKey>,
    },
}

impl From<Envelope> for event::Envelope {
    fn from(e: Envelope) -> event::Envelope {
        event::Envelope {
            at_ms: e.at_ms,
            pid: e.pid,
            event: e.event.into(),
        }
    }
}

impl From<Event> for event::Event {
    fn from(e: Event) -> event::Event {
        match e {
            Event::HookReceived(h) => event::Event::HookReceived(h.into()),
            Event::WorkerStarted { reason } => event::Event::WorkerStarted { reason },
            Event::OpenTurnsClosed => event::Event::OpenTurnsClosed,
            Event::RolloutRead { path, chunk } => event::Event::RolloutRead {
                path,
                chunk: chunk.into(),
            },
            Event::RolloutMissing { path } => event::Event::RolloutMissing { path },
            Event::MessagesPlanned { messages } => event::Event::MessagesPlanned {
                messages: messages.into_iter().map(Into::into).collect(),
            },
            Event::SendStarted {
                send_id,
                keys,
                single,
            } => event::Event::SendStarted {
                send_id,
                keys,
                single,
            },
            Event::SendAcked { send_id } => event::Event::SendAcked { send_id },
            Event::SendFailed {
                send_id,
                status,
                retryable,
                error,
                request_sent,
            } => event::Event::SendFailed {
                send_id,
                status,
                retryable,
                error,
                request_sent,
            },
            Event::Reconciled {
                send_ids,
                present,
                absent,
            } => event::Event::Reconciled {
                send_ids,
                present,
                absent,
            },
            Event::CommitStarted {
                commit_id,
                commit_count_before,
            } => event::Event::CommitStarted {
                commit_id,
                commit_count_before,
            },
            Event::CommitAcked {
                commit_id,
                task_id,
                archive_uri,
            } => event::Event::CommitAcked {
                commit_id,
                task_id,
                archive_uri,
            },
            Event::CommitFailed {
                commit_id,
                status,
                retryable,
                error,
                request_sent,
            } => event::Event::CommitFailed {
                commit_id,
                status,
                retryable,
                error,
                request_sent,
            },
            Event::CommitReconciled { commit_id, applied } => {
                event::Event::CommitReconciled { commit_id, applied }
            }
            Event::RecallServed {
                turn_id,
                prompt_hash,
                tier,
                block,
                context_face_unsupported,
                cached,
            } => event::Event::RecallServed {
                turn_id,
                prompt_hash,
                tier,
                block,
                context_face_unsupported,
                cached,
            },
            Event::ProfileServed { bytes } => event::Event::ProfileServed { bytes },
            Event::ServerUnreachable {
                error,
                retry_after_ms,
            } => event::Event::ServerUnreachable {
                error,
                retry_after_ms,
            },
            Event::ServerReachable => event::Event::ServerReachable,
            Event::Problem { context, message } => event::Event::Problem { context, message },
            Event::CommitTraced {
                commit_id,
                trace_id,
            } => event::Event::CommitTraced {
                commit_id,
                trace_id,
            },
            Event::JournalDamaged {
                segment,
                offset,
                len,
                reason,
            } => event::Event::JournalDamaged {
                segment,
                offset,
                len,
                reason,
            },
            Event::AllReconciled { present } => event::Event::AllReconciled { present },
        }
    }
}

impl From<HookReceived> for event::HookReceived {
    fn from(h: HookReceived) -> event::HookReceived {
        event::HookReceived {
            kind: h.kind,
            harness: h.harness,
            session_id: h.session_id,
            turn_id: h.turn_id,
            trace_id: h.trace_id,
            cwd: h.cwd,
            prompt: h.prompt,
            response_text: h.response_text,
            response_preview: None,
            source: h.source,
            tool_name: h.tool_name,
            denied_uri: h.denied_uri,
            tool_call_count: h.tool_call_count,
            raw_len: h.raw_len,
            malformed: h.malformed,
        }
    }
}

impl From<TurnFragment> for turn::TurnFragment {
    fn from(f: TurnFragment) -> turn::TurnFragment {
        turn::TurnFragment {
            turn_id: f.turn_id,
            prompt: f.prompt,
            trace_id: None,
            prompt_at: None,
            steering: Vec::new(),
            final_text: f.final_text,
            last_text: f.last_text,
            finished: f.finished,
            interrupted: f.interrupted,
            calls: f.calls,
            superseded: f.superseded,
            prompt_ms: None,
            answer_ms: None,
        }
    }
}

impl From<TranscriptChunk> for turn::TranscriptChunk {
    fn from(c: TranscriptChunk) -> turn::TranscriptChunk {
        turn::TranscriptChunk {
            identity: c.identity,
            start: c.start,
            end: c.end,
            file_len: c.file_len,
            rescanned: c.rescanned,
            fragments: c.fragments.into_iter().map(Into::into).collect(),
            skipped_lines: c.skipped_lines,
            bad_lines: c.bad_lines,
            tools: Vec::new(),
        }
    }
}
