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

mod body;
mod deprecation;
mod error;
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

pub use deprecation::Deprecated;
pub use error::ClientError;
pub use profile::ProfileRequest;
pub use recall::{block_uris, items_by_project, project_of, RecallOutcome, RecallRequest};
pub use session::{CommitResult, OutMessage, ServerMessage, SessionMeta};

/// The `User-Agent` sent when [`ClientConfig::user_agent`] is left at its default.
pub const DEFAULT_USER_AGENT: &str = concat!("openviking-memory-zcode/", env!("CARGO_PKG_VERSION"));

/// Most messages one batch request may carry (server and anchor limit).
pub const BATCH_LIMIT: usize = 100;

/// Where and as whom to talk to OpenViking.
#[derive(Clone)]
pub struct ClientConfig {
    /// Server root, e.g. `http://127.0.0.1:1933` (a trailing `/` is ignored).
    pub base_url: String,
    /// API key, sent as `Authorization: Bearer <key>`. In `trusted` mode this is the root key.
    pub api_key: Option<String>,
    /// `X-OpenViking-Account` (dev and trusted modes; ignored by api_key mode).
    pub account: Option<String>,
    /// `X-OpenViking-User` (dev and trusted modes; ignored by api_key mode).
    pub user: Option<String>,
    /// `X-OpenViking-Actor-Peer`; `None` or empty sends no header.
    pub actor_peer: Option<String>,
    /// `User-Agent` header.
    pub user_agent: String,
    /// Upper bound of one whole call (connect, send, reply).
    pub timeout: Duration,
    /// Upper bound of establishing the connection.
    pub connect_timeout: Duration,
    /// No call may run past this instant (a hook's whole budget); a call started after it
    /// fails at once with a connect [`ClientError::Timeout`], like a server that never answers.
    pub deadline: Option<Instant>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:1933".to_owned(),
            api_key: None,
            account: None,
            user: None,
            actor_peer: None,
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            timeout: Duration::from_secs(15),
            connect_timeout: Duration::from_secs(2),
            deadline: None,
        }
    }
}

impl std::fmt::Debug for ClientConfig {
    // The key is redacted: configs end up in logs and panic messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("account", &self.account)
            .field("user", &self.user)
            .field("actor_peer", &self.actor_peer)
            .field("user_agent", &self.user_agent)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("deadline", &self.deadline)
            .finish()
    }
}

/// A blocking OpenViking client. Cheap to share by reference across threads (`Send + Sync`).
pub struct Client {
    http: reqwest::blocking::Client,
    base: String,
    timeout: Duration,
    deadline: Option<Instant>,
    /// The current project's peer (`x-openviking-actor-peer`), when known.
    actor_peer: Option<String>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base)
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
        let (base, url_key) =
            crate::config::split_url_credentials(cfg.base_url.trim().trim_end_matches('/'));
        let base = base.trim_end_matches('/').to_owned();
        let api_key = cfg.api_key.clone().filter(|k| !k.is_empty()).or(url_key);
        let parsed = reqwest::Url::parse(&base)
            .map_err(|e| ClientError::Config(format!("base URL {base:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ClientError::Config(format!(
                "base URL {base:?}: scheme must be http or https"
            )));
        }
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = api_key.as_deref() {
            let mut v = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
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
        &self.base
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

    /// One request, normalised as `docs/openviking-api.md` says. Returns `body.result ?? body` on success.
    ///
    /// `timeout` overrides the configured one (recall uses the time left before its deadline).
    /// `on_sent` fires once the transport has taken the whole body, before the reply is read.
    pub(crate) fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        timeout: Option<Duration>,
        on_sent: Option<&dyn Fn()>,
    ) -> Result<Value, ClientError> {
        let bytes = match body {
            Some(b) => Some(serde_json::to_vec(b).map_err(|e| ClientError::Config(e.to_string()))?),
            None => None,
        };
        self.call_raw(method, path, bytes, timeout, on_sent)
    }

    /// [`Client::call`] with an already serialised body (keeps the caller's key order).
    pub(crate) fn call_raw(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        timeout: Option<Duration>,
        on_sent: Option<&dyn Fn()>,
    ) -> Result<Value, ClientError> {
        self.exchange(method, path, body, timeout, on_sent)
            .map(|r| r.body)
    }

    /// One request: the reply's `body.result ?? body` and its trace id.
    pub(crate) fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        timeout: Option<Duration>,
        on_sent: Option<&dyn Fn()>,
    ) -> Result<Reply, ClientError> {
        let url = format!("{}{}", self.base, path);
        let mut req = match method {
            Method::Get => self.http.get(&url),
            Method::Post => self.http.post(&url),
            Method::Delete => self.http.delete(&url),
        };
        let timeout = match self.deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left < Duration::from_millis(20) {
                    return Err(ClientError::Timeout { url, connect: true });
                }
                Some(timeout.unwrap_or(self.timeout).min(left))
            }
            None => timeout,
        };
        if let Some(t) = timeout {
            req = req.timeout(t);
        }
        let has_body = body.is_some();
        let bytes = body.unwrap_or_default();
        let resp = match on_sent {
            None => {
                if has_body {
                    req = req.body(bytes);
                }
                req.send().map_err(|e| transport_error(&url, &e))?
            }
            // reqwest pumps the body from inside `send()`; a helper thread runs `send()` so that this
            // thread can call `on_sent` (neither `'static` nor `Send`) the moment the body is taken.
            Some(on_sent) => {
                let (tx, rx) = std::sync::mpsc::channel();
                let req = req.body(body::notifying(bytes, tx));
                let mut signalled = false;
                let sent = std::thread::scope(|s| {
                    let sender = s.spawn(move || req.send());
                    if rx.recv().is_ok() {
                        signalled = true;
                        on_sent();
                    }
                    sender.join()
                });
                match sent {
                    Ok(Ok(r)) => r,
                    // The body never fully left: the connection failed (refused, reset) or was never
                    // made. reqwest then reports the body pump's error, which hides the connect error;
                    // what matters to callers is that the server cannot have processed the request.
                    Ok(Err(e)) if !signalled => {
                        return Err(match transport_error(&url, &e) {
                            ClientError::Timeout { url, .. } => {
                                ClientError::Timeout { url, connect: true }
                            }
                            ClientError::Network { url, message }
                            | ClientError::Unreachable { url, message } => {
                                ClientError::Unreachable { url, message }
                            }
                            other => other,
                        });
                    }
                    Ok(Err(e)) => return Err(transport_error(&url, &e)),
                    Err(_) => {
                        return Err(ClientError::Network {
                            url,
                            message: "HTTP sender thread panicked".into(),
                        });
                    }
                }
            }
        };
        let status = resp.status().as_u16();
        if let Some(message) = redirect::refusal_of(&resp) {
            return Err(ClientError::NotOpenViking { url, message });
        }
        let deprecated = deprecation::deprecated(path, resp.headers());
        let request_id = resp
            .headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none")
            .to_owned();
        let raw = resp.bytes().map_err(|e| transport_error(&url, &e))?;
        let parsed: Option<Value> = serde_json::from_slice(&raw).ok();
        let is_envelope = parsed
            .as_ref()
            .is_some_and(|v| v.get("status").is_some_and(Value::is_string));
        if (200..300).contains(&status) && !is_envelope {
            // Counting this as an acknowledgement would lose the message: whoever answered
            // (a proxy, a captive portal) is not OpenViking.
            let mut message = format!(
                "HTTP {status} with a body that is not OpenViking's JSON (content type {content_type}, {} B)",
                raw.len()
            );
            truncate_utf8(&mut message, 400);
            return Err(ClientError::NotOpenViking { url, message });
        }
        // Anchor: an unparsable error body reads as `{}`.
        let parsed = parsed.unwrap_or_else(|| Value::Object(Default::default()));
        let envelope_error = parsed.get("status").and_then(Value::as_str) == Some("error");
        if !(200..300).contains(&status) || envelope_error {
            return Err(error::http_error(status, &parsed, request_id.as_deref()));
        }
        let trace_id = error::trace_id_of(&parsed, request_id.as_deref());
        let body = match parsed {
            Value::Object(mut m) => match m.remove("result") {
                Some(r) if !r.is_null() => r,
                Some(_) | None => Value::Object(m),
            },
            other => other,
        };
        Ok(Reply {
            body,
            trace_id,
            deprecated,
        })
    }

    /// Time left before `deadline`, capped by the configured timeout; `None` when it has passed.
    pub(crate) fn budget(&self, deadline: Instant) -> Option<Duration> {
        let deadline = self.deadline.map_or(deadline, |d| d.min(deadline));
        let left = deadline.checked_duration_since(Instant::now())?;
        if left < Duration::from_millis(20) {
            return None;
        }
        Some(left.min(self.timeout))
    }
}

fn transport_error(url: &str, e: &reqwest::Error) -> ClientError {
    let url = url.to_owned();
    // The source chain holds the useful reason ("Connection refused"); reqwest's own text is generic.
    let mut message = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        message = format!("{message}: {s}");
        src = s.source();
    }
    truncate_utf8(&mut message, 400);
    if e.is_timeout() {
        ClientError::Timeout {
            url,
            connect: e.is_connect(),
        }
    } else if e.is_connect() {
        ClientError::Unreachable { url, message }
    } else {
        ClientError::Network { url, message }
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

/// Length of `s` once escaped as a JSON string body by serde_json (without the quotes).
///
/// Hook output limits apply to the serialised JSON, so blocks are sized with this, not `len()`.
pub fn json_escaped_len(s: &str) -> usize {
    s.chars().map(escaped_char_len).sum()
}

/// Length of `c` once escaped as part of a JSON string body by serde_json.
fn escaped_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// What a block may hold: its JSON-escaped length in bytes and its length in characters (a
/// harness may count either).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockLimit {
    /// Most JSON-escaped bytes.
    pub bytes: usize,
    /// Most characters.
    pub chars: usize,
}

impl BlockLimit {
    /// A limit in bytes only.
    #[cfg(test)]
    fn bytes(bytes: usize) -> BlockLimit {
        BlockLimit {
            bytes,
            chars: usize::MAX,
        }
    }

    /// The limit left after `s`, or `None` when `s` does not fit.
    fn take(self, s: &str) -> Option<BlockLimit> {
        Some(BlockLimit {
            bytes: self.bytes.checked_sub(json_escaped_len(s))?,
            chars: self.chars.checked_sub(s.chars().count())?,
        })
    }
}

/// Keeps whole lines of `text` so that `prefix + kept + suffix` fits `limit` (its JSON-escaped
/// length and its characters).
///
/// When lines had to be dropped, a final `[truncated]` line is added (it is counted). When not
/// even the first line fits, its longest head that does is kept, cut at a character boundary.
pub(crate) fn fit_block(
    prefix: &str,
    text: &str,
    suffix: &str,
    limit: BlockLimit,
) -> Option<String> {
    let whole = format!("{prefix}{text}{suffix}");
    if limit.take(&whole).is_some() {
        return Some(whole);
    }
    const MARK: &str = "\n[truncated]";
    let mut room = limit.take(prefix)?.take(suffix)?.take(MARK)?;
    let mut kept = String::new();
    for (i, line) in text.split('\n').enumerate() {
        let sep = if i > 0 { "\n" } else { "" };
        let Some(left) = room.take(sep).and_then(|r| r.take(line)) else {
            if kept.trim().is_empty() {
                // One line longer than the room: its head, cut at a character boundary.
                if let Some(mut left) = room.take(sep) {
                    kept.push_str(sep);
                    for c in line.chars() {
                        let Some(after) = left.take(c.encode_utf8(&mut [0u8; 4])) else {
                            break;
                        };
                        left = after;
                        kept.push(c);
                    }
                }
            }
            break;
        };
        kept.push_str(sep);
        kept.push_str(line);
        room = left;
    }
    if kept.trim().is_empty() {
        return None;
    }
    Some(format!("{prefix}{kept}{MARK}{suffix}"))
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

    #[test]
    fn escaped_len_matches_serde_json() {
        for s in [
            "plain",
            "quote \" back \\ nl \n tab \t",
            "ctl \u{1} é 中",
            "<tag>&",
        ] {
            let json = serde_json::to_string(s).unwrap_or_default();
            assert_eq!(json_escaped_len(s), json.len() - 2, "{s:?}");
        }
    }

    #[test]
    fn fit_block_keeps_whole_lines_under_the_limit() {
        let text = (0..100)
            .map(|i| format!("line {i} \"quoted\""))
            .collect::<Vec<_>>()
            .join("\n");
        let block = fit_block("<a>\n", &text, "\n</a>", BlockLimit::bytes(300)).unwrap_or_default();
        assert!(json_escaped_len(&block) <= 300);
        assert!(block.starts_with("<a>\nline 0 "));
        assert!(block.ends_with("\n[truncated]\n</a>"));
        assert_eq!(fit_block("<a>", "x", "</a>", BlockLimit::bytes(5)), None);
    }

    #[test]
    fn one_line_over_the_limit_is_cut_at_a_character_boundary() {
        let line = "日本語 \"quoted\" ".repeat(2_000);
        for limit in [
            BlockLimit::bytes(1_000),
            BlockLimit {
                bytes: 30_000,
                chars: 500,
            },
        ] {
            let block = fit_block("<a>\n", &line, "\n</a>", limit).expect("a head of the line");
            assert!(json_escaped_len(&block) <= limit.bytes, "{limit:?}");
            assert!(block.chars().count() <= limit.chars, "{limit:?}");
            assert!(block.ends_with("\n[truncated]\n</a>"));
            let head = block
                .strip_prefix("<a>\n")
                .and_then(|b| b.strip_suffix("\n[truncated]\n</a>"))
                .expect("framed");
            assert!(head.len() > 100 && line.starts_with(head), "{head}");
        }
    }

    proptest::proptest! {
        /// Whatever the text and the limit: the block fits both counts, is the frame around a
        /// head of the text, and is there whenever the text's first character fits.
        #[test]
        fn a_block_fits_and_is_a_head_of_the_text(
            text in "[a-z é日\n\"\\\\\u{1}]{0,300}",
            bytes in 0usize..1_500,
            chars in 0usize..500,
        ) {
            let limit = BlockLimit { bytes, chars };
            let block = fit_block("<a>\n", &text, "\n</a>", limit);
            if let Some(b) = &block {
                proptest::prop_assert!(json_escaped_len(b) <= bytes);
                proptest::prop_assert!(b.chars().count() <= chars);
                let body = b
                    .strip_prefix("<a>\n")
                    .and_then(|b| b.strip_suffix("\n</a>"))
                    .expect("framed");
                let head = body.strip_suffix("\n[truncated]").unwrap_or(body);
                proptest::prop_assert!(text.starts_with(head), "{:?}", head);
            }
            let fixed = "<a>\n\n</a>\n[truncated]";
            let first_fits = text.chars().next().is_some_and(|c| {
                !c.is_whitespace()
                    && limit
                        .take(fixed)
                        .and_then(|l| l.take(c.encode_utf8(&mut [0u8; 4])))
                        .is_some()
            });
            if first_fits {
                proptest::prop_assert!(block.is_some());
            }
        }
    }

    #[test]
    fn whole_lines_are_kept_under_a_character_limit() {
        let text = "日本語日本語\n".repeat(100);
        let limit = BlockLimit {
            bytes: 100_000,
            chars: 200,
        };
        let block = fit_block("<a>\n", &text, "</a>", limit).expect("fits");
        assert!(block.chars().count() <= 200);
        assert!(block.contains("日本語日本語\n日本語日本語\n[truncated]"));
    }

    #[test]
    fn debug_redacts_the_key() {
        let cfg = ClientConfig {
            api_key: Some("secret-key-123".into()),
            ..ClientConfig::default()
        };
        assert!(!format!("{cfg:?}").contains("secret-key-123"));
    }
}
