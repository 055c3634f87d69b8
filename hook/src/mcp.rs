//! `ovhook mcp`: a stdio MCP server that proxies every message to OpenViking's streamable-HTTP
//! MCP endpoint (`docs/anchor-behaviours.md` §2.6).
//!
//! # Design
//!
//! | stdin line | handling | stdout |
//! |---|---|---|
//! | blank | ignored | nothing |
//! | not JSON | - | `-32700 Parse error`, id null |
//! | not an object, or `jsonrpc != "2.0"` | - | `-32600 Invalid JSON-RPC message`, id null |
//! | `initialize`, `notifications/initialized` | on the reader thread, after the in-flight ones: later lines wait | the upstream reply / nothing |
//! | other request | a worker thread (at most [`MAX_IN_FLIGHT`]) | the upstream messages, or a mapped error |
//! | notification, client response | a worker thread | nothing |
//!
//! Invariants: every stdout write is one whole JSON value plus `\n`, under one lock, flushed at
//! once; a request gets at least one line back; stdin EOF waits for the in-flight messages, then
//! `DELETE`s the upstream session (if the server gave one), flushes and exits 0. SIGINT/SIGTERM do
//! the same and exit 130/143.

mod settings;
mod sse;
mod upstream;
mod watch;

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use anyhow::Context;
use serde_json::{json, Value};

pub use settings::McpSettings;
use upstream::Upstream;

/// Most messages forwarded at the same time; the reader stops reading while this many run.
pub const MAX_IN_FLIGHT: usize = 16;

/// Runs the proxy until stdin closes.
pub fn run() -> anyhow::Result<i32> {
    // Before any thread exists, so that every thread inherits the mask and only the signal
    // thread receives SIGINT/SIGTERM.
    let signals = block_signals();
    let upstream = Arc::new(Upstream::new(Box::new(McpSettings::resolve))?);
    let _watcher = watch::start(upstream.watched(), Arc::clone(&upstream.dirty));
    let out = Arc::new(Output::default());
    if let Some(set) = signals {
        spawn_signal_thread(set, Arc::clone(&upstream), Arc::clone(&out));
    }
    let in_flight = Arc::new(InFlight::default());

    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = input
            .read_until(b'\n', &mut buf)
            .context("could not read stdin")?;
        if n == 0 {
            break;
        }
        let Some(msg) = classify(&buf, &out) else {
            continue;
        };
        let (raw, value) = msg;
        if matches!(
            value.get("method").and_then(Value::as_str),
            Some("initialize" | "notifications/initialized")
        ) {
            // Session lifecycle: later messages must see the negotiated session, and the server
            // must see `initialized` before any request that follows it.
            in_flight.wait_idle();
            out.write_all(&upstream.handle(&raw, &value));
            continue;
        }
        in_flight.acquire();
        let (up, o, flight) = (
            Arc::clone(&upstream),
            Arc::clone(&out),
            Arc::clone(&in_flight),
        );
        let spawned = std::thread::Builder::new()
            .name("mcp-msg".into())
            .spawn(move || {
                let _release = Release(&flight);
                o.write_all(&up.handle(&raw, &value));
            });
        if let Err(e) = spawned {
            in_flight.release();
            return Err(e).context("could not start a worker thread");
        }
    }
    in_flight.wait_idle();
    upstream.close();
    out.flush();
    // A SIGINT/SIGTERM that raced with stdin EOF still decides the exit code.
    Ok(signals.and_then(|set| signal_exit_code(&set)).unwrap_or(0))
}

/// Parses one stdin line; writes the parse/shape error itself. `None`: nothing to forward.
fn classify(line: &[u8], out: &Output) -> Option<(String, Value)> {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t.trim(),
        Err(_) => {
            out.write_all(&[parse_error()]);
            return None;
        }
    };
    if text.is_empty() {
        return None;
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(_) => {
            out.write_all(&[parse_error()]);
            return None;
        }
    };
    if !value.is_object() || value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        out.write_all(&[json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid JSON-RPC message"}})]);
        return None;
    }
    Some((text.to_owned(), value))
}

fn parse_error() -> Value {
    json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
}

/// Serialized stdout.
#[derive(Default)]
struct Output {
    lock: Mutex<()>,
}

impl Output {
    fn write_all(&self, messages: &[Value]) {
        if messages.is_empty() {
            return;
        }
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut stdout = std::io::stdout().lock();
        for m in messages {
            let mut line = m.to_string();
            line.push('\n');
            if let Err(e) = stdout
                .write_all(line.as_bytes())
                .and_then(|()| stdout.flush())
            {
                // The client is gone; stdin will close too.
                eprintln!("ovhook mcp: could not write stdout: {e}");
                return;
            }
        }
    }

    fn flush(&self) {
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = std::io::stdout().lock().flush();
    }
}

/// Counting semaphore of in-flight messages.
#[derive(Default)]
struct InFlight {
    n: Mutex<usize>,
    cv: Condvar,
}

impl InFlight {
    fn guard(&self) -> std::sync::MutexGuard<'_, usize> {
        self.n
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn acquire(&self) {
        let mut n = self.guard();
        while *n >= MAX_IN_FLIGHT {
            n = self
                .cv
                .wait(n)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *n += 1;
    }

    fn release(&self) {
        *self.guard() -= 1;
        self.cv.notify_all();
    }

    fn wait_idle(&self) {
        let mut n = self.guard();
        while *n > 0 {
            n = self
                .cv
                .wait(n)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}

/// Releases one in-flight slot on drop, panics included.
struct Release<'a>(&'a InFlight);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread it starts).
fn block_signals() -> Option<libc::sigset_t> {
    // SAFETY: sigemptyset/sigaddset initialise the local set; pthread_sigmask only changes this
    // thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        (libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) == 0).then_some(set)
    }
}

/// The exit code chosen by the signal thread; 0 until a signal arrived.
static SIGNAL_EXIT: AtomicI32 = AtomicI32::new(0);

fn exit_code_for(sig: libc::c_int) -> i32 {
    if sig == libc::SIGINT {
        130
    } else {
        143
    }
}

/// The exit code of a signal already taken by the signal thread, or still pending.
fn signal_exit_code(set: &libc::sigset_t) -> Option<i32> {
    let taken = SIGNAL_EXIT.load(Ordering::Acquire);
    if taken != 0 {
        return Some(taken);
    }
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `set` is initialised; a zero timeout makes this a non-blocking poll.
    let sig = unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &zero) };
    (sig > 0).then(|| exit_code_for(sig))
}

/// Waits for SIGINT/SIGTERM, then closes the session, flushes and exits 130/143.
fn spawn_signal_thread(set: libc::sigset_t, upstream: Arc<Upstream>, out: Arc<Output>) {
    let _ = std::thread::Builder::new()
        .name("mcp-signals".into())
        .spawn(move || {
            let mut sig: libc::c_int = 0;
            // SAFETY: `set` is an initialised signal set blocked in every thread.
            if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
                return;
            }
            let code = exit_code_for(sig);
            SIGNAL_EXIT.store(code, Ordering::Release);
            upstream.close();
            out.flush();
            std::process::exit(code);
        });
}
