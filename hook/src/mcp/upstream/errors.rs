//! The JSON-RPC errors the proxy answers in the upstream's stead (not configured, auth, HTTP,
//! transport, redirect), with the anchor's codes and `data`, and their one-line log form.

use serde_json::{json, Value};

use super::Outcome;
use crate::mcp::settings::McpSettings;

pub(super) fn error(id: Option<&Value>, code: i64, message: String, data: Option<Value>) -> Value {
    let mut err = serde_json::Map::new();
    err.insert("code".into(), json!(code));
    err.insert("message".into(), json!(message));
    if let Some(d) = data {
        err.insert("data".into(), d);
    }
    json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": err})
}

pub(super) fn not_configured(id: &Value, settings: &McpSettings) -> Value {
    let path = settings.watched.first().map_or_else(
        || "~/.openviking/ovcli.conf".to_owned(),
        |p| p.display().to_string(),
    );
    error(
        Some(id),
        -32001,
        format!(
            "OpenViking is not configured: no server URL (url = off). Run `ovhook install --harness zcode --url http://127.0.0.1:1933 [--api-key KEY]`, \
             put {{\"url\": \"http://127.0.0.1:1933\", \"api_key\": \"...\"}} in {path}, or set OPENVIKING_URL. \
             The proxy picks up the file without a restart."
        ),
        Some(json!({"configured": false, "credentialPath": path})),
    )
}

/// Anchor `serverMessage`: `error.message`, else `detail`, else the body with whitespace
/// collapsed, at most 500 chars.
fn server_message(body: &str) -> Option<String> {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        if let Some(m) = v
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
        {
            return Some(m.to_owned());
        }
        match v.get("detail") {
            Some(Value::String(s)) => return Some(s.clone()),
            Some(Value::Null) | None => {}
            Some(other) => return Some(other.to_string()),
        }
    }
    let collapsed = body.split_whitespace().collect::<Vec<_>>().join(" ");
    (!collapsed.is_empty()).then(|| collapsed.chars().take(500).collect())
}

pub(super) fn map_error(id: Option<&Value>, outcome: Outcome, settings: &McpSettings) -> Value {
    match outcome {
        Outcome::Http { status, body } if status == 401 || status == 403 => {
            let mut data = serde_json::Map::new();
            data.insert("status".into(), json!(status));
            data.insert(
                "credentialSource".into(),
                json!(settings.credential_source),
            );
            if let Some(p) = &settings.credential_path {
                data.insert("credentialPath".into(), json!(p.display().to_string()));
            }
            if let Some(m) = server_message(&body) {
                data.insert("serverMessage".into(), json!(m));
            }
            error(
                id,
                -32001,
                format!(
                    "OpenViking MCP authentication failed (HTTP {status}). Check ~/.openviking/ovcli.conf or OPENVIKING_API_KEY, and verify the configured account/user for trusted mode."
                ),
                Some(Value::Object(data)),
            )
        }
        Outcome::Http { status, body } => {
            let mut data = serde_json::Map::new();
            data.insert("status".into(), json!(status));
            if let Some(m) = server_message(&body) {
                data.insert("serverMessage".into(), json!(m));
            }
            error(
                id,
                -32002,
                format!("OpenViking MCP upstream returned HTTP {status}."),
                Some(Value::Object(data)),
            )
        }
        Outcome::Transport(cause) => error(
            id,
            -32001,
            format!(
                "OpenViking MCP request failed. Check the configured URL ({}) and that 'ov serve' is running.",
                settings.display_url()
            ),
            Some(json!({"cause": cause})),
        ),
        Outcome::Redirect(refusal) => error(
            id,
            -32002,
            format!(
                "OpenViking MCP upstream ({}) answered with a {refusal}: the answer is not \
                 OpenViking's. Point the MCP URL at the OpenViking server itself.",
                settings.display_url()
            ),
            Some(json!({"cause": refusal})),
        ),
        Outcome::Messages(_) => error(id, -32603, "internal error".to_owned(), None),
    }
}

pub(super) fn describe(outcome: &Outcome, settings: &McpSettings) -> String {
    match outcome {
        Outcome::Http { status, body } => format!(
            "HTTP {status}{}",
            server_message(body)
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        ),
        Outcome::Transport(c) | Outcome::Redirect(c) => format!("{} ({c})", settings.display_url()),
        Outcome::Messages(_) => "ok".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::error_message(r#"{"error":{"message":"bad key"}}"#, Some("bad key"))]
    #[case::detail(r#"{"detail":"nope"}"#, Some("nope"))]
    #[case::detail_obj(r#"{"detail":{"a":1}}"#, Some(r#"{"a":1}"#))]
    #[case::text("  Not\n  Acceptable  ", Some("Not Acceptable"))]
    #[case::empty("", None)]
    fn server_messages(#[case] body: &str, #[case] want: Option<&str>) {
        assert_eq!(server_message(body).as_deref(), want);
    }

    #[test]
    fn long_bodies_are_cut() {
        let body = "x ".repeat(1000);
        assert_eq!(server_message(&body).map(|m| m.chars().count()), Some(500));
    }
}
