//! Typed failures of the OpenViking client and their retry classification (`docs/openviking-api.md`).

/// A failed OpenViking call.
///
/// Whether a failure is retryable is decided by [`crate::failure::status_is_retryable`]; what it
/// means for the messages a send carried, by [`crate::failure::Failure::classify`].
/// No variant ever carries the API key: URLs never contain it and headers are not copied here.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server could not be reached: connection refused, DNS failure, no route.
    #[error("OpenViking unreachable at {url}: {message}")]
    Unreachable {
        /// The request URL (never holds credentials).
        url: String,
        /// The transport's reason.
        message: String,
    },
    /// The call did not finish in time. `connect` tells whether the connection was never established.
    #[error("OpenViking call to {url} timed out{}", if *connect { " while connecting" } else { "" })]
    Timeout {
        /// The request URL.
        url: String,
        /// True when the timeout hit before the connection was established.
        connect: bool,
    },
    /// Another transport failure after connecting, e.g. the reply was cut mid-body.
    #[error("OpenViking transport error on {url}: {message}")]
    Network {
        /// The request URL.
        url: String,
        /// The transport's reason.
        message: String,
    },
    /// The server answered with a failure: a non-2xx status or an envelope with `status:"error"`.
    #[error("OpenViking HTTP {status}{}: {message}", code.as_deref().map(|c| format!(" {c}")).unwrap_or_default())]
    Http {
        /// HTTP status (a 2xx when only the envelope said `error`).
        status: u16,
        /// `error.code` from the envelope, e.g. `UNAUTHENTICATED`, `NOT_FOUND`.
        code: Option<String>,
        /// `error.message` (or a generic text).
        message: String,
        /// Whether a later attempt may succeed (see the type docs).
        retryable: bool,
        /// The server's trace id of the reply (see `trace_id_of`).
        trace_id: Option<String>,
    },
    /// The reply did not come from OpenViking: a 2xx whose body is not OpenViking's JSON
    /// envelope (a proxy's or captive portal's HTML page), or a redirect (never followed: it
    /// would carry the prompt and the account headers to another origin). Nothing is known
    /// to have reached the server; classified like an unreachable server.
    #[error("OpenViking at {url} did not answer: {message}")]
    NotOpenViking {
        /// The request URL.
        url: String,
        /// What came back instead (status, content type, redirect target's origin).
        message: String,
    },
    /// A successful reply whose JSON did not have the shape the operation needs.
    #[error("OpenViking reply from {url} not understood: {message}")]
    Decode {
        /// The request URL.
        url: String,
        /// What was wrong.
        message: String,
    },
    /// The client could not be built: bad base URL, or a header value with forbidden characters.
    #[error("invalid OpenViking client configuration: {0}")]
    Config(String),
}

impl ClientError {
    /// Whether retrying the same call later may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Unreachable { .. }
            | Self::Timeout { .. }
            | Self::Network { .. }
            | Self::NotOpenViking { .. } => true,
            Self::Http { retryable, .. } => *retryable,
            Self::Decode { .. } | Self::Config(_) => false,
        }
    }

    /// Whether the server could not be reached at all (nothing was delivered).
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            Self::Unreachable { .. }
                | Self::Timeout { connect: true, .. }
                | Self::NotOpenViking { .. }
        )
    }

    /// The HTTP status, or 0 when no status was received (transport failure, configuration).
    pub fn status(&self) -> u16 {
        match self {
            Self::Http { status, .. } => *status,
            Self::Decode { .. } => 200,
            _ => 0,
        }
    }

    /// The server's trace id of the failed reply, when it answered.
    pub fn trace_id(&self) -> Option<&str> {
        match self {
            Self::Http { trace_id, .. } => trace_id.as_deref(),
            _ => None,
        }
    }

    /// The server's `error.code`, when it sent one.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Http { code, .. } => code.as_deref(),
            _ => None,
        }
    }
}

/// The trace id of a reply: `result.trace_id`, `error.trace_id` or `trace_id` of the body
/// (the first non-empty), else the `X-Request-Id` header the server sets on every reply.
pub(crate) fn trace_id_of(body: &serde_json::Value, request_id: Option<&str>) -> Option<String> {
    ["/result/trace_id", "/error/trace_id", "/trace_id"]
        .iter()
        .filter_map(|p| body.pointer(p).and_then(serde_json::Value::as_str))
        .chain(request_id)
        .map(str::trim)
        .find(|t| !t.is_empty())
        .map(|t| {
            let mut t = t.to_owned();
            crate::client::truncate_utf8(&mut t, 200);
            t
        })
}

/// Builds the failure for a non-2xx reply or a 2xx envelope with `status:"error"`.
///
/// `body` is the parsed reply (`{}` when it was not JSON). The anchor's `error` is `body.error || body`.
pub(crate) fn http_error(
    status: u16,
    body: &serde_json::Value,
    request_id: Option<&str>,
) -> ClientError {
    let error = match body.get("error") {
        Some(e) if !e.is_null() => e,
        _ => body,
    };
    let code = error
        .get("code")
        .and_then(|c| c.as_str())
        .map(str::to_owned);
    let message = error
        .get("message")
        .and_then(|m| m.as_str())
        .map(str::to_owned)
        .or_else(|| {
            // FastAPI validation errors carry `detail`; keep a short form of it.
            body.get("detail").map(|d| {
                let mut s = d.to_string();
                crate::client::truncate_utf8(&mut s, 500);
                s
            })
        })
        .unwrap_or_else(|| format!("HTTP {status}"));
    // Validation failures name the offending field in `details`; recall's legacy detection reads it.
    let message = match error.get("details") {
        Some(d) if matches!(status, 400 | 422) && !d.is_null() => {
            let mut m = format!("{message} (details: {d})");
            crate::client::truncate_utf8(&mut m, 600);
            m
        }
        _ => message,
    };
    ClientError::Http {
        status,
        code,
        message,
        retryable: crate::failure::status_is_retryable(
            status,
            error
                .pointer("/details/retryable")
                .and_then(serde_json::Value::as_bool),
        ),
        trace_id: trace_id_of(body, request_id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conflicts_follow_the_servers_flag() {
        let conflict = json!({"error": {"code": "CONFLICT", "details": {"retryable": true}}});
        assert!(http_error(409, &conflict, None).is_retryable());
        let terminal = json!({"error": {"details": {"retryable": false}}});
        assert!(!http_error(409, &terminal, None).is_retryable());
        assert!(http_error(503, &json!({}), None).is_retryable());
        assert!(!http_error(401, &json!({}), None).is_retryable());
    }

    #[test]
    fn envelope_fields_are_kept() {
        let e = http_error(
            401,
            &json!({"status":"error","error":{"code":"UNAUTHENTICATED","message":"Invalid API key","trace_id":"tr-1"}}),
            Some("req-1"),
        );
        assert_eq!(e.trace_id(), Some("tr-1"));
        assert_eq!(
            http_error(401, &json!({}), Some("req-1")).trace_id(),
            Some("req-1")
        );
        assert_eq!(e.status(), 401);
        assert_eq!(e.code(), Some("UNAUTHENTICATED"));
        assert!(!e.is_retryable());
        assert!(e.to_string().contains("Invalid API key"));
    }
}
