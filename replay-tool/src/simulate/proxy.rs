//! A loopback stand-in between the hooks and the real server, for the server faults the real
//! server cannot produce: a slow server, a proxy's HTML page, a redirect to another origin.
//!
//! Invariants: each proxy runs on its own thread for the life of the run; `Slow` forwards
//! every byte unchanged and only delays each reply; `Html` and `Redirect` never contact the
//! server and close the connection after one reply.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use super::faults::{Proxy, SLOW_MS};

/// Starts a proxy of `kind` in front of `upstream` (`http://host:port`); returns its URL.
pub fn start(kind: Proxy, upstream: &str) -> anyhow::Result<String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").context("could not bind a loopback proxy port")?;
    let url = format!("http://{}", listener.local_addr()?);
    let authority = upstream
        .split_once("://")
        .map_or(upstream, |(_, rest)| rest)
        .trim_end_matches('/')
        .to_owned();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let authority = authority.clone();
            std::thread::spawn(move || {
                let _ = match kind {
                    Proxy::Slow => forward_slowly(client, &authority),
                    Proxy::Html => answer(client, |_| html_page()),
                    Proxy::Redirect => answer(client, |path| redirect(&authority, path)),
                };
            });
        }
    });
    Ok(url)
}

/// Forwards both ways; each reply is held back [`SLOW_MS`] after a request went up.
fn forward_slowly(client: TcpStream, authority: &str) -> std::io::Result<()> {
    let server = TcpStream::connect(authority)?;
    let asked = Arc::new(AtomicBool::new(false));
    let (mut c_read, mut s_write) = (client.try_clone()?, server.try_clone()?);
    let up_asked = asked.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = c_read.read(&mut buf) {
            if n == 0 {
                break;
            }
            up_asked.store(true, Ordering::SeqCst);
            if buf.get(..n).is_none_or(|b| s_write.write_all(b).is_err()) {
                break;
            }
        }
        let _ = s_write.shutdown(std::net::Shutdown::Write);
    });
    let (mut s_read, mut c_write) = (server, client);
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = s_read.read(&mut buf)?;
        if n == 0 {
            break;
        }
        if asked.swap(false, Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(SLOW_MS));
        }
        c_write.write_all(buf.get(..n).unwrap_or_default())?;
    }
    c_write.shutdown(std::net::Shutdown::Both)
}

/// Reads one request (head and body) and writes `reply(path)`.
fn answer(client: TcpStream, reply: impl Fn(&str) -> String) -> std::io::Result<()> {
    let mut reader = BufReader::new(client.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    let mut client = client;
    client.write_all(reply(&path).as_bytes())?;
    client.flush()
}

fn html_page() -> String {
    let body =
        "<html><head><title>Sign in</title></head><body>Please sign in to continue.</body></html>";
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A 307 to the same server under another host name: another origin.
fn redirect(authority: &str, path: &str) -> String {
    let port = authority.rsplit_once(':').map_or("80", |(_, p)| p);
    format!(
        "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://localhost:{port}{path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}
