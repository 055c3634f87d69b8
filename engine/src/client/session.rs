//! Session writes (batch, single, commit) and the reads used for exactly-once reconciliation.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{enc, Client, ClientError, Method, BATCH_LIMIT};

/// One message to add to a session. Serialises as `{role, content[, turn_id][, created_at]
/// [, message_kind]}` in that key order, or, with parts, `{role, parts, …}` (the server reads
/// `parts` instead of `content` when both are given; so the text is sent once, as the first
/// part).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The cleaned text; empty (and not sent) when [`OutMessage::parts`] carries it.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub content: String,
    /// `[{"type":"text","text":…}, {"type":"tool",…}…]`: the text and the tool parts of an
    /// assistant message with tool calls ([`crate::tool::ToolCall::to_part`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub parts: Option<Vec<Value>>,
    /// ZCode turn id, when the turn has one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub turn_id: Option<String>,
    /// When the message was written (RFC 3339, UTC, `crate::time::format_ms`); absent, the
    /// server stamps the time it arrives.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub created_at: Option<String>,
    /// The server's taxonomy (`user_query`, `assistant_step`; [`crate::turn::Role::message_kind`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub message_kind: Option<String>,
}

/// What `POST …/commit` answered.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CommitResult {
    /// Background task of phase 2 (memory extraction), for `GET /api/v1/tasks/{id}`.
    pub task_id: Option<String>,
    /// Archive written by phase 1, e.g. `viking://user/default/sessions/s/history/archive_001`.
    pub archive_uri: Option<String>,
    /// `result.status`, e.g. `accepted`.
    pub status: Option<String>,
    /// The server's trace id of the reply: `result.trace_id`, else the `X-Request-Id` header.
    pub trace_id: Option<String>,
}

/// Counters of a session (`GET /api/v1/sessions/{id}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SessionMeta {
    /// Live (uncommitted) messages.
    pub message_count: u64,
    /// Commits so far.
    pub commit_count: u64,
    /// Estimated tokens of the live messages.
    pub pending_tokens: u64,
}

/// One message the server holds, live or archived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerMessage {
    /// Its `tool` parts, as the server stores them.
    pub tool_parts: Vec<Value>,
    /// `user`, `assistant`, …
    pub role: String,
    /// The text parts, joined with `\n`.
    pub content: String,
    /// The `turn_id` sent with the message, if any.
    pub turn_id: Option<String>,
    /// Its `created_at`, as the server holds it.
    pub created_at: Option<String>,
    /// Its `message_kind`, if any.
    pub message_kind: Option<String>,
}

impl Client {
    /// `POST /api/v1/sessions/{id}/messages/batch` with `{"messages":[…]}` (at most [`BATCH_LIMIT`]).
    ///
    /// `on_sent` is called once the whole request body has been handed to the transport and before
    /// the reply is read; it is not called when the request never left (e.g. connection refused).
    /// A 404 or 405 means the server has no batch endpoint: the caller falls back to [`Client::add_one`].
    pub fn add_batch(
        &self,
        session_id: &str,
        messages: &[OutMessage],
        on_sent: &dyn Fn(),
    ) -> Result<(), ClientError> {
        if messages.len() > BATCH_LIMIT {
            return Err(ClientError::Config(format!(
                "a batch holds at most {BATCH_LIMIT} messages, got {}",
                messages.len()
            )));
        }
        // Serialised from structs, not `json!`: the wire keeps the key order role, content, turn_id.
        #[derive(Serialize)]
        struct Batch<'a> {
            messages: &'a [OutMessage],
        }
        let body = serde_json::to_vec(&Batch { messages })
            .map_err(|e| ClientError::Config(e.to_string()))?;
        let path = format!("/api/v1/sessions/{}/messages/batch", enc(session_id));
        self.call_raw(Method::Post, &path, Some(body), None, Some(on_sent))
            .map(drop)
    }

    /// `POST /api/v1/sessions/{id}/messages` with `{role, content[, turn_id]}`.
    pub fn add_one(
        &self,
        session_id: &str,
        message: &OutMessage,
        on_sent: &dyn Fn(),
    ) -> Result<(), ClientError> {
        let body = serde_json::to_vec(message).map_err(|e| ClientError::Config(e.to_string()))?;
        let path = format!("/api/v1/sessions/{}/messages", enc(session_id));
        self.call_raw(Method::Post, &path, Some(body), None, Some(on_sent))
            .map(drop)
    }

    /// `POST /api/v1/sessions/{id}/commit` with `{}`: archives every live message (phase 1, done when
    /// this returns) and schedules memory extraction (phase 2, `task_id`).
    pub fn commit(
        &self,
        session_id: &str,
        on_sent: &dyn Fn(),
    ) -> Result<CommitResult, ClientError> {
        let path = format!("/api/v1/sessions/{}/commit", enc(session_id));
        let reply = self.exchange(
            Method::Post,
            &path,
            Some(b"{}".to_vec()),
            None,
            Some(on_sent),
        )?;
        let v = reply.body;
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .filter(|x| !x.is_empty())
                .map(str::to_owned)
        };
        Ok(CommitResult {
            task_id: s("task_id"),
            archive_uri: s("archive_uri"),
            status: s("status"),
            trace_id: reply.trace_id,
        })
    }

    /// `DELETE /api/v1/sessions/{id}`: the session, its live messages and its archives go.
    /// `Ok(false)` when the server holds no such session (404). Memories a commit already
    /// extracted from the session are the user's, not the session's, and stay.
    pub fn delete_session(&self, session_id: &str) -> Result<bool, ClientError> {
        let path = format!("/api/v1/sessions/{}", enc(session_id));
        match self.call(Method::Delete, &path, None, None, None) {
            Ok(_) => Ok(true),
            Err(e) if e.status() == 404 => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `GET /api/v1/sessions/{id}`; `None` when the session does not exist (404).
    pub fn session_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, ClientError> {
        let Some(v) = self.session_info(session_id)? else {
            return Ok(None);
        };
        let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        Ok(Some(SessionMeta {
            message_count: n("message_count"),
            commit_count: n("commit_count"),
            pending_tokens: n("pending_tokens"),
        }))
    }

    /// Every message the server holds for the session, oldest first: the messages archived by earlier
    /// commits (`<session uri>/history/archive_NNN/messages.jsonl`, in archive order), then the live
    /// ones (`<session uri>/messages.jsonl`). Empty when the session does not exist.
    ///
    /// Reads the stored files (`content/read?raw=true`) rather than `GET …/context`, which hides
    /// archives once they are marked done and applies a token budget, and rather than
    /// `GET …/archives/{id}`, which answers 404 until an archive's phase 2 has finished.
    ///
    /// The read spans several requests while the server may still be writing an
    /// archive (a commit's asynchronous phase); a transient failure on the way
    /// (a half-written file answered as a 400 or a decode error, a 5xx) retries
    /// the whole read a few times before giving up.
    pub fn session_messages(&self, session_id: &str) -> Result<Vec<ServerMessage>, ClientError> {
        let mut attempt = 0u32;
        loop {
            match self.session_messages_once(session_id) {
                Err(e) if attempt < 5 && transient_read_error(&e) => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(200 * u64::from(attempt)));
                }
                other => return other,
            }
        }
    }

    fn session_messages_once(&self, session_id: &str) -> Result<Vec<ServerMessage>, ClientError> {
        let Some(info) = self.session_info(session_id)? else {
            return Ok(Vec::new());
        };
        let uri = info
            .get("uri")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| ClientError::Decode {
                url: self.session_url(session_id),
                message: "session has no uri".into(),
            })?;
        let mut archives = self.list_archives(&uri)?;
        archives.sort();
        let mut out = Vec::new();
        for (_, archive) in archives {
            self.read_jsonl_messages(&format!("{archive}/messages.jsonl"), &mut out)?;
        }
        self.read_jsonl_messages(&format!("{uri}/messages.jsonl"), &mut out)?;
        Ok(out)
    }

    fn session_url(&self, session_id: &str) -> String {
        format!("{}/api/v1/sessions/{}", self.base, enc(session_id))
    }

    fn session_info(&self, session_id: &str) -> Result<Option<Value>, ClientError> {
        let path = format!("/api/v1/sessions/{}", enc(session_id));
        match self.call(Method::Get, &path, None, None, None) {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.status() == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `(index, uri)` of every `archive_NNN` directory under `<session uri>/history`, paging the listing.
    fn list_archives(&self, session_uri: &str) -> Result<Vec<(u64, String)>, ClientError> {
        const PAGE: usize = 1000;
        let history = format!("{session_uri}/history");
        let mut found = Vec::new();
        let mut offset = 0usize;
        loop {
            let path = format!(
                "/api/v1/fs/ls?uri={}&output=original&node_limit={PAGE}&offset={offset}",
                enc(&history)
            );
            let listing = match self.call(Method::Get, &path, None, None, None) {
                Ok(v) => v,
                // No commit yet: no history directory.
                Err(e) if e.status() == 404 => return Ok(found),
                Err(e) => return Err(e),
            };
            let entries = listing.as_array().map(Vec::as_slice).unwrap_or_default();
            for entry in entries {
                let name = entry
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let is_dir = entry.get("isDir").and_then(Value::as_bool).unwrap_or(false);
                if let Some(index) = name
                    .strip_prefix("archive_")
                    .and_then(|n| n.parse::<u64>().ok())
                {
                    if is_dir {
                        found.push((index, format!("{history}/{name}")));
                    }
                }
            }
            if entries.len() < PAGE {
                return Ok(found);
            }
            offset += entries.len();
        }
    }

    /// Appends the messages of one stored `messages.jsonl`; a missing file holds none.
    fn read_jsonl_messages(
        &self,
        file_uri: &str,
        out: &mut Vec<ServerMessage>,
    ) -> Result<(), ClientError> {
        let path = format!("/api/v1/content/read?uri={}&raw=true", enc(file_uri));
        let text = match self.call(Method::Get, &path, None, None, None) {
            Ok(Value::String(s)) => s,
            Ok(Value::Object(m)) if m.is_empty() => String::new(),
            Ok(other) => {
                return Err(ClientError::Decode {
                    url: format!("{}{path}", self.base),
                    message: format!("expected file text, got {}", kind(&other)),
                })
            }
            Err(e) if e.status() == 404 => return Ok(()),
            Err(e) => return Err(e),
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).map_err(|e| ClientError::Decode {
                url: format!("{}{path}", self.base),
                message: format!("bad message line: {e}"),
            })?;
            out.push(parse_message(&v));
        }
        Ok(())
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A stored message: `{id, role, parts:[{type:"text", text}…], created_at, turn_id}`.
fn parse_message(v: &Value) -> ServerMessage {
    let role = v
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let content = match v.get("parts").and_then(Value::as_array) {
        Some(parts) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        None => v
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    };
    let text = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    let tool_parts = v
        .get("parts")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("tool"))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    ServerMessage {
        tool_parts,
        role,
        content,
        turn_id: text("turn_id"),
        created_at: text("created_at"),
        message_kind: text("message_kind"),
    }
}

/// A failure of one step of a multi-request read that a retry may not see:
/// the server answered about a file it was still writing.
fn transient_read_error(e: &ClientError) -> bool {
    matches!(e, ClientError::Decode { .. }) || matches!(e.status(), 400 | 409 | 500..=599)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn out_message_key_order_is_role_content_turn_id() {
        let m = OutMessage {
            role: "user".into(),
            parts: None,
            content: "hi".into(),
            turn_id: Some("t1".into()),
            created_at: Some("2026-07-02T03:02:56.413Z".into()),
            message_kind: Some("user_query".into()),
        };
        assert_eq!(
            serde_json::to_string(&m).ok().as_deref(),
            Some(
                r#"{"role":"user","content":"hi","turn_id":"t1","created_at":"2026-07-02T03:02:56.413Z","message_kind":"user_query"}"#
            )
        );
        let m = OutMessage {
            turn_id: None,
            created_at: None,
            message_kind: None,
            ..m
        };
        assert_eq!(
            serde_json::to_string(&m).ok().as_deref(),
            Some(r#"{"role":"user","content":"hi"}"#)
        );
    }

    #[test]
    fn stored_messages_join_text_parts() {
        let v = json!({"id":"m","role":"assistant","parts":[{"type":"text","text":"a"},{"type":"context","uri":"x"},{"type":"tool","tool_name":"Bash"},{"type":"text","text":"b"}],"turn_id":"t9","created_at":"2026-07-02T03:02:56.413Z","message_kind":"assistant_step"});
        assert_eq!(
            parse_message(&v),
            ServerMessage {
                tool_parts: vec![json!({"type":"tool","tool_name":"Bash"})],
                role: "assistant".into(),
                content: "a\nb".into(),
                turn_id: Some("t9".into()),
                created_at: Some("2026-07-02T03:02:56.413Z".into()),
                message_kind: Some("assistant_step".into()),
            }
        );
    }
}
