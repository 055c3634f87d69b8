//! The wire details of one upstream exchange: the identity headers, the SSE reply reader, and
//! transport errors described without the URL.

use std::io::{BufRead, BufReader};

use serde_json::Value;

use super::Outcome;
use crate::mcp::settings::McpSettings;
use crate::mcp::sse::SseParser;

pub(super) fn identity_headers(
    mut req: reqwest::blocking::RequestBuilder,
    settings: &McpSettings,
) -> reqwest::blocking::RequestBuilder {
    if let Some(key) = &settings.api_key {
        req = req.header("Authorization", format!("Bearer {}", key.expose()));
    }
    if let Some(a) = &settings.account {
        req = req.header("X-OpenViking-Account", a);
    }
    if let Some(u) = &settings.user {
        req = req.header("X-OpenViking-User", u);
    }
    if let Some(p) = &settings.actor_peer {
        req = req.header("X-OpenViking-Actor-Peer", p);
    }
    req.header("User-Agent", &settings.user_agent)
}

/// Reads SSE events line by line. For a request, stops once the response with its id arrived
/// (a server may keep the stream open after it).
pub(super) fn read_sse(resp: reqwest::blocking::Response, id: Option<&Value>) -> Outcome {
    let mut parser = SseParser::default();
    let mut out = Vec::new();
    let mut reader = BufReader::new(resp);
    let mut line = String::new();
    loop {
        line.clear();
        let n = match reader.read_line(&mut line) {
            Ok(n) => n,
            Err(e) => return Outcome::Transport(format!("could not read the SSE stream: {e}")),
        };
        let event = if n == 0 {
            parser.finish()
        } else {
            parser.line(&line)
        };
        match event {
            Ok(Some(msg)) => {
                let done = id.is_some_and(|id| is_response_to(&msg, id));
                out.push(msg);
                if done {
                    return Outcome::Messages(out);
                }
            }
            Ok(None) => {}
            Err(e) => return Outcome::Transport(e.to_string()),
        }
        if n == 0 {
            return Outcome::Messages(out);
        }
    }
}

fn is_response_to(msg: &Value, id: &Value) -> bool {
    msg.get("id") == Some(id) && (msg.get("result").is_some() || msg.get("error").is_some())
}

/// A reqwest error and its sources, without the URL (it may carry credentials).
pub(super) fn cause(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        "timed out".to_owned()
    } else if e.is_connect() {
        "connection failed".to_owned()
    } else {
        "request failed".to_owned()
    };
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        text.push_str(": ");
        text.push_str(&s.to_string());
        src = s.source();
    }
    text
}
