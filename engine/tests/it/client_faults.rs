//! Faults the real server cannot produce, from a scripted loopback HTTP server.
#![cfg(feature = "http")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ov_engine::client::{Client, ClientConfig, OutMessage, RecallRequest};

/// One received request: method, path, body.
type Seen = Arc<Mutex<Vec<(String, String, String)>>>;

/// Serves each connection with `reply(method, path, body)` → raw bytes written back (then close).
fn fake(reply: impl Fn(&str, &str, &str) -> Vec<u8> + Send + 'static) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let seen: Seen = Arc::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (method, path, body) = read_request(&stream);
            log.lock()
                .expect("log")
                .push((method.clone(), path.clone(), body.clone()));
            let out = reply(&method, &path, &body);
            let mut s = stream;
            let _ = s.write_all(&out);
            let _ = s.flush();
        }
    });
    (url, seen)
}

fn read_request(stream: &TcpStream) -> (String, String, String) {
    let mut r = BufReader::new(stream);
    let mut line = String::new();
    let _ = r.read_line(&mut line);
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; len];
    let _ = r.read_exact(&mut body);
    (method, path, String::from_utf8_lossy(&body).into_owned())
}

fn http(status: u16, body: &str) -> Vec<u8> {
    format!("HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
        .into_bytes()
}

fn client(url: &str, timeout_ms: u64) -> Client {
    Client::new(ClientConfig {
        base_url: url.into(),
        api_key: Some("k1".into()),
        actor_peer: Some("-home-u-proj".into()),
        timeout: Duration::from_millis(timeout_ms),
        ..ClientConfig::default()
    })
    .expect("client")
}

fn one() -> Vec<OutMessage> {
    vec![OutMessage {
        role: "user".into(),
        parts: None,
        content: "hi".into(),
        turn_id: Some("t1".into()),
        created_at: None,
        message_kind: None,
    }]
}

#[test]
fn reply_cut_mid_body_is_a_retryable_network_error_after_sending() {
    let (url, _) = fake(|_, _, _| {
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"status\":\"ok\",\"res".to_vec()
    });
    let sent = std::cell::Cell::new(false);
    let e = client(&url, 2000)
        .add_batch("zc-s", &one(), &|| sent.set(true))
        .expect_err("cut");
    assert!(sent.get(), "the request went out before the reply broke");
    assert!(
        e.is_retryable() && !e.is_unreachable() && e.status() == 0,
        "{e:?}"
    );
}

#[test]
fn a_503_burst_is_retryable_then_success() {
    let n = Arc::new(Mutex::new(0));
    let (url, seen) = fake(move |_, _, _| {
        let mut n = n.lock().expect("n");
        *n += 1;
        if *n <= 3 {
            http(
                503,
                r#"{"status":"error","error":{"code":"UNAVAILABLE","message":"busy"}}"#,
            )
        } else {
            http(200, r#"{"status":"ok","result":{}}"#)
        }
    });
    let c = client(&url, 2000);
    for _ in 0..3 {
        let e = c.add_batch("zc-s", &one(), &|| {}).expect_err("503");
        assert_eq!(
            (e.status(), e.is_retryable(), e.code()),
            (503, true, Some("UNAVAILABLE"))
        );
    }
    c.add_batch("zc-s", &one(), &|| {}).expect("4th succeeds");
    assert_eq!(seen.lock().expect("seen").len(), 4);
}

#[test]
fn conflicts_are_retryable_only_when_the_server_says_so() {
    let (url, _) = fake(|_, path, _| {
        let retry = path.contains("yes");
        http(
            409,
            &format!(
                r#"{{"status":"error","error":{{"code":"CONFLICT","message":"busy","details":{{"retryable":{retry}}}}}}}"#
            ),
        )
    });
    let c = client(&url, 2000);
    assert!(c
        .add_batch("yes", &one(), &|| {})
        .expect_err("409")
        .is_retryable());
    assert!(!c
        .add_batch("no", &one(), &|| {})
        .expect_err("409")
        .is_retryable());
}

#[test]
fn envelope_error_on_200_is_a_failure_and_batch_404_405_are_terminal() {
    let (url, seen) = fake(|_, path, _| match path {
        p if p.ends_with("/env/messages/batch") => http(
            200,
            r#"{"status":"error","error":{"code":"INTERNAL","message":"x"}}"#,
        ),
        p if p.contains("/old404/") && p.ends_with("/batch") => {
            http(404, r#"{"detail":"Not Found"}"#)
        }
        p if p.contains("/old405/") && p.ends_with("/batch") => {
            http(405, r#"{"detail":"Method Not Allowed"}"#)
        }
        _ => http(200, r#"{"status":"ok","result":{"message_count":1}}"#),
    });
    let c = client(&url, 2000);
    let e = c
        .add_batch("env", &one(), &|| {})
        .expect_err("envelope error");
    assert_eq!((e.status(), e.is_retryable()), (200, false));
    for (sid, status) in [("old404", 404), ("old405", 405)] {
        let e = c
            .add_batch(sid, &one(), &|| {})
            .expect_err("no batch endpoint");
        assert_eq!((e.status(), e.is_retryable()), (status, false));
        let m = one().remove(0);
        c.add_one(sid, &m, &|| {}).expect("single fallback");
    }
    let seen = seen.lock().expect("seen");
    let (_, path, body) = seen.last().expect("a request");
    assert_eq!(path, "/api/v1/sessions/old405/messages");
    assert_eq!(body, r#"{"role":"user","content":"hi","turn_id":"t1"}"#);
}

#[test]
fn wire_format_headers_and_encoded_session_id() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let h = std::thread::spawn(move || {
        let (s, _) = listener.accept().expect("accept");
        let mut r = BufReader::new(&s);
        let mut head = String::new();
        let mut len = 0usize;
        loop {
            let mut l = String::new();
            if r.read_line(&mut l).unwrap_or(0) == 0 || l == "\r\n" {
                break;
            }
            if let Some(v) = l.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap_or(0);
            }
            head.push_str(&l);
        }
        let mut body = vec![0; len];
        let _ = r.read_exact(&mut body);
        let mut s = &s;
        let _ = s.write_all(&http(200, r#"{"status":"ok","result":{"task_id":"t-1","archive_uri":"viking://a","status":"accepted"}}"#));
        head
    });
    let r = client(&url, 2000)
        .commit("zc-a b/c", &|| {})
        .expect("commit");
    assert_eq!(r.task_id.as_deref(), Some("t-1"));
    assert_eq!(r.status.as_deref(), Some("accepted"));
    let head = h.join().expect("server").to_ascii_lowercase();
    assert!(
        head.starts_with("post /api/v1/sessions/zc-a%20b%2fc/commit http/1.1"),
        "{head}"
    );
    for want in [
        "content-type: application/json",
        "authorization: bearer k1",
        "x-openviking-actor-peer: -home-u-proj",
        "user-agent: openviking-memory-zcode/",
    ] {
        assert!(head.contains(want), "missing {want} in {head}");
    }
    assert!(
        !head.contains("x-openviking-account"),
        "unset headers are not sent"
    );
}

#[test]
fn a_slow_reply_times_out_retryably_after_sending() {
    let (url, _) = fake(|_, _, _| {
        std::thread::sleep(Duration::from_millis(1500));
        http(200, "{}")
    });
    let sent = std::cell::Cell::new(false);
    let t = Instant::now();
    let e = client(&url, 300)
        .add_batch("zc-s", &one(), &|| sent.set(true))
        .expect_err("timeout");
    assert!(
        t.elapsed() < Duration::from_millis(1200),
        "{:?}",
        t.elapsed()
    );
    assert!(sent.get());
    assert!(
        e.is_retryable() && !e.is_unreachable() && e.status() == 0,
        "{e:?}"
    );
}

#[test]
fn recall_falls_through_to_tier_three_and_renders_format_b() {
    let (url, seen) = fake(|_, path, body| match path {
        "/api/v1/search/search" => http(
            422,
            r#"{"status":"error","error":{"code":"INVALID_ARGUMENT","message":"Extra inputs are not permitted","details":{"loc":["mode"]}}}"#,
        ),
        "/api/v1/search/recall" => http(404, r#"{"detail":"Not Found"}"#),
        "/api/v1/search/find" if body.contains("viking://~/memories") => {
            let long = "x".repeat(1200);
            http(
                200,
                &format!(
                    r#"{{"status":"ok","result":{{"memories":[
                {{"uri":"viking://user/d/memories/events/e1.md","level":1,"score":0.9,"abstract":"{long}","category":"events"}},
                {{"uri":"viking://user/d/memories/low.md","level":2,"score":0.1,"abstract":"too low"}}]}}}}"#
                ),
            )
        }
        "/api/v1/search/find" => http(
            200,
            r#"{"status":"ok","result":{"skills":[{"uri":"viking://user/d/skills/deploy","level":1,"score":0.41,"abstract":"Deploy skill"}]}}"#,
        ),
        _ => http(404, "{}"),
    });
    let mut req = RecallRequest::new("when did we deploy", Duration::from_secs(5));
    req.session_id = Some("zc-1".into());
    let out = client(&url, 2000).recall(&req).expect("recall");
    assert!(
        out.context_face_unsupported,
        "422 about extra inputs marks the legacy server"
    );
    assert_eq!(out.tier, 3);
    let block = out.block.expect("block");
    let want = format!(
        "<openviking-context>\nRelevant context from OpenViking. Use the read MCP tool to expand URIs.\n- [memory 90%] {}...\n- [skill 41%] Deploy skill\n</openviking-context>",
        "x".repeat(500)
    );
    assert_eq!(block, want);
    let seen = seen.lock().expect("seen");
    let search = seen
        .iter()
        .find(|(_, p, _)| p == "/api/v1/search/search")
        .expect("tier 1 ran");
    let v: serde_json::Value = serde_json::from_str(&search.2).expect("json");
    assert_eq!(v["mode"], "context");
    assert_eq!(v["session_id"], "zc-1");
    assert_eq!(v["dedup_turns"], 5);
    assert_eq!(
        v["query_expansion"], "off",
        "no query planner call on the agent's path"
    );
    assert_eq!(v["score_threshold"], 0.35);
    assert!(
        v.get("quotas").is_none(),
        "no quotas unless the limit is configured"
    );
    let recall = seen
        .iter()
        .find(|(_, p, _)| p == "/api/v1/search/recall")
        .expect("tier 2 ran");
    let v: serde_json::Value = serde_json::from_str(&recall.2).expect("json");
    assert_eq!(
        v["quotas"],
        serde_json::json!({"events":5,"entities":4,"preferences":1,"experiences":0})
    );
    assert_eq!(v["max_chars"], 5000);
    assert_eq!(v["session_id"], "zc-1", "tier 2 names the session too");
    assert_eq!(v["dedup_turns"], 5, "and leaves out its latest turns");
    assert_eq!(v["query_expansion"], "off");
}

#[test]
fn recall_stays_within_its_deadline_when_every_tier_hangs() {
    let (url, _) = fake(|_, _, _| {
        std::thread::sleep(Duration::from_secs(3));
        http(200, "{}")
    });
    let req = RecallRequest::new("anything", Duration::from_millis(600));
    let t = Instant::now();
    let r = client(&url, 15_000).recall(&req);
    assert!(
        t.elapsed() < Duration::from_millis(1000),
        "{:?}",
        t.elapsed()
    );
    assert!(r.is_err_and(|e| e.is_retryable()));
}

#[test]
fn a_closed_port_gives_up_fast() {
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let c = client(&format!("http://127.0.0.1:{port}"), 15_000);
    let t = Instant::now();
    let e = c.health().expect_err("refused");
    assert!(e.is_unreachable() && e.is_retryable(), "{e:?}");
    let e = c
        .add_batch("s", &one(), &|| panic!("nothing was sent"))
        .expect_err("refused");
    assert!(e.is_unreachable(), "{e:?}");
    assert!(
        t.elapsed() < Duration::from_millis(200),
        "{:?}",
        t.elapsed()
    );
}

/// A file the server is still writing (a commit's asynchronous phase) can be
/// answered as a 400 "Expecting value"; the multi-request read is retried, not
/// failed, and returns every message once.
#[test]
fn session_messages_retries_a_half_written_file() {
    let live_reads = Arc::new(Mutex::new(0u32));
    let counter = live_reads.clone();
    let (url, seen) = fake(move |_m, path, _b| {
        if path.starts_with("/api/v1/sessions/") {
            return http(
                200,
                r#"{"status":"ok","result":{"session_id":"s","uri":"viking://user/default/sessions/s"}}"#,
            );
        }
        if path.starts_with("/api/v1/fs/ls") {
            return http(
                404,
                r#"{"status":"error","error":{"code":"NOT_FOUND","message":"no history"}}"#,
            );
        }
        let mut n = counter.lock().expect("n");
        *n += 1;
        if *n == 1 {
            return http(
                400,
                r#"{"status":"error","error":{"code":"INVALID_ARGUMENT","message":"Expecting value: line 1 column 1 (char 0)"}}"#,
            );
        }
        http(
            200,
            r#"{"status":"ok","result":"{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"hi\"}],\"turn_id\":\"t1\"}\n"}"#,
        )
    });
    let held = client(&url, 5000)
        .session_messages("s")
        .expect("read after a retry");
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].turn_id.as_deref(), Some("t1"));
    assert_eq!(*live_reads.lock().expect("n"), 2);
    assert!(seen.lock().expect("seen").len() >= 5);
}

/// A listener that counts connections and answers nothing useful: the target of a redirect.
fn counting_target() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!(
        "http://localhost:{}",
        listener.local_addr().expect("addr").port()
    );
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut r = BufReader::new(&stream);
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
                head.push(h);
            }
            log.lock().expect("log").push(head.concat());
            let _ = stream.write_all(&http(200, r#"{"status":"ok","result":{}}"#));
        }
    });
    (url, seen)
}

fn is_not_openviking(e: &ov_engine::client::ClientError) -> bool {
    matches!(e, ov_engine::client::ClientError::NotOpenViking { .. })
}

/// A proxy's HTML page answered with 200 is not an acknowledgement: a typed failure that
/// reads as an unreachable server (retryable, status 0), for writes and reads alike.
#[test]
fn a_200_that_is_not_openviking_json_is_never_success() {
    for body in [
        "<html><body>Please log in to the Wi-Fi</body></html>",
        "",
        r#"{"message":"hello from the proxy"}"#,
        "[1,2]",
    ] {
        let reply = http(200, body);
        let (url, seen) = fake(move |_, _, _| reply.clone());
        let c = client(&url, 2000);
        let e = c.add_batch("zc-s", &one(), &|| {}).expect_err(body);
        assert!(is_not_openviking(&e), "{body}: {e:?}");
        assert!(
            e.is_retryable() && e.is_unreachable() && e.status() == 0,
            "{e:?}"
        );
        let e = c.add_one("zc-s", &one()[0], &|| {}).expect_err(body);
        assert!(is_not_openviking(&e), "{e:?}");
        let e = c.commit("zc-s", &|| {}).expect_err(body);
        assert!(is_not_openviking(&e), "{e:?}");
        assert!(c.health().is_err(), "health on {body:?}");
        assert!(c.session_messages("zc-s").is_err(), "read on {body:?}");
        let e = c.session_messages("zc-s").expect_err(body);
        assert!(
            is_not_openviking(&e) && e.is_unreachable(),
            "read on {body:?}: {e:?}"
        );
        assert!(!seen.lock().expect("seen").is_empty());
    }
}

/// A 307 to another origin is never followed: the target sees no request (so neither the
/// prompt nor the key, account or user headers), for recall and message posts alike, and
/// the failure is not a refusal of the message.
#[test]
fn redirects_are_never_followed() {
    let (target, reached) = counting_target();
    let location = format!("{target}/api/v1/sessions/zc-s/messages/batch");
    let (url, seen) = fake(move |_, _, _| {
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .into_bytes()
    });
    let c = Client::new(ClientConfig {
        base_url: url.clone(),
        api_key: Some("k1".into()),
        account: Some("acct".into()),
        user: Some("usr".into()),
        timeout: Duration::from_millis(3000),
        ..ClientConfig::default()
    })
    .expect("client");
    let e = c.add_batch("zc-s", &one(), &|| {}).expect_err("307");
    assert!(is_not_openviking(&e), "{e:?}");
    assert!(
        e.is_retryable() && e.is_unreachable(),
        "a redirect is not a refusal: {e:?}"
    );
    assert!(e.to_string().contains("307"), "{e}");
    c.add_one("zc-s", &one()[0], &|| {}).expect_err("307");
    let _ = c.recall(&RecallRequest::new(
        "secret prompt text",
        Duration::from_secs(10),
    ));
    assert!(seen.lock().expect("seen").len() >= 3);
    assert!(
        reached.lock().expect("reached").is_empty(),
        "the redirect target was contacted: {:?}",
        reached.lock().expect("reached")
    );
}

/// A key written into the URL (`http://KEY@host`) is sent as the bearer key and appears in
/// no error text (error texts are journaled and logged).
#[test]
fn a_key_in_the_url_is_used_and_never_shown() {
    let (url, _) = fake(|_, _, _| http(503, r#"{"status":"error","error":{"message":"busy"}}"#));
    let with_key = url.replace("http://", "http://user:s3cr3t-url-key@");
    let c = Client::new(ClientConfig {
        base_url: with_key,
        ..ClientConfig::default()
    })
    .expect("client");
    assert_eq!(c.base_url(), url);
    let e = c.add_batch("zc-s", &one(), &|| {}).expect_err("503");
    assert!(!format!("{c:?}").contains("s3cr3t"));
    assert!(!format!("{e} {e:?}").contains("s3cr3t"), "{e:?}");
    // Unreachable too.
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let c = Client::new(ClientConfig {
        base_url: format!("http://s3cr3t-url-key@127.0.0.1:{port}"),
        ..ClientConfig::default()
    })
    .expect("client");
    let e = c.add_batch("zc-s", &one(), &|| {}).expect_err("closed");
    assert!(!format!("{e} {e:?}").contains("s3cr3t"), "{e:?}");
}

/// Delivery through a server that answers every request with a redirect: the messages
/// are never set aside (a redirect says nothing about them), and stay to be sent.
#[test]
fn a_redirect_on_a_message_post_never_sets_the_message_aside() {
    use ov_engine::delivery::{deliver, DeliverySettings};
    use ov_engine::event::{Event, PlannedMessage};
    use ov_engine::projector::MessageStatus;
    use ov_engine::store::SessionStore;
    use ov_engine::turn::{DedupKey, Role};
    use ov_journal::Durability;

    let (target, reached) = counting_target();
    let (url, _) = fake(move |_, path, _| {
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: {target}{path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .into_bytes()
    });
    let c = client(&url, 2000);
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SessionStore::open(&tmp.path().join("j")).expect("open");
    let messages = [Role::User, Role::Assistant]
        .into_iter()
        .map(|role| PlannedMessage {
            key: DedupKey::for_turn("t1", role),
            turn_id: Some("t1".into()),
            role,
            content: format!("t1 {}", role.as_str()),
            raw_len: 5,
            interrupted: false,
            created_at_ms: None,
        })
        .collect();
    store
        .append(Event::MessagesPlanned { messages }, Durability::Buffered)
        .expect("plan");
    let mut settings = DeliverySettings::new("zc-s".into());
    settings.in_doubt_settle_ms = 0;
    settings.ignore_backoff = true;
    for _ in 0..3 {
        deliver(&store, None, Some(&c), &settings).expect("deliver");
    }
    let state = store.fold().expect("fold").state;
    assert_eq!(state.messages.len(), 2);
    for (k, r) in &state.messages {
        assert!(
            matches!(
                r.status,
                MessageStatus::Pending | MessageStatus::InFlight { .. }
            ),
            "{k}: {:?}",
            r.status
        );
    }
    assert!(reached.lock().expect("reached").is_empty());
}

/// A client with a deadline never runs past it, however many calls an operation makes: a server
/// answering every request slowly (but within the per-call timeout) costs the profile its
/// deadline, not the sum of its calls, and the failure reads as unreachable.
#[test]
fn a_deadline_bounds_every_call_of_an_operation() {
    let (url, seen) = fake(|_, _, _| {
        std::thread::sleep(Duration::from_millis(700));
        http(200, r#"{"status":"ok","result":{"user":"default"}}"#)
    });
    let budget = Duration::from_millis(1200);
    let c = Client::new(ClientConfig {
        base_url: url,
        timeout: Duration::from_secs(8),
        deadline: Some(Instant::now() + budget),
        ..ClientConfig::default()
    })
    .expect("client");
    let t = Instant::now();
    let r = c.profile(&ov_engine::client::ProfileRequest::default());
    let took = t.elapsed();
    let e = r.expect_err("the deadline passed");
    assert!(e.is_unreachable(), "{e}");
    assert!(took < budget + Duration::from_millis(500), "took {took:?}");
    assert!(seen.lock().expect("log").len() <= 3);
}
