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

/// The wire message: a message with tool calls travels as parts, its text the first one.
fn out(m: &OutgoingMessage) -> OutMessage {
    let parts = (!m.tools.is_empty()).then(|| {
        let text = serde_json::json!({"type": "text", "text": m.content});
        std::iter::once(text)
            .chain(m.tools.iter().map(crate::tool::ToolCall::to_part))
            .collect()
    });
    OutMessage {
        role: m.role.as_str().to_string(),
        content: if parts.is_some() {
            String::new()
        } else {
            m.content.clone()
        },
        parts,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::Role;

    #[test]
    fn a_message_with_tool_calls_travels_as_its_text_part_then_its_tool_parts() {
        let call = crate::tool::ToolCall {
            id: Some("c1".into()),
            name: "Read".into(),
            input: r#"{"file_path":"a.md"}"#.into(),
            output: Some("x".into()),
            output_chars: 1,
            ..crate::tool::ToolCall::default()
        };
        let m = OutgoingMessage {
            role: Role::Assistant,
            content: "done".into(),
            turn_id: Some("t1".into()),
            created_at_ms: None,
            tools: vec![call],
        };
        assert_eq!(
            serde_json::to_string(&out(&m)).ok().as_deref(),
            Some(
                r#"{"role":"assistant","parts":[{"type":"text","text":"done"},{"type":"tool","tool_id":"c1","tool_name":"Read","tool_input":{"file_path":"a.md"},"tool_output":"x","tool_status":"completed"}],"turn_id":"t1","message_kind":"assistant_step"}"#
            )
        );
        let plain = OutgoingMessage {
            tools: Vec::new(),
            ..m
        };
        assert!(serde_json::to_string(&out(&plain))
            .is_ok_and(|j| j.starts_with(r#"{"role":"assistant","content":"done","#)));
    }
}
