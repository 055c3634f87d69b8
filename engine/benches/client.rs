//! Added latency of `engine::client` over a raw HTTP/1.1 call, and the give-up time on a closed port.
//! Needs `OVHOOK_TEST_URL` (a real dev-mode server) for the server benches; skips them otherwise.

use std::io::{Read, Write};
use std::net::TcpStream;

use ov_engine::client::{Client, ClientConfig, OutMessage};

fn main() {
    divan::main();
}

fn server() -> Option<String> {
    std::env::var("OVHOOK_TEST_URL")
        .ok()
        .map(|u| u.trim_end_matches('/').to_owned())
}

fn client(url: &str) -> Client {
    Client::new(ClientConfig {
        base_url: url.to_owned(),
        ..ClientConfig::default()
    })
    .expect("client")
}

/// One keep-alive-less request on a fresh connection, reading the reply to EOF.
fn raw(url: &str, method: &str, path: &str, body: &str) -> usize {
    let addr = url.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).expect("connect");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).expect("write");
    let mut out = Vec::new();
    s.read_to_end(&mut out).expect("read");
    out.len()
}

const BATCH: &str = r#"{"messages":[{"role":"user","content":"bench question","turn_id":"t1"},{"role":"assistant","content":"bench answer","turn_id":"t1"}]}"#;

fn batch() -> Vec<OutMessage> {
    vec![
        OutMessage {
            role: "user".into(),
            parts: None,
            content: "bench question".into(),
            turn_id: Some("t1".into()),
            created_at: None,
            message_kind: None,
        },
        OutMessage {
            role: "assistant".into(),
            parts: None,
            content: "bench answer".into(),
            turn_id: Some("t1".into()),
            created_at: None,
            message_kind: None,
        },
    ]
}

#[divan::bench(sample_count = 200)]
fn health_raw(b: divan::Bencher) {
    let Some(url) = server() else { return };
    b.bench(|| raw(&url, "GET", "/health", ""));
}

#[divan::bench(sample_count = 200)]
fn health_client(b: divan::Bencher) {
    let Some(url) = server() else { return };
    // A fresh client per call: the hook process makes one or two calls per run, never reuses a pool.
    b.bench(|| client(&url).health().expect("health"));
}

#[divan::bench(sample_count = 100)]
fn batch_add_raw(b: divan::Bencher) {
    let Some(url) = server() else { return };
    let path = format!(
        "/api/v1/sessions/bench-raw-{}/messages/batch",
        std::process::id()
    );
    b.bench(|| raw(&url, "POST", &path, BATCH));
}

#[divan::bench(sample_count = 100)]
fn batch_add_client(b: divan::Bencher) {
    let Some(url) = server() else { return };
    let sid = format!("bench-client-{}", std::process::id());
    let msgs = batch();
    b.bench(|| client(&url).add_batch(&sid, &msgs, &|| {}).expect("batch"));
}

#[divan::bench(sample_count = 200)]
fn refused_closed_port(b: divan::Bencher) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let msgs = batch();
    b.bench(|| {
        client(&url)
            .add_batch("s", &msgs, &|| {})
            .expect_err("refused")
    });
}
