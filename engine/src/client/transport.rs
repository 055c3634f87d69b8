//! The OpenViking client as the delivery pipeline's [`Transport`].

use crate::client::{Client, ClientError, OutMessage};
use crate::delivery::{CommitReply, HeldMessage, OutgoingMessage, Transport, TransportError};

fn transport_error(e: &ClientError) -> TransportError {
    TransportError {
        status: e.status(),
        retryable: e.is_retryable(),
        unreachable: e.is_unreachable(),
        message: e.to_string(),
        trace_id: e.trace_id().map(str::to_owned),
    }
}

fn out(m: &OutgoingMessage) -> OutMessage {
    OutMessage {
        role: m.role.as_str().to_string(),
        content: m.content.clone(),
        turn_id: m.turn_id.clone(),
        created_at: m.created_at_ms.map(crate::time::format_ms),
        message_kind: Some(m.role.message_kind().to_owned()),
    }
}

impl Transport for Client {
    fn add_batch(
        &self,
        session: &str,
        messages: &[OutgoingMessage],
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError> {
        let msgs: Vec<OutMessage> = messages.iter().map(out).collect();
        Client::add_batch(self, session, &msgs, on_sent).map_err(|e| transport_error(&e))
    }

    fn add_one(
        &self,
        session: &str,
        message: &OutgoingMessage,
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError> {
        Client::add_one(self, session, &out(message), on_sent).map_err(|e| transport_error(&e))
    }

    fn commit(&self, session: &str, on_sent: &dyn Fn()) -> Result<CommitReply, TransportError> {
        Client::commit(self, session, on_sent)
            .map(|r| CommitReply {
                task_id: r.task_id,
                archive_uri: r.archive_uri,
                trace_id: r.trace_id,
            })
            .map_err(|e| transport_error(&e))
    }

    fn commit_count(&self, session: &str) -> Result<Option<u64>, TransportError> {
        self.session_meta(session)
            .map(|m| m.map(|m| m.commit_count))
            .map_err(|e| transport_error(&e))
    }

    fn held_messages(&self, session: &str) -> Result<Vec<HeldMessage>, TransportError> {
        self.session_messages(session)
            .map(|v| {
                v.into_iter()
                    .map(|m| HeldMessage {
                        role: m.role,
                        content: m.content,
                        turn_id: m.turn_id,
                    })
                    .collect()
            })
            .map_err(|e| transport_error(&e))
    }

    fn answers_now(&self) -> bool {
        self.health().is_ok()
    }
}
