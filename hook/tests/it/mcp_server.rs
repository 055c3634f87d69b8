//! `ovhook mcp` against a real OpenViking server.
//!
//! * `OVHOOK_TEST_URL`: a dev-mode server (required; the test fails loudly without it unless
//!   `OVHOOK_SKIP_SERVER_TESTS=1`).
//! * `OVHOOK_TEST_APIKEY_URL` + `OVHOOK_TEST_ROOT_KEY`: an api_key-mode server (optional).

use crate::mcp_support;

use std::time::{SystemTime, UNIX_EPOCH};

use mcp_support::{initialize, initialized, server_url, Proxy};
use serde_json::{json, Value};

fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}{}x{nanos}", std::process::id())
}

fn http() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .expect("client")
}

/// Writes a memory file through the REST API (no LLM needed) and returns its canonical URI.
fn seed(base: &str, headers: &[(&str, &str)], uri: &str, content: &str) -> String {
    let mut req = http()
        .post(format!("{base}/api/v1/content/write"))
        .json(&json!({"uri": uri, "content": content, "mode": "create", "wait": true}));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().expect("content/write");
    let status = resp.status();
    let body: Value = resp.json().expect("json body");
    assert!(status.is_success(), "seed failed: {status} {body}");
    body["result"]["uri"]
        .as_str()
        .expect("result.uri")
        .to_owned()
}

fn tool_text(reply: &Value) -> String {
    assert!(reply.get("error").is_none(), "tool call failed: {reply}");
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    reply["result"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn call(id: i64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":arguments}})
}

/// The whole ZCode flow through the proxy; identity headers select a fresh dev-mode user so the
/// seeded memory is the only one.
#[test]
fn dev_server_full_session() {
    let Some(base) = server_url("OVHOOK_TEST_URL") else {
        return;
    };
    let user = unique("mcpu");
    let marker = unique("ovhookmarker");
    let text = format!("The user's favourite text editor is Helix. Marker {marker}.");
    let canonical = seed(
        &base,
        &[
            ("X-OpenViking-Account", "mcptest"),
            ("X-OpenViking-User", &user),
        ],
        "viking://~/memories/preferences/x.md",
        &text,
    );
    assert_eq!(
        canonical,
        format!("viking://user/{user}/memories/preferences/x.md")
    );

    let home = tempfile::tempdir().expect("tempdir");
    let mut proxy = Proxy::spawn(
        home.path(),
        &[
            ("OPENVIKING_URL", base.as_str()),
            ("OPENVIKING_ACCOUNT", "mcptest"),
            ("OPENVIKING_USER", user.as_str()),
        ],
    );
    let r = proxy.call(&initialize(1));
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["serverInfo"]["name"], "openviking", "{r}");
    assert!(r["result"]["protocolVersion"].is_string(), "{r}");
    proxy.send(&initialized());

    let r = proxy.call(&json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools/list: {r}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for want in ["find", "read", "search", "list", "grep", "glob"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }

    let found = tool_text(&proxy.call(&call(
        3,
        "find",
        json!({"query":"which text editor does the user like","target_uri":"viking://~/memories","limit":3}),
    )));
    assert!(
        found.contains(&canonical),
        "find did not return the seed: {found}"
    );

    let read = tool_text(&proxy.call(&call(4, "read", json!({"uris":[canonical]}))));
    assert!(read.contains(&marker), "read: {read}");

    // The server's own error for a bad tool is forwarded unchanged.
    let r = proxy.call(&call(5, "no_such_tool", json!({})));
    assert_eq!(r["id"], 5);
    assert_eq!(r["result"]["isError"], true, "{r}");

    let (status, rest) = proxy.close();
    assert!(status.success(), "exit: {status:?}");
    assert!(rest.is_empty(), "unexpected output: {rest:?}");
}

/// api_key mode: a user key from the admin API works (from ovcli.conf); no key gives the
/// mapped authentication error.
#[test]
fn api_key_server_user_key_and_missing_key() {
    let Ok(base) = std::env::var("OVHOOK_TEST_APIKEY_URL") else {
        eprintln!("OVHOOK_TEST_APIKEY_URL unset: api_key-mode test not run");
        return;
    };
    let base = base.trim_end_matches('/').to_owned();
    let root = std::env::var("OVHOOK_TEST_ROOT_KEY")
        .expect("OVHOOK_TEST_ROOT_KEY must be set together with OVHOOK_TEST_APIKEY_URL");
    let account = unique("mcpacct");
    let resp = http()
        .post(format!("{base}/api/v1/admin/accounts"))
        .header("X-API-Key", &root)
        .json(&json!({"account_id": account, "admin_user_id": "alice"}))
        .send()
        .expect("admin/accounts");
    let body: Value = resp.json().expect("json");
    let key = body["result"]["user_key"]
        .as_str()
        .unwrap_or_else(|| panic!("no user_key: {body}"))
        .to_owned();
    let marker = unique("akmarker");
    let canonical = seed(
        &base,
        &[("Authorization", &format!("Bearer {key}"))],
        "viking://~/memories/preferences/x.md",
        &format!("Api key mode memory {marker}."),
    );

    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path().join(".openviking");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("ovcli.conf"),
        json!({"url": base, "api_key": key}).to_string(),
    )
    .expect("write ovcli.conf");
    let mut proxy = Proxy::spawn(home.path(), &[]);
    let r = proxy.call(&initialize(1));
    assert_eq!(r["result"]["serverInfo"]["name"], "openviking", "{r}");
    proxy.send(&initialized());
    let read = tool_text(&proxy.call(&call(2, "read", json!({"uris":[canonical]}))));
    assert!(read.contains(&marker), "read: {read}");
    let stderr = proxy.stderr();
    let (status, _) = proxy.close();
    assert!(status.success());
    assert!(!stderr.contains(&key), "key leaked on stderr");

    let empty_home = tempfile::tempdir().expect("tempdir");
    let mut proxy = Proxy::spawn(empty_home.path(), &[("OPENVIKING_URL", base.as_str())]);
    proxy.call(&initialize(1));
    let r = proxy.call(&call(2, "find", json!({"query":"x"})));
    assert_eq!(r["id"], 2);
    assert_eq!(r["error"]["code"], -32001, "{r}");
    assert_eq!(r["error"]["data"]["status"], 401, "{r}");
    assert_eq!(r["error"]["data"]["credentialSource"], "env");
    assert!(
        r["error"]["data"]["serverMessage"]
            .as_str()
            .is_some_and(|m| m.contains("API Key")),
        "{r}"
    );
    let (status, _) = proxy.close();
    assert!(status.success());
}
