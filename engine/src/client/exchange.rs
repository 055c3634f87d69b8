//! One request and its answer, normalised (the table of the module docs).

use std::time::{Duration, Instant};

use reqwest::header::CONTENT_TYPE;
use serde_json::Value;

use super::{
    body, deprecation, error, redirect, truncate_utf8, Client, ClientError, Method, Reply,
};

impl Client {
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
