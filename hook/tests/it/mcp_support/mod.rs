//! Shared by the `ovhook mcp` integration tests: the proxy as a child process, and a tiny
//! scripted HTTP server for faults the real OpenViking server cannot produce.
#![allow(dead_code)] // NOTE: each test binary uses a different subset.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// `ovhook mcp` with a clean environment: `HOME` is `home`, no `OPENVIKING_*` from the caller.
pub struct Proxy {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Proxy {
    pub fn spawn(home: &Path, env: &[(&str, &str)]) -> Proxy {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ovhook"));
        cmd.arg("mcp")
            .env_clear()
            .env("HOME", home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn ovhook mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err_pipe = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err_pipe.read_to_string(&mut s);
            sink.lock().expect("stderr lock").push_str(&s);
        });
        let stdin = child.stdin.take();
        Proxy {
            child,
            stdin,
            lines,
            stderr,
        }
    }

    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write stdin");
        stdin.write_all(b"\n").expect("write stdin");
        stdin.flush().expect("flush stdin");
    }

    pub fn send(&mut self, msg: &Value) {
        self.send_raw(&msg.to_string());
    }

    /// The next stdout line as JSON; panics after `timeout`.
    pub fn recv_within(&mut self, timeout: Duration) -> Value {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}")),
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "no stdout line within {timeout:?}; stderr: {}",
                    self.stderr()
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("proxy stdout closed; stderr: {}", self.stderr())
            }
        }
    }

    pub fn recv(&mut self) -> Value {
        self.recv_within(Duration::from_secs(20))
    }

    /// Sends a request and returns the stdout line answering it.
    pub fn call(&mut self, msg: &Value) -> Value {
        self.send(msg);
        self.recv()
    }

    /// True when nothing arrives on stdout for `wait`.
    pub fn silent_for(&mut self, wait: Duration) -> bool {
        match self.lines.recv_timeout(wait) {
            Ok(line) => panic!("unexpected stdout line: {line}"),
            Err(_) => true,
        }
    }

    /// Closes stdin and waits (bounded) for the exit; also checks stdout has nothing left.
    pub fn close(mut self) -> (ExitStatus, Vec<String>) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(15);
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "proxy did not exit after stdin EOF; stderr: {}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // Everything the child wrote, up to its stdout EOF.
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            rest.push(line);
        }
        (status, rest)
    }

    pub fn stderr(&self) -> String {
        std::thread::sleep(Duration::from_millis(50));
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn initialize(id: i64) -> Value {
    serde_json::json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ovhook-test","version":"0"}}})
}

pub fn initialized() -> Value {
    serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"})
}

/// One request as the fake server saw it. Header names are lowercase.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
    pub fn rpc_method(&self) -> Option<&str> {
        self.body.get("method").and_then(Value::as_str)
    }
}

/// A scripted reply. `hold_open` keeps the connection open that long after the body.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub hold_open: Duration,
    pub delay: Duration,
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.into(),
            hold_open: Duration::ZERO,
            delay: Duration::ZERO,
        }
    }
    pub fn sse(body: &str) -> Reply {
        Reply {
            headers: vec![("Content-Type".into(), "text/event-stream".into())],
            ..Reply::json(200, body)
        }
    }
    pub fn accepted() -> Reply {
        Reply::json(202, "")
    }
    pub fn with_header(mut self, k: &str, v: &str) -> Reply {
        self.headers.push((k.into(), v.into()));
        self
    }
}

type Handler = dyn Fn(&Seen) -> Reply + Send + Sync;

/// A loopback HTTP/1.1 server: one thread per connection, `Connection: close` replies.
pub struct FakeServer {
    pub url: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeServer {
    pub fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (h, l) = (Arc::clone(&handler), Arc::clone(&log));
                std::thread::spawn(move || serve(stream, &*h, &l));
            }
        });
        FakeServer { url, seen }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("seen").clone()
    }
}

fn serve(stream: TcpStream, handler: &Handler, log: &Mutex<Vec<Seen>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let seen = Seen {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    log.lock().expect("log").push(seen.clone());
    let reply = handler(&seen);
    std::thread::sleep(reply.delay);
    let mut out = stream;
    let mut head = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", reply.status);
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if reply.hold_open.is_zero() {
        head.push_str(&format!("Content-Length: {}\r\n", reply.body.len()));
    }
    head.push_str("\r\n");
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(reply.body.as_bytes());
    let _ = out.flush();
    std::thread::sleep(reply.hold_open);
}

/// `OVHOOK_TEST_URL` (or another variable), or `None` when `OVHOOK_SKIP_SERVER_TESTS=1`.
/// Absent without the skip switch is a loud failure, never a silent pass.
pub fn server_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(u) if !u.trim().is_empty() => Some(u.trim().trim_end_matches('/').to_owned()),
        _ if std::env::var("OVHOOK_SKIP_SERVER_TESTS").as_deref() == Ok("1") => {
            eprintln!("{var} unset and OVHOOK_SKIP_SERVER_TESTS=1: skipping a real-server test");
            None
        }
        _ => panic!(
            "{var} is not set: this test needs a real OpenViking server. Run the suite through the \
             project's test runner (it starts one), or export {var}=http://127.0.0.1:<port>, or set \
             OVHOOK_SKIP_SERVER_TESTS=1 to skip the real-server tests explicitly."
        ),
    }
}
