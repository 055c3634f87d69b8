//! Shared helpers for tests that talk to the real OpenViking servers started by `scripts/test.sh`.
//!
//! | variable | server |
//! |---|---|
//! | `OVHOOK_TEST_URL` | dev mode (1933) |
//! | `OVHOOK_TEST_APIKEY_URL` | api_key mode (1934) |
//! | `OVHOOK_TEST_TRUSTED_URL` | trusted mode (1935) |
//! | `OVHOOK_TEST_ROOT_KEY` | root key of the api_key and trusted servers |
//!
//! A missing variable fails the test with instructions, unless `OVHOOK_SKIP_SERVER_TESTS=1`.
#![allow(dead_code)]

use std::time::{SystemTime, UNIX_EPOCH};

use ov_engine::client::{Client, ClientConfig};
use serde_json::{json, Value};

/// One reachable test server.
#[derive(Clone, Debug)]
pub struct TestServer {
    /// Base URL, e.g. `http://127.0.0.1:1933`.
    pub url: String,
    /// Root key (api_key and trusted modes), `None` in dev mode.
    pub root_key: Option<String>,
}

fn lookup(var: &str, mode: &str, needs_root: bool) -> Option<TestServer> {
    let skip = std::env::var("OVHOOK_SKIP_SERVER_TESTS").is_ok_and(|v| v == "1");
    let url = std::env::var(var).ok().filter(|v| !v.trim().is_empty());
    let root_key = std::env::var("OVHOOK_TEST_ROOT_KEY")
        .ok()
        .filter(|v| !v.is_empty());
    match (url, skip) {
        (_, true) => {
            eprintln!("OVHOOK_SKIP_SERVER_TESTS=1: skipping a test that needs the {mode} OpenViking server");
            None
        }
        (Some(url), false) => {
            if needs_root && root_key.is_none() {
                panic!("{var} is set but OVHOOK_TEST_ROOT_KEY is not: the {mode} server test needs the root key");
            }
            Some(TestServer { url: url.trim_end_matches('/').to_owned(), root_key })
        }
        (None, false) => panic!(
            "{var} is not set: this test needs a real OpenViking server in {mode} mode.\n\
             Run the whole suite with `bash scripts/test.sh` (starts dev :1933, api_key :1934, trusted :1935), or start one:\n  \
             bash scripts/openviking-server.sh install\n  \
             OV_PORT=1933 OV_AUTH={mode} OV_ROOT_KEY=ovhook-test-root-key bash scripts/openviking-server.sh start\n  \
             export {var}=http://127.0.0.1:1933 OVHOOK_TEST_ROOT_KEY=ovhook-test-root-key\n\
             Set OVHOOK_SKIP_SERVER_TESTS=1 to skip server tests on purpose."
        ),
    }
}

/// The dev-mode server (`OVHOOK_TEST_URL`); `None` only under `OVHOOK_SKIP_SERVER_TESTS=1`.
pub fn dev_server() -> Option<TestServer> {
    lookup("OVHOOK_TEST_URL", "dev", false)
}

/// The api_key-mode server (`OVHOOK_TEST_APIKEY_URL`).
pub fn apikey_server() -> Option<TestServer> {
    lookup("OVHOOK_TEST_APIKEY_URL", "api_key", true)
}

/// The trusted-mode server (`OVHOOK_TEST_TRUSTED_URL`).
pub fn trusted_server() -> Option<TestServer> {
    lookup("OVHOOK_TEST_TRUSTED_URL", "trusted", true)
}

/// A name unique to this test run: `<prefix>-<pid>-<nanos>-<counter>`. Servers are shared.
pub fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}-{}-{nanos:x}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A client config for `url` with no key and a test user agent.
pub fn config(url: &str) -> ClientConfig {
    ClientConfig {
        base_url: url.to_owned(),
        ..ClientConfig::default()
    }
}

/// A dev-mode client isolated in its own account and user (dev mode honours the identity headers).
/// Its requests may take long: these tests are about what the real server answers, and a
/// loaded machine makes its session-scoped search take seconds.
pub fn dev_client(server: &TestServer) -> (Client, String) {
    let user = unique("u");
    let cfg = ClientConfig {
        account: Some(unique("acct")),
        user: Some(user.clone()),
        timeout: std::time::Duration::from_secs(30),
        ..config(&server.url)
    };
    (Client::new(cfg).expect("client"), user)
}

/// Raw JSON call for seeding and admin (not through the client under test).
pub fn raw(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> (u16, Value) {
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .expect("http");
    let mut req = match method {
        "GET" => http.get(url),
        "DELETE" => http.delete(url),
        _ => http.post(url),
    };
    req = req.header("Content-Type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    let resp = req.send().expect("raw request");
    let status = resp.status().as_u16();
    let v = resp.json().unwrap_or(Value::Null);
    (status, v)
}

/// api_key mode: creates a fresh account through the admin API and returns `(account, user, user_key)`.
pub fn new_account(server: &TestServer) -> (String, String, String) {
    let root = server.root_key.as_deref().expect("root key");
    let account = unique("acct");
    let user = "alice".to_owned();
    let (status, v) = raw(
        "POST",
        &format!("{}/api/v1/admin/accounts", server.url),
        &[("X-API-Key", root)],
        Some(&json!({"account_id": account, "admin_user_id": user})),
    );
    assert_eq!(status, 200, "create account: {v}");
    let key = v
        .pointer("/result/user_key")
        .and_then(Value::as_str)
        .expect("user_key")
        .to_owned();
    (account, user, key)
}

/// Seeds one memory file with `content/write` (`wait:true`, so it is vectorised on return).
pub fn seed(server_url: &str, headers: &[(&str, &str)], uri: &str, content: &str) {
    let (status, v) = raw(
        "POST",
        &format!("{server_url}/api/v1/content/write"),
        headers,
        Some(&json!({"uri": uri, "content": content, "mode": "create", "wait": true})),
    );
    assert_eq!(status, 200, "seed {uri}: {v}");
}
