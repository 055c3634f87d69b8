//! Is the configured server reachable and are we authorised? A minimal HTTP/1.1 GET over
//! `std::net` (no client library): `GET /health`, then `GET /api/v1/system/status` with our
//! credentials. `https://` servers get a TCP connect check only.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use ov_engine::config::{NetworkConfig, ServerConfig};

use super::{Check, Level};

struct Target {
    https: bool,
    host: String,
    port: u16,
    prefix: String,
}

fn parse(url: &str) -> Option<Target> {
    let (https, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else {
        (false, url.strip_prefix("http://")?)
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => match p.parse() {
            Ok(p) => (h.to_owned(), p),
            Err(_) => (authority.to_owned(), if https { 443 } else { 80 }),
        },
        _ => (authority.to_owned(), if https { 443 } else { 80 }),
    };
    let prefix = if path.is_empty() {
        String::new()
    } else {
        format!("/{}", path.trim_end_matches('/'))
    };
    Some(Target {
        https,
        host: host.trim_matches(['[', ']']).to_owned(),
        port,
        prefix,
    })
}

fn connect(t: &Target, net: &NetworkConfig) -> Result<TcpStream, String> {
    let addrs = (t.host.as_str(), t.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", t.host))?;
    let mut last = format!("{} has no address", t.host);
    for addr in addrs {
        match TcpStream::connect_timeout(
            &addr,
            net.connect_timeout().max(Duration::from_millis(200)),
        ) {
            Ok(s) => return Ok(s),
            Err(e) => last = format!("cannot connect to {addr}: {e}"),
        }
    }
    Err(last)
}

/// `(status, body)` of one GET.
fn get(
    t: &Target,
    path: &str,
    headers: &[(&str, String)],
    net: &NetworkConfig,
) -> Result<(u16, String), String> {
    let mut s = connect(t, net)?;
    let timeout = Some(net.timeout().min(Duration::from_secs(5)));
    let _ = s.set_read_timeout(timeout);
    let _ = s.set_write_timeout(timeout);
    let mut req = format!(
        "GET {}{path} HTTP/1.1\r\nHost: {}:{}\r\nConnection: close\r\nAccept: application/json\r\nUser-Agent: ovhook-doctor/{}\r\n",
        t.prefix,
        t.host,
        t.port,
        env!("CARGO_PKG_VERSION")
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())
        .map_err(|e| format!("request failed: {e}"))?;
    let mut buf = Vec::new();
    let _ = s.take(64 * 1024).read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status = text
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| "no HTTP answer".to_owned())?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

/// The server checks.
pub fn check(server: &ServerConfig, net: &NetworkConfig) -> Vec<Check> {
    let what = "server";
    let Some(t) = parse(&server.url) else {
        return vec![Check::new(
            Level::Fail,
            what,
            format!("{} is not an http(s) URL", server.url),
        )];
    };
    if t.https {
        return vec![match connect(&t, net) {
            Ok(_) => Check::new(
                Level::Ok,
                what,
                format!(
                    "{} reachable (TCP only: doctor does not check TLS or the key)",
                    server.url
                ),
            ),
            Err(e) => Check::new(Level::Fail, what, format!("{}: {e}", server.url)),
        }];
    }
    let mut out = Vec::new();
    match get(&t, "/health", &[], net) {
        Ok((200, _)) => out.push(Check::new(
            Level::Ok,
            what,
            format!("{} reachable", server.url),
        )),
        Ok((code, _)) => {
            out.push(Check::new(
                Level::Fail,
                what,
                format!("{}/health answered HTTP {code}", server.url),
            ));
            return out;
        }
        Err(e) => {
            out.push(Check::new(
                Level::Fail,
                what,
                format!("{}: {e}", server.url),
            ));
            return out;
        }
    }
    let mut headers = Vec::new();
    if let Some(k) = &server.api_key {
        headers.push(("Authorization", format!("Bearer {}", k.expose())));
    }
    if let Some(a) = &server.account {
        headers.push(("X-OpenViking-Account", a.clone()));
    }
    if let Some(u) = &server.user {
        headers.push(("X-OpenViking-User", u.clone()));
    }
    let auth = "server auth";
    out.push(match get(&t, "/api/v1/system/status", &headers, net) {
        Ok((200, body)) => {
            let user = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.pointer("/result/user").and_then(|u| u.as_str()).map(str::to_owned));
            Check::new(
                Level::Ok,
                auth,
                match user {
                    Some(u) => format!("authorised as user {u}"),
                    None => "authorised".to_owned(),
                },
            )
        }
        Ok((code @ (401 | 403), _)) => Check::new(
            Level::Fail,
            auth,
            format!(
                "HTTP {code}: the server refused {} (check api_key in ovcli.conf or OPENVIKING_API_KEY)",
                if server.api_key.is_some() { "the API key" } else { "a request without an API key" }
            ),
        ),
        Ok((code, _)) => Check::new(Level::Warn, auth, format!("/api/v1/system/status answered HTTP {code}")),
        Err(e) => Check::new(Level::Fail, auth, e),
    });
    out
}
