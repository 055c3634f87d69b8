//! Reading back everything the OpenViking server holds for one session: live and archived
//! messages.
//!
//! TODO(h/client): replace [`session_messages`]'s body by
//! `ov_engine::client::Client::session_messages(session_id)` once it lands on main. Until then
//! this reader talks to the server directly (OpenViking 0.5.2):
//!
//! * `GET /api/v1/sessions/{id}` → `uri`, `commit_count` (404: the server holds nothing);
//! * each archive `archive_001..=archive_{commit_count}`: the raw `messages.jsonl` of the
//!   archive folder through `GET /api/v1/content/read` (the archives API only serves archives
//!   whose summary is done; the raw file exists as soon as the commit's phase 1 returns);
//! * live messages: `GET /api/v1/sessions/{id}/context` with a huge token budget.
//!
//! A message seen twice under one `id` (live and archived) is one message.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::Value;

use super::count::ServerMessage;
use super::session::content_text;

/// Where and as whom to read.
#[derive(Debug, Clone)]
pub struct ServerAccess {
    /// Base URL, without a trailing slash.
    pub url: String,
    /// `X-API-Key`.
    pub api_key: Option<String>,
    /// `X-OpenViking-Account`.
    pub account: Option<String>,
    /// `X-OpenViking-User`.
    pub user: Option<String>,
}

struct Reader {
    access: ServerAccess,
    http: reqwest::blocking::Client,
}

impl Reader {
    fn get(&self, path: &str, query: &[(&str, &str)]) -> anyhow::Result<Option<Value>> {
        let url = format!("{}{path}", self.access.url.trim_end_matches('/'));
        let mut req = self.http.get(&url).query(query);
        if let Some(k) = &self.access.api_key {
            req = req.header("X-API-Key", k);
        }
        if let Some(a) = &self.access.account {
            req = req.header("X-OpenViking-Account", a);
        }
        if let Some(u) = &self.access.user {
            req = req.header("X-OpenViking-User", u);
        }
        let resp = req
            .send()
            .with_context(|| format!("could not reach the server at {url}"))?;
        let status = resp.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let body: Value = resp
            .json()
            .with_context(|| format!("could not read the reply of {url}"))?;
        if !status.is_success() {
            bail!("{url}: HTTP {status}: {body}");
        }
        if body.get("status").and_then(Value::as_str) == Some("error") {
            // 0.5.2 answers some missing resources with 200 + an error envelope.
            if body.pointer("/error/code").and_then(Value::as_str) == Some("NOT_FOUND") {
                return Ok(None);
            }
            bail!("{url}: {body}");
        }
        Ok(Some(body.get("result").cloned().unwrap_or(Value::Null)))
    }
}

/// Every message the server holds for `session_id`, archived first (oldest archive first),
/// then live, without repeats of one message id.
pub fn session_messages(
    access: &ServerAccess,
    session_id: &str,
) -> anyhow::Result<Vec<ServerMessage>> {
    let reader = Reader {
        access: access.clone(),
        http: reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .context("could not build the HTTP client")?,
    };
    let sid = session_id;
    let Some(meta) = reader.get(&format!("/api/v1/sessions/{sid}"), &[])? else {
        return Ok(Vec::new());
    };
    let uri = meta
        .get("uri")
        .and_then(Value::as_str)
        .with_context(|| format!("session {sid}: no uri in {meta}"))?
        .to_owned();
    let commits = meta
        .get("commit_count")
        .and_then(Value::as_u64)
        .unwrap_or(0);

    let mut raw: Vec<Value> = Vec::new();
    for n in 1..=commits {
        let file = format!("{uri}/history/archive_{n:03}/messages.jsonl");
        let Some(text) = reader.get("/api/v1/content/read", &[("uri", &file)])? else {
            bail!("session {sid}: archive {n} of {commits} has no readable messages ({file})");
        };
        let text = text.as_str().unwrap_or_default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            raw.push(
                serde_json::from_str(line)
                    .with_context(|| format!("session {sid}: bad line in {file}"))?,
            );
        }
    }
    let context = reader.get(
        &format!("/api/v1/sessions/{sid}/context"),
        &[("token_budget", "1000000000")],
    )?;
    if let Some(live) = context
        .as_ref()
        .and_then(|c| c.get("messages"))
        .and_then(Value::as_array)
    {
        raw.extend(live.iter().cloned());
    }

    let mut seen = BTreeSet::new();
    Ok(raw
        .iter()
        .filter(|m| match m.get("id").and_then(Value::as_str) {
            Some(id) => seen.insert(id.to_owned()),
            None => true,
        })
        .map(to_message)
        .collect())
}

fn to_message(m: &Value) -> ServerMessage {
    let content = m
        .get("parts")
        .and_then(content_text)
        .or_else(|| m.get("content").and_then(content_text))
        .unwrap_or_default();
    ServerMessage {
        role: m
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        content,
        turn_id: m.get("turn_id").and_then(Value::as_str).map(str::to_owned),
    }
}
