//! The upstream side of the proxy: one streamable-HTTP `POST` per message, the MCP session
//! (protocol version, session id, cached initialize), retries and the error mapping.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::settings::{stamp, McpSettings, Stamp};

mod errors;
mod wire;

use errors::{describe, error, map_error, not_configured};
use wire::{cause, identity_headers, read_sse};

/// The protocol version sent until an initialize negotiates another one.
pub const DEFAULT_PROTOCOL: &str = "2025-06-18";
/// Timeout of the `DELETE` sent at shutdown.
const DELETE_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest non-SSE reply body kept (a JSON-RPC reply is far smaller).
const MAX_BODY: u64 = 64 << 20;

/// The MCP session as the proxy knows it.
struct Session {
    protocol: String,
    sid: Option<String>,
    /// Bumped by every (re)initialize and every settings reload: a request that failed under an
    /// older epoch does not trigger another reinitialize.
    epoch: u64,
    init: Option<Value>,
    initialized: Option<Value>,
    /// The settings changed since the last initialize: reinitialize before the next request.
    stale: bool,
}

struct Config {
    settings: Arc<McpSettings>,
    stamp: Stamp,
}

/// Shared by every in-flight message.
pub struct Upstream {
    http: reqwest::blocking::Client,
    session: Mutex<Session>,
    config: Mutex<Config>,
    /// Set by the file watcher; the per-request stamp check is the fallback.
    pub dirty: Arc<AtomicBool>,
    /// Serializes reinitializations.
    reinit: Mutex<()>,
    reinit_counter: AtomicU64,
    resolve: Box<dyn Fn() -> McpSettings + Send + Sync>,
}

/// One HTTP exchange's outcome, before mapping.
enum Outcome {
    Messages(Vec<Value>),
    Http {
        status: u16,
        body: String,
    },
    Transport(String),
    /// A redirect (never followed): what the engine's rule says of it.
    Redirect(String),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicked handler cannot leave these small states half-updated in a way that matters.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Upstream {
    /// `resolve` is re-run on every reload.
    pub fn new(resolve: Box<dyn Fn() -> McpSettings + Send + Sync>) -> anyhow::Result<Upstream> {
        let settings = resolve();
        let http = reqwest::blocking::Client::builder()
            .timeout(None::<Duration>)
            // The hooks' rule: a redirect would carry the tool call and the identity headers
            // to another origin, and its answer is not OpenViking's.
            .redirect(ov_engine::client::redirect::policy())
            .build()
            .map_err(|e| anyhow::anyhow!("could not build the HTTP client: {e}"))?;
        Ok(Upstream {
            http,
            session: Mutex::new(Session {
                protocol: DEFAULT_PROTOCOL.to_owned(),
                sid: None,
                epoch: 0,
                init: None,
                initialized: None,
                stale: false,
            }),
            config: Mutex::new(Config {
                stamp: stamp(&settings.watched),
                settings: Arc::new(settings),
            }),
            dirty: Arc::new(AtomicBool::new(false)),
            reinit: Mutex::new(()),
            reinit_counter: AtomicU64::new(0),
            resolve,
        })
    }

    /// The files to watch for credential changes.
    pub fn watched(&self) -> Vec<std::path::PathBuf> {
        lock(&self.config).settings.watched.clone()
    }

    /// The current settings, reloaded first when a watched file changed.
    fn settings(&self) -> Arc<McpSettings> {
        let dirty = self.dirty.swap(false, Ordering::AcqRel);
        let mut cfg = lock(&self.config);
        let now = stamp(&cfg.settings.watched);
        if dirty || now != cfg.stamp {
            cfg.stamp = now;
            drop(cfg);
            self.reload();
            cfg = lock(&self.config);
        }
        Arc::clone(&cfg.settings)
    }

    /// Re-resolves the settings. Returns true when they changed; the session is then stale.
    fn reload(&self) -> bool {
        let fresh = (self.resolve)();
        let mut cfg = lock(&self.config);
        cfg.stamp = stamp(&fresh.watched);
        if *cfg.settings == fresh {
            return false;
        }
        eprintln!(
            "ovhook mcp: credentials reloaded (url {}, source {})",
            fresh.display_url(),
            fresh.credential_source
        );
        cfg.settings = Arc::new(fresh);
        drop(cfg);
        let mut s = lock(&self.session);
        s.sid = None;
        s.epoch += 1;
        s.stale = s.init.is_some();
        true
    }

    /// Handles one valid JSON-RPC message (`raw` is its line, forwarded verbatim). Returns the
    /// lines to write to stdout: nothing for notifications and client responses.
    pub fn handle(&self, raw: &str, msg: &Value) -> Vec<Value> {
        let id = msg.get("id");
        let method = msg.get("method").and_then(Value::as_str);
        // A message with an id and no method is the client's response to a server request:
        // forwarded, but nothing is answered to it.
        let expects_reply = id.is_some() && method.is_some();
        let is_init = method == Some("initialize");
        let settings = self.settings();
        let Some(url) = settings.url.as_deref() else {
            return match (expects_reply, id) {
                (true, Some(id)) => vec![not_configured(id, &settings)],
                _ => Vec::new(),
            };
        };

        if is_init {
            let mut s = lock(&self.session);
            s.init = Some(msg.clone());
            s.initialized = None;
            s.protocol = DEFAULT_PROTOCOL.to_owned();
            s.sid = None;
            s.epoch += 1;
            s.stale = false;
        } else {
            if method == Some("notifications/initialized") {
                lock(&self.session).initialized = Some(msg.clone());
            }
            let (stale, epoch) = {
                let s = lock(&self.session);
                (s.stale, s.epoch)
            };
            if stale {
                self.reinitialize(&settings, url, epoch);
            }
        }

        let outcome = self.send_with_retry(&settings, url, raw, is_init, id);
        match outcome {
            Outcome::Messages(messages) => {
                if is_init {
                    self.adopt_protocol(&messages);
                }
                if !expects_reply {
                    return Vec::new();
                }
                if messages.is_empty() {
                    return vec![error(
                        id,
                        -32003,
                        "OpenViking MCP upstream returned an empty response".to_owned(),
                        None,
                    )];
                }
                messages
            }
            other => {
                if !expects_reply {
                    eprintln!(
                        "ovhook mcp: notification failed: {}",
                        describe(&other, &settings)
                    );
                    return Vec::new();
                }
                vec![map_error(id, other, &settings)]
            }
        }
    }

    /// Sends, then retries once: after reloading changed credentials on 401/403, or after a
    /// reinitialize on 400/404 of a non-initialize message while an initialize is cached.
    fn send_with_retry(
        &self,
        settings: &Arc<McpSettings>,
        url: &str,
        raw: &str,
        is_init: bool,
        id: Option<&Value>,
    ) -> Outcome {
        let epoch = lock(&self.session).epoch;
        let first = self.post(settings, url, raw, !is_init, id);
        let Outcome::Http { status, .. } = &first else {
            return first;
        };
        let status = *status;
        let has_init = lock(&self.session).init.is_some();
        if status == 401 || status == 403 {
            if !self.reload() {
                return first;
            }
            let fresh = self.settings();
            let Some(url) = fresh.url.as_deref() else {
                return first;
            };
            if !is_init && has_init {
                let epoch = lock(&self.session).epoch;
                self.reinitialize(&fresh, url, epoch);
            }
            return self.post(&fresh, url, raw, !is_init, id);
        }
        if (status == 400 || status == 404) && !is_init && has_init {
            self.reinitialize(settings, url, epoch);
            return self.post(settings, url, raw, true, id);
        }
        first
    }

    /// Replays the cached initialize (fresh id, no session id) and `notifications/initialized`,
    /// unless another thread already did so since `failed_epoch`. The replies are not forwarded.
    fn reinitialize(&self, settings: &McpSettings, url: &str, failed_epoch: u64) {
        let _one_at_a_time = lock(&self.reinit);
        let (init, initialized) = {
            let mut s = lock(&self.session);
            if s.epoch != failed_epoch && !s.stale {
                return;
            }
            let Some(mut init) = s.init.clone() else {
                return;
            };
            let millis = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis());
            let n = self.reinit_counter.fetch_add(1, Ordering::Relaxed);
            if let Some(o) = init.as_object_mut() {
                o.insert(
                    "id".into(),
                    json!(format!("openviking-proxy-reinit-{millis}-{n}")),
                );
            }
            s.protocol = DEFAULT_PROTOCOL.to_owned();
            s.sid = None;
            s.stale = false;
            (init, s.initialized.clone())
        };
        let body = init.to_string();
        match self.post(settings, url, &body, false, init.get("id")) {
            Outcome::Messages(m) => self.adopt_protocol(&m),
            other => {
                eprintln!(
                    "ovhook mcp: reinitialize failed: {}",
                    describe(&other, settings)
                );
            }
        }
        if let Some(n) = initialized {
            if let other @ (Outcome::Http { .. } | Outcome::Transport(_) | Outcome::Redirect(_)) =
                self.post(settings, url, &n.to_string(), true, None)
            {
                eprintln!(
                    "ovhook mcp: reinitialize notification failed: {}",
                    describe(&other, settings)
                );
            }
        }
        lock(&self.session).epoch += 1;
        eprintln!("ovhook mcp: reinitialized the upstream session");
    }

    /// Takes the negotiated `result.protocolVersion` of an initialize reply.
    fn adopt_protocol(&self, messages: &[Value]) {
        if let Some(v) = messages.iter().find_map(|m| {
            m.get("result")?
                .get("protocolVersion")?
                .as_str()
                .filter(|v| !v.is_empty())
        }) {
            lock(&self.session).protocol = v.to_owned();
        }
    }

    /// One `POST`. A `Mcp-Session-Id` reply header replaces the stored session id. For a request
    /// (`id` given), reading an SSE reply stops at the response carrying that id.
    fn post(
        &self,
        settings: &McpSettings,
        url: &str,
        body: &str,
        with_sid: bool,
        id: Option<&Value>,
    ) -> Outcome {
        let (protocol, sid) = {
            let s = lock(&self.session);
            (s.protocol.clone(), s.sid.clone())
        };
        let mut req = self
            .http
            .post(url)
            .timeout(settings.timeout)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", protocol)
            .body(body.to_owned());
        if let Some(sid) = sid.filter(|_| with_sid) {
            req = req.header("Mcp-Session-Id", sid);
        }
        req = identity_headers(req, settings);
        let resp = match req.send() {
            Ok(r) => r,
            Err(e) => return Outcome::Transport(cause(&e)),
        };
        if let Some(refusal) = ov_engine::client::redirect::refusal_of(&resp) {
            return Outcome::Redirect(refusal);
        }
        if let Some(sid) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
        {
            lock(&self.session).sid = Some(sid.to_owned());
        }
        let status = resp.status().as_u16();
        let is_sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.to_ascii_lowercase().contains("text/event-stream"));
        if !resp.status().is_success() {
            let mut text = String::new();
            let _ = resp.take(64 * 1024).read_to_string(&mut text);
            return Outcome::Http { status, body: text };
        }
        if is_sse {
            read_sse(resp, id)
        } else {
            let mut text = String::new();
            if let Err(e) = resp.take(MAX_BODY).read_to_string(&mut text) {
                return Outcome::Transport(format!("could not read the reply: {e}"));
            }
            // Anchor: an empty or invalid JSON body carries no messages.
            Outcome::Messages(
                serde_json::from_str::<Value>(text.trim())
                    .ok()
                    .into_iter()
                    .collect(),
            )
        }
    }

    /// At shutdown: `DELETE` the session, when the server gave one.
    pub fn close(&self) {
        let Some(sid) = lock(&self.session).sid.clone() else {
            return;
        };
        let settings = Arc::clone(&lock(&self.config).settings);
        let Some(url) = settings.url.as_deref() else {
            return;
        };
        let protocol = lock(&self.session).protocol.clone();
        let req = self
            .http
            .delete(url)
            .timeout(DELETE_TIMEOUT)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", protocol)
            .header("Mcp-Session-Id", sid);
        match identity_headers(req, &settings).send() {
            Ok(r) if r.status().is_success() || r.status().as_u16() == 405 => {}
            Ok(r) => eprintln!("ovhook mcp: delete session: HTTP {}", r.status().as_u16()),
            Err(e) => eprintln!("ovhook mcp: delete session failed: {}", cause(&e)),
        }
    }
}
