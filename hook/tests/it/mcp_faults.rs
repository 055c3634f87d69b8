//! `ovhook mcp` against a scripted HTTP server: the faults the real server cannot produce.

use crate::mcp_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_support::{initialize, initialized, FakeServer, Proxy, Reply, Seen};
use serde_json::{json, Value};

fn init_result(id: &Value, protocol: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":protocol,"capabilities":{},
        "serverInfo":{"name":"fake","version":"0"}}})
    .to_string()
}

fn ok_result(id: &Value, text: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":text}],"isError":false}})
        .to_string()
}

fn sse_of(msg: &str) -> String {
    format!("event: message\ndata: {msg}\n\n")
}

fn env_for(url: &str) -> Vec<(&'static str, String)> {
    vec![("OPENVIKING_URL", url.to_owned())]
}

fn spawn(home: &std::path::Path, env: &[(&'static str, String)]) -> Proxy {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Proxy::spawn(home, &env)
}

/// A stateful server that forgets session `s1` after the first initialize: tools/list with
/// `s1` gets 404, so the proxy must replay initialize + initialized and retry with `s2`.
#[test]
fn not_found_session_reinitializes_and_retries_once() {
    let inits = Arc::new(AtomicUsize::new(0));
    let n = Arc::clone(&inits);
    let server = FakeServer::start(move |req: &Seen| {
        let id = req.body.get("id").cloned().unwrap_or(Value::Null);
        match (req.method.as_str(), req.rpc_method()) {
            ("POST", Some("initialize")) => {
                let k = n.fetch_add(1, Ordering::SeqCst) + 1;
                Reply::sse(&sse_of(&init_result(&id, "2025-03-26")))
                    .with_header("Mcp-Session-Id", &format!("s{k}"))
            }
            ("POST", Some("notifications/initialized")) => Reply::accepted(),
            ("POST", Some("tools/list")) if req.header("mcp-session-id") == Some("s1") => {
                Reply::json(
                    404,
                    r#"{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Session not found"}}"#,
                )
            }
            ("POST", Some("tools/list")) => Reply::sse(&sse_of(
                &json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{"name":"find"}]}}).to_string(),
            )),
            ("DELETE", _) => Reply::json(200, ""),
            _ => Reply::json(500, "unexpected"),
        }
    });
    let home = tempfile::tempdir().expect("tempdir");
    let mut proxy = spawn(home.path(), &env_for(&server.url));
    let r = proxy.call(&initialize(1));
    assert_eq!(r["result"]["protocolVersion"], "2025-03-26", "{r}");
    proxy.send(&initialized());
    let r = proxy.call(&json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert_eq!(r["id"], 2, "{r}");
    assert_eq!(r["result"]["tools"][0]["name"], "find", "{r}");
    let (status, rest) = proxy.close();
    assert!(status.success(), "{status:?}");
    assert!(
        rest.is_empty(),
        "reinit replies must not be forwarded: {rest:?}"
    );

    let seen = server.seen();
    let summary: Vec<(String, Option<String>, Option<String>)> = seen
        .iter()
        .map(|s| {
            (
                format!("{} {}", s.method, s.rpc_method().unwrap_or("-")),
                s.header("mcp-session-id").map(str::to_owned),
                s.header("mcp-protocol-version").map(str::to_owned),
            )
        })
        .collect();
    let own = |s: &str| Some(s.to_owned());
    assert_eq!(
        summary,
        vec![
            ("POST initialize".into(), None, own("2025-06-18")),
            (
                "POST notifications/initialized".into(),
                own("s1"),
                own("2025-03-26")
            ),
            ("POST tools/list".into(), own("s1"), own("2025-03-26")),
            ("POST initialize".into(), None, own("2025-06-18")),
            (
                "POST notifications/initialized".into(),
                own("s2"),
                own("2025-03-26")
            ),
            ("POST tools/list".into(), own("s2"), own("2025-03-26")),
            ("DELETE -".into(), own("s2"), own("2025-03-26")),
        ]
    );
    let reinit_id = seen[3].body["id"].as_str().expect("string id");
    assert!(
        reinit_id.starts_with("openviking-proxy-reinit-"),
        "{reinit_id}"
    );
    assert!(seen.iter().all(|s| s.path == "/mcp"));
}

/// A 404 that survives the reinitialize surfaces as -32002 after exactly one retry.
#[test]
fn persistent_not_found_is_retried_once_then_mapped() {
    let server = FakeServer::start(|req: &Seen| {
        let id = req.body.get("id").cloned().unwrap_or(Value::Null);
        match req.rpc_method() {
            Some("initialize") => Reply::json(200, &init_result(&id, "2025-06-18")),
            Some("notifications/initialized") => Reply::accepted(),
            _ => Reply::json(404, r#"{"detail":"gone"}"#),
        }
    });
    let home = tempfile::tempdir().expect("tempdir");
    let mut proxy = spawn(home.path(), &env_for(&server.url));
    proxy.call(&initialize(1));
    proxy.send(&initialized());
    let r = proxy.call(&json!({"jsonrpc":"2.0","id":"x","method":"tools/list"}));
    assert_eq!(r["id"], "x");
    assert_eq!(r["error"]["code"], -32002, "{r}");
    assert_eq!(
        r["error"]["message"],
        "OpenViking MCP upstream returned HTTP 404."
    );
    assert_eq!(
        r["error"]["data"],
        json!({"status":404,"serverMessage":"gone"})
    );
    let (status, _) = proxy.close();
    assert!(status.success());
    let lists = server
        .seen()
        .iter()
        .filter(|s| s.rpc_method() == Some("tools/list"))
        .count();
    assert_eq!(lists, 2, "one try and one retry");
}

/// 401 with the old key → -32001 with the actionable message; after ovcli.conf changes, the
/// next request carries the new key and succeeds, with no restart.
#[test]
fn unauthorized_then_credentials_file_change_reloads() {
    let server = FakeServer::start(|req: &Seen| {
        let id = req.body.get("id").cloned().unwrap_or(Value::Null);
        if req.header("authorization") != Some("Bearer new-secret-key") {
            return Reply::json(
                401,
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Invalid API key"}}"#,
            );
        }
        match req.rpc_method() {
            Some("initialize") => Reply::json(200, &init_result(&id, "2025-06-18")),
            Some("notifications/initialized") => Reply::accepted(),
            _ => Reply::sse(&sse_of(&ok_result(&id, "found it"))),
        }
    });
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path().join(".openviking");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let conf = dir.join("ovcli.conf");
    let write = |key: &str| {
        let body = json!({"url": server.url, "api_key": key, "account": "acme", "user": "zed"});
        // Rename into place like an editor does; the watcher sees the directory event.
        let tmp = dir.join("ovcli.conf.tmp");
        std::fs::write(&tmp, body.to_string()).expect("write");
        std::fs::rename(&tmp, &conf).expect("rename");
    };
    write("old-secret-key");
    let mut proxy = Proxy::spawn(home.path(), &[]);
    let r = proxy.call(&initialize(1));
    assert_eq!(r["error"]["code"], -32001, "{r}");
    assert_eq!(
        r["error"]["message"],
        "OpenViking MCP authentication failed (HTTP 401). Check ~/.openviking/ovcli.conf or OPENVIKING_API_KEY, and verify the configured account/user for trusted mode."
    );
    assert_eq!(r["error"]["data"]["status"], 401);
    assert_eq!(r["error"]["data"]["credentialSource"], "ovcli");
    assert_eq!(r["error"]["data"]["serverMessage"], "Invalid API key");
    assert_eq!(
        r["error"]["data"]["credentialPath"],
        conf.display().to_string()
    );
    let before = server.seen().len();
    assert_eq!(before, 1, "unchanged credentials: no retry");

    write("new-secret-key");
    let r = proxy.call(&initialize(2));
    assert_eq!(r["result"]["protocolVersion"], "2025-06-18", "{r}");
    proxy.send(&initialized());
    let r = proxy.call(&json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"find","arguments":{"query":"q"}}}));
    assert_eq!(r["result"]["content"][0]["text"], "found it", "{r}");
    let stderr = proxy.stderr();
    let (status, _) = proxy.close();
    assert!(status.success());
    assert!(!stderr.contains("secret-key"), "key leaked: {stderr}");
    let last = server.seen().pop().expect("requests");
    assert_eq!(last.header("x-openviking-account"), Some("acme"));
    assert_eq!(last.header("x-openviking-user"), Some("zed"));
}

/// A key change while a session is established: the proxy replays the cached initialize under
/// the new credentials before forwarding the next request.
#[test]
fn credentials_change_mid_session_reinitializes_first() {
    let server = FakeServer::start(|req: &Seen| {
        let id = req.body.get("id").cloned().unwrap_or(Value::Null);
        match req.rpc_method() {
            Some("initialize") => Reply::json(200, &init_result(&id, "2025-06-18")),
            Some("notifications/initialized") => Reply::accepted(),
            _ => Reply::json(200, &ok_result(&id, "ok")),
        }
    });
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path().join(".openviking");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let conf = dir.join("ovcli.conf");
    std::fs::write(
        &conf,
        json!({"url": server.url, "api_key": "k1"}).to_string(),
    )
    .expect("w");
    let mut proxy = Proxy::spawn(home.path(), &[]);
    proxy.call(&initialize(1));
    proxy.send(&initialized());
    let t = Instant::now();
    while server.seen().len() < 2 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "initialized not forwarded"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::write(
        &conf,
        json!({"url": server.url, "api_key": "k2-longer"}).to_string(),
    )
    .expect("w");
    let r = proxy.call(&json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert_eq!(r["id"], 2, "{r}");
    let (status, _) = proxy.close();
    assert!(status.success());
    let seen: Vec<(String, String)> = server
        .seen()
        .iter()
        .map(|s| {
            (
                s.rpc_method().unwrap_or("-").to_owned(),
                s.header("authorization").unwrap_or("").to_owned(),
            )
        })
        .collect();
    let pair = |m: &str, k: &str| (m.to_owned(), format!("Bearer {k}"));
    assert_eq!(
        seen,
        vec![
            pair("initialize", "k1"),
            pair("notifications/initialized", "k1"),
            pair("initialize", "k2-longer"),
            pair("notifications/initialized", "k2-longer"),
            pair("tools/list", "k2-longer"),
        ]
    );
}

#[test]
fn sse_framing_edge_cases() {
    let server = FakeServer::start(|req: &Seen| {
        let id = req.body.get("id").cloned().unwrap_or(Value::Null);
        let method = req.body["params"]["name"].as_str().unwrap_or("");
        let progress =
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}});
        match method {
            // comments, CRLF, no space after the colon, a progress notification first,
            // a pretty-printed response split over data lines, then [DONE].
            "crlf" => Reply::sse(&format!(
                ": keep-alive\r\n\r\nevent: message\r\ndata:{progress}\r\n\r\nid: 9\r\ndata: {{\"jsonrpc\":\"2.0\",\r\ndata:  \"id\":{id},\r\ndata: \"result\":{{\"ok\":1}}}}\r\n\r\ndata: [DONE]\r\n\r\n"
            )),
            // the last event has no closing blank line
            "unterminated" => Reply::sse(&format!("data: {}", ok_result(&id, "tail"))),
            "invalid" => Reply::sse("data: {not json\n\n"),
            "empty" => Reply::sse(": nothing\n\n"),
            // the server keeps the stream open after the response
            "held" => Reply {
                hold_open: Duration::from_secs(8),
                ..Reply::sse(&sse_of(&ok_result(&id, "held")))
            },
            _ => Reply::json(500, "?"),
        }
    });
    let home = tempfile::tempdir().expect("tempdir");
    let mut proxy = spawn(home.path(), &env_for(&server.url));
    let call = |name: &str, id: i64| json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":{}}});

    proxy.send(&call("crlf", 1));
    let first = proxy.recv();
    assert_eq!(first["method"], "notifications/progress", "{first}");
    let second = proxy.recv();
    assert_eq!(second, json!({"jsonrpc":"2.0","id":1,"result":{"ok":1}}));

    let r = proxy.call(&call("unterminated", 2));
    assert_eq!(r["result"]["content"][0]["text"], "tail", "{r}");

    let r = proxy.call(&call("invalid", 3));
    assert_eq!(r["id"], 3);
    assert_eq!(r["error"]["code"], -32001, "{r}");
    let msg = r["error"]["message"].as_str().expect("message");
    assert!(
        msg.starts_with(&format!(
            "OpenViking MCP request failed. Check the configured URL ({}/mcp)",
            server.url
        )),
        "{msg}"
    );
    assert!(r["error"]["data"]["cause"].as_str().is_some(), "{r}");

    let r = proxy.call(&call("empty", 4));
    assert_eq!(
        r,
        json!({"jsonrpc":"2.0","id":4,"error":{"code":-32003,"message":"OpenViking MCP upstream returned an empty response"}})
    );

    let t = Instant::now();
    let r = proxy.call(&call("held", 5));
    assert_eq!(r["result"]["content"][0]["text"], "held", "{r}");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "waited for the stream to close: {:?}",
        t.elapsed()
    );
    let (status, _) = proxy.close();
    assert!(status.success());
}

#[test]
fn local_errors_notifications_and_headers() {
    let server = FakeServer::start(|req: &Seen| {
        let id = req.body.get("id").cloned().unwrap_or(Value::Null);
        match req.rpc_method() {
            Some("boom") => Reply::json(500, "Internal   Server\nError"),
            Some("notifications/cancelled") => Reply::json(500, "ignored"),
            Some(_) if id.is_null() => Reply::accepted(),
            Some(_) => Reply::json(200, &ok_result(&id, "pong")),
            None => Reply::accepted(),
        }
    });
    let home = tempfile::tempdir().expect("tempdir");
    let mut env = env_for(&server.url);
    env.extend([
        ("OPENVIKING_API_KEY", "env-key".to_owned()),
        ("OPENVIKING_ACCOUNT", "acct".to_owned()),
        ("OPENVIKING_USER", "usr".to_owned()),
        ("OPENVIKING_PEER_ID", "peer-1".to_owned()),
    ]);
    let mut proxy = spawn(home.path(), &env);

    let parse = json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}});
    let invalid = json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid JSON-RPC message"}});
    proxy.send_raw("{nope");
    assert_eq!(proxy.recv(), parse);
    proxy.send_raw("");
    proxy.send_raw("   ");
    proxy.send_raw(r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#);
    assert_eq!(proxy.recv(), invalid, "blank lines give nothing");
    proxy.send_raw("[1,2]");
    assert_eq!(proxy.recv(), invalid);
    proxy.send_raw("42");
    assert_eq!(proxy.recv(), invalid);

    // Notifications (even failing ones) and client responses produce no output.
    proxy.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}));
    proxy.send(&json!({"jsonrpc":"2.0","id":"srv-1","result":{}}));
    assert!(proxy.silent_for(Duration::from_millis(700)));

    let r = proxy.call(&json!({"jsonrpc":"2.0","id":7,"method":"boom"}));
    assert_eq!(
        r,
        json!({"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"OpenViking MCP upstream returned HTTP 500.",
            "data":{"status":500,"serverMessage":"Internal Server Error"}}})
    );
    let r = proxy.call(&json!({"jsonrpc":"2.0","id":8,"method":"ping"}));
    assert_eq!(r["result"]["content"][0]["text"], "pong");
    let (status, rest) = proxy.close();
    assert!(status.success());
    assert!(rest.is_empty(), "{rest:?}");

    let ping = server
        .seen()
        .into_iter()
        .find(|s| s.rpc_method() == Some("ping"))
        .expect("ping forwarded");
    assert_eq!(ping.path, "/mcp");
    for (k, v) in [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-06-18"),
        ("authorization", "Bearer env-key"),
        ("x-openviking-account", "acct"),
        ("x-openviking-user", "usr"),
        ("x-openviking-actor-peer", "peer-1"),
        (
            "user-agent",
            concat!("openviking-memory-zcode/", env!("CARGO_PKG_VERSION")),
        ),
    ] {
        assert_eq!(ping.header(k), Some(v), "header {k}");
    }
    assert_eq!(
        ping.header("mcp-session-id"),
        None,
        "stateless server: no sid"
    );
    // The client's response is forwarded verbatim.
    assert!(server
        .seen()
        .iter()
        .any(|s| s.body == json!({"jsonrpc":"2.0","id":"srv-1","result":{}})));
}

/// A slow tool call does not hold up the next line.
#[test]
fn slow_call_does_not_block_the_next_line() {
    let server = FakeServer::start(|req: &Seen| {
        let id = req.body.get("id").cloned().unwrap_or(Value::Null);
        let mut reply = Reply::json(200, &ok_result(&id, "done"));
        if id == json!("slow") {
            reply.delay = Duration::from_secs(3);
        }
        reply
    });
    let home = tempfile::tempdir().expect("tempdir");
    let mut proxy = spawn(home.path(), &env_for(&server.url));
    proxy.send(&json!({"jsonrpc":"2.0","id":"slow","method":"tools/call"}));
    proxy.send(&json!({"jsonrpc":"2.0","id":"fast","method":"tools/call"}));
    let t = Instant::now();
    assert_eq!(proxy.recv()["id"], "fast");
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_eq!(proxy.recv()["id"], "slow");
    // EOF while a slow call is in flight: its answer is still delivered before exit.
    proxy.send(&json!({"jsonrpc":"2.0","id":"slow","method":"tools/call"}));
    std::thread::sleep(Duration::from_millis(200));
    let (status, rest) = proxy.close();
    assert!(status.success());
    assert_eq!(rest.len(), 1, "{rest:?}");
}

#[test]
fn unreachable_server_maps_to_request_failed() {
    // Bind and drop to get a port with nothing listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let home = tempfile::tempdir().expect("tempdir");
    let url = format!("http://127.0.0.1:{port}");
    let mut proxy = spawn(
        home.path(),
        &[
            ("OPENVIKING_URL", url.clone()),
            ("OPENVIKING_TIMEOUT_MS", "1000".into()),
        ],
    );
    let r = proxy.call(&initialize(1));
    assert_eq!(r["id"], 1);
    assert_eq!(r["error"]["code"], -32001, "{r}");
    assert_eq!(
        r["error"]["message"],
        format!("OpenViking MCP request failed. Check the configured URL ({url}/mcp) and that 'ov serve' is running.")
    );
    let (status, _) = proxy.close();
    assert!(status.success());
}

/// No server (`"url": "off"` in ovcli.conf): every request gets a clear error at once,
/// notifications nothing; writing a URL into ovcli.conf later makes the same process work.
#[test]
fn not_configured_then_configured() {
    let server = FakeServer::start(|req: &Seen| {
        let id = req.body.get("id").cloned().unwrap_or(Value::Null);
        Reply::json(200, &init_result(&id, "2025-06-18"))
    });
    let home = tempfile::tempdir().expect("tempdir");
    let ov = home.path().join(".openviking");
    std::fs::create_dir_all(&ov).expect("mkdir");
    std::fs::write(ov.join("ovcli.conf"), r#"{"url":"off"}"#).expect("w");
    let mut proxy = Proxy::spawn(home.path(), &[]);
    let t = Instant::now();
    proxy.send(&initialized());
    let r = proxy.call(&initialize(1));
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_eq!(r["id"], 1);
    assert_eq!(r["error"]["code"], -32001, "{r}");
    let msg = r["error"]["message"].as_str().expect("message");
    assert!(
        msg.starts_with("OpenViking is not configured")
            && msg.contains("OPENVIKING_URL")
            && msg.contains("ovcli.conf"),
        "{msg}"
    );
    let r = proxy.call(&json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert_eq!(r["error"]["code"], -32001);

    let dir = home.path().join(".openviking");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("ovcli.conf"),
        json!({"url": server.url}).to_string(),
    )
    .expect("w");
    let r = proxy.call(&initialize(3));
    assert_eq!(r["result"]["serverInfo"]["name"], "fake", "{r}");
    let (status, rest) = proxy.close();
    assert!(status.success());
    assert!(rest.is_empty());
}

#[test]
fn sigterm_exits_143_after_closing_the_session() {
    let server = FakeServer::start(|req: &Seen| {
        let id = req.body.get("id").cloned().unwrap_or(Value::Null);
        match req.method.as_str() {
            "DELETE" => Reply::json(200, ""),
            _ => Reply::json(200, &init_result(&id, "2025-06-18"))
                .with_header("Mcp-Session-Id", "abc"),
        }
    });
    let home = tempfile::tempdir().expect("tempdir");
    let mut proxy = spawn(home.path(), &env_for(&server.url));
    proxy.call(&initialize(1));
    // SAFETY: plain kill(2) on our own child's pid.
    let rc = unsafe { libc::kill(proxy.pid() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let (status, _) = proxy.close();
    assert_eq!(status.code(), Some(143));
    let last = server.seen().pop().expect("requests");
    assert_eq!(last.method, "DELETE");
    assert_eq!(last.header("mcp-session-id"), Some("abc"));
}

/// The configured server answers 307 to another origin (a second loopback port): the proxy
/// follows nothing, so the other origin receives no request (no tool call, no query, no key or
/// identity header), and the agent gets a clear error naming the redirect instead of the other
/// origin's answer.
#[test]
fn a_redirect_to_another_origin_is_never_followed() {
    let elsewhere = FakeServer::start(|req: &Seen| {
        let id = req.body.get("id").cloned().unwrap_or(Value::Null);
        Reply::json(200, &ok_result(&id, "an answer that is not OpenViking's"))
    });
    let target = elsewhere.url.clone();
    let server = FakeServer::start(move |_req: &Seen| {
        Reply::json(307, "").with_header("Location", &format!("{target}/mcp"))
    });
    let home = tempfile::tempdir().expect("tempdir");
    let mut proxy = spawn(
        home.path(),
        &[
            ("OPENVIKING_URL", server.url.clone()),
            ("OPENVIKING_API_KEY", "secret-key".into()),
            ("OPENVIKING_ACCOUNT", "acct".into()),
            ("OPENVIKING_USER", "usr".into()),
        ],
    );
    let r = proxy.call(&initialize(1));
    assert_eq!(r["id"], 1, "{r}");
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("redirect (307)") && message.contains("not followed"),
        "{r}"
    );
    let other_origin = elsewhere.url.trim_end_matches('/');
    assert!(message.contains(other_origin), "{r}");
    let r = proxy.call(&json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"find","arguments":{"query":"my secret plans"}}}));
    assert_eq!(r["id"], 2, "{r}");
    assert!(r["result"].is_null() && r["error"].is_object(), "{r}");
    let (status, _) = proxy.close();
    assert!(status.success(), "{status:?}");
    assert!(
        elsewhere.seen().is_empty(),
        "the other origin was contacted: {:?}",
        elsewhere.seen().len()
    );
    assert!(!server.seen().is_empty(), "the configured server was asked");
}
