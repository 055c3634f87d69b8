//! OpenViking HTTP client: session writes, reads for reconciliation, recall and profile.
//!
//! # Context
//!
//! Every call goes to one OpenViking 0.5.2 server (`ClientConfig::base_url`) with the headers of
//! `docs/openviking-api.md`: `Content-Type: application/json`, `Authorization: Bearer <key>` when a key is set,
//! `X-OpenViking-Account`, `X-OpenViking-User`, `X-OpenViking-Actor-Peer` when set, and `User-Agent`.
//!
//! # Design
//!
//! ```text
//!  operation ──► call(method, path, body, timeout, on_sent) ──► reqwest (blocking, rustls)
//!                        │
//!                        ▼
//!       normalise: 3xx (never followed)          ─► ClientError::NotOpenViking
//!                  2xx, body not {"status":…}     ─► ClientError::NotOpenViking
//!                  non-2xx or {"status":"error"} ─► ClientError::Http{status, code, retryable}
//!                  transport failure             ─► Unreachable | Timeout | Network (status 0)
//!                  otherwise                      ─► body.result ?? body
//! ```
//!
//! | operation | endpoint (0.5.2) |
//! |---|---|
//! | [`Client::add_batch`] | `POST /api/v1/sessions/{id}/messages/batch` |
//! | [`Client::add_one`] | `POST /api/v1/sessions/{id}/messages` |
//! | [`Client::commit`] | `POST /api/v1/sessions/{id}/commit` `{}` |
//! | [`Client::session_meta`] | `GET /api/v1/sessions/{id}` |
//! | [`Client::session_messages`] | `GET /api/v1/sessions/{id}`, `GET /api/v1/fs/ls` of `<uri>/history`, `GET /api/v1/content/read?raw=true` of every `archive_NNN/messages.jsonl` and of the live `messages.jsonl` |
//! | [`Client::health`] | `GET /health` |
//! | [`Client::recall`] | `POST /api/v1/search/search`, then `/search/recall`, then `/search/find` ×2 (+ `content/read`) |
//! | [`Client::profile`] | `GET /api/v1/system/status`, `GET /api/v1/fs/ls`, `GET /api/v1/content/read` |
//!
//! The client never retries: the delivery layer owns retries and journals each attempt.

mod block;
mod body;
mod config;
mod deprecation;
mod error;
mod exchange;
mod from_config;
mod profile;
mod recall;
pub mod redirect;
mod session;
mod transport;

pub use from_config::{client_for, client_until};

use std::time::{Duration, Instant};

use reqwest::header::{
    HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE, USER_AGENT,
};
use serde_json::Value;

use crate::config::ServerUrl;

pub use block::json_escaped_len;
pub(crate) use block::{fit_block, BlockLimit};
pub use config::ClientConfig;
pub use deprecation::Deprecated;
pub use error::ClientError;
pub use profile::ProfileRequest;
pub use recall::{block_uris, items_by_project, project_of, RecallOutcome, RecallRequest};
pub use session::{CommitResult, OutMessage, ServerMessage, SessionMeta};

/// The `User-Agent` sent when [`ClientConfig::user_agent`] is left at its default.
pub const DEFAULT_USER_AGENT: &str = concat!("openviking-memory-zcode/", env!("CARGO_PKG_VERSION"));

/// Most messages one batch request may carry (server and anchor limit).
pub const BATCH_LIMIT: usize = 100;

/// A blocking OpenViking client. Cheap to share by reference across threads (`Send + Sync`).
pub struct Client {
    http: reqwest::blocking::Client,
    base: ServerUrl,
    timeout: Duration,
    deadline: Option<Instant>,
    /// The current project's peer (`x-openviking-actor-peer`), when known.
    actor_peer: Option<String>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base.as_str())
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A successful reply.
pub(crate) struct Reply {
    /// `body.result ?? body`.
    pub(crate) body: Value,
    /// The server's trace id of the reply (`error::trace_id_of`).
    pub(crate) trace_id: Option<String>,
    /// The server says the endpoint is deprecated (`deprecation::deprecated`).
    pub(crate) deprecated: Option<Deprecated>,
}

/// HTTP method of a call.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Method {
    Get,
    Post,
    Delete,
}

impl Client {
    /// Builds a client. Fails on an unusable base URL or a header value with forbidden characters.
    ///
    /// Credentials in the URL's userinfo (`http://KEY@host`) are taken out of it: the key is
    /// used as the API key when none is set, and the URL kept (and shown in errors) has none.
    pub fn new(cfg: ClientConfig) -> Result<Client, ClientError> {
        let (base, url_key) = ServerUrl::parse(&cfg.base_url)
            .map_err(|e| ClientError::Config(format!("base URL: {e}")))?
            .split_key();
        let api_key = cfg
            .api_key
            .clone()
            .filter(|k| !k.expose().is_empty())
            .or(url_key);
        reqwest::Url::parse(&base)
            .map_err(|e| ClientError::Config(format!("base URL {base}: {e}")))?;
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = &api_key {
            let mut v =
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    ClientError::Config(
                        "the API key contains characters not allowed in a header".into(),
                    )
                })?;
            v.set_sensitive(true);
            headers.insert(AUTHORIZATION, v);
        }
        let optional = [
            ("x-openviking-account", &cfg.account),
            ("x-openviking-user", &cfg.user),
            ("x-openviking-actor-peer", &cfg.actor_peer),
        ];
        for (name, value) in optional {
            if let Some(value) = value.as_deref().filter(|v| !v.is_empty()) {
                let v = HeaderValue::from_str(value).map_err(|_| {
                    ClientError::Config(format!("{name}: value not allowed in a header"))
                })?;
                headers.insert(HeaderName::from_static(name), v);
            }
        }
        let ua = HeaderValue::from_str(&cfg.user_agent)
            .map_err(|_| ClientError::Config("user agent: value not allowed in a header".into()))?;
        headers.insert(USER_AGENT, ua);
        let connect_timeout = match cfg.deadline {
            Some(d) => cfg
                .connect_timeout
                .min(d.saturating_duration_since(Instant::now()))
                .max(Duration::from_millis(1)),
            None => cfg.connect_timeout,
        };
        let http = reqwest::blocking::Client::builder()
            .default_headers(headers)
            .timeout(cfg.timeout)
            .connect_timeout(connect_timeout)
            // Loopback servers are the norm; never route them through an environment proxy.
            .no_proxy()
            // A redirect would carry the prompt, the key and the account headers to wherever
            // it points: never followed, and answered as not OpenViking's ([`redirect`]).
            .redirect(redirect::policy())
            .build()
            .map_err(|e| ClientError::Config(format!("HTTP client: {e}")))?;
        Ok(Client {
            http,
            base,
            timeout: cfg.timeout,
            deadline: cfg.deadline,
            actor_peer: cfg.actor_peer.clone().filter(|p| !p.is_empty()),
        })
    }

    /// The normalised base URL (no trailing slash).
    pub fn base_url(&self) -> &str {
        self.base.as_str()
    }

    /// `GET /api/v1/system/status` with our credentials: the user the server
    /// sees us as (`None` when it names none). An authenticated probe: a wrong
    /// key fails here with 401/403.
    pub fn system_user(&self) -> Result<Option<String>, ClientError> {
        let status = self.call(Method::Get, "/api/v1/system/status", None, None, None)?;
        Ok(status
            .get("user")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_owned))
    }

    /// `GET /health`: `Ok(())` when the server answers 2xx with `healthy` not `false`.
    pub fn health(&self) -> Result<(), ClientError> {
        let v = self.call(Method::Get, "/health", None, None, None)?;
        if v.get("healthy").and_then(Value::as_bool) == Some(false) {
            return Err(ClientError::Http {
                status: 503,
                code: Some("UNHEALTHY".into()),
                message: "server reports healthy=false".into(),
                retryable: true,
                trace_id: None,
            });
        }
        Ok(())
    }
}
/// Percent-encodes one path segment or query value (JS `encodeURIComponent`).
pub(crate) fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'_' | b'.' | b'!' | b'~' | b'*' | b'\'' | b'(' | b')'
            )
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Cuts `s` to at most `max` bytes at a char boundary.
pub(crate) fn truncate_utf8(s: &mut String, max: usize) {
    if s.len() <= max {
        return;
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn encodes_like_encode_uri_component() {
        assert_eq!(enc("viking://user"), "viking%3A%2F%2Fuser");
        assert_eq!(enc("zc-sess_42"), "zc-sess_42");
        assert_eq!(enc("a b/é"), "a%20b%2F%C3%A9");
    }
}
