//! Is the configured server reachable and are we authorised? Through the
//! engine's OpenViking client (the same code, headers and TLS the hooks use):
//! `GET /health`, then `GET /api/v1/system/status` with our credentials.

use ov_engine::client::ClientError;
use ov_engine::config::Config;
use ov_engine::failure::Failure;

use super::{Check, Level};

/// The server checks (the configuration has a server).
pub fn check(cfg: &Config) -> Vec<Check> {
    let what = "server";
    let Some(server) = cfg.server.as_ref() else {
        return Vec::new();
    };
    let client = match ov_engine::client::client_for(cfg) {
        Some(Ok(c)) => c,
        Some(Err(e)) => {
            return vec![Check::new(
                Level::Fail,
                what,
                format!("{}: {e}", server.url),
            )]
        }
        None => return Vec::new(),
    };
    if let Err(e) = client.health() {
        return vec![Check::new(
            Level::Fail,
            what,
            format!("{}: {e}", server.url),
        )];
    }
    let mut out = vec![Check::new(
        Level::Ok,
        what,
        format!("{} reachable", server.url),
    )];
    let auth = "server auth";
    out.push(match client.system_user() {
        Ok(Some(u)) => Check::new(Level::Ok, auth, format!("authorised as user {u}")),
        Ok(None) => Check::new(Level::Ok, auth, "authorised"),
        Err(e)
            if Failure::classify(e.status(), e.is_retryable(), false) == Failure::Credentials =>
        {
            Check::new(
            Level::Fail,
            auth,
            format!(
                "HTTP {}: the server refused {} (check api_key in ovcli.conf or OPENVIKING_API_KEY)",
                e.status(),
                if server.api_key.is_some() { "the API key" } else { "a request without an API key" }
            ),
        )
        }
        Err(e @ ClientError::Http { .. }) => Check::new(
            Level::Warn,
            auth,
            format!("/api/v1/system/status answered HTTP {}", e.status()),
        ),
        Err(e) => Check::new(Level::Fail, auth, e.to_string()),
    });
    out
}

/// Which server the hooks use and why (configured, OpenViking's local default, off), then
/// whether it answers. The local default not answering is a warning: turns stay in the journal
/// until a server answers there.
pub fn report(cfg: &Config) -> Vec<Check> {
    use ov_engine::config::ServerChoice;
    let url = cfg.server.as_ref().map(|s| s.url.as_str()).unwrap_or("-");
    match cfg.server_choice {
        ServerChoice::Off => vec![Check::new(
            Level::Ok,
            "server",
            "off (url = off): journal only, nothing is sent",
        )],
        ServerChoice::Configured => {
            let mut out = vec![Check::new(
                Level::Ok,
                "server url",
                format!("{url} (configured)"),
            )];
            out.extend(check(cfg));
            out
        }
        ServerChoice::LocalDefault => {
            let mut out = vec![Check::new(
                Level::Ok,
                "server url",
                format!(
                    "{url}: no URL configured, OpenViking's local default (no API key: local, \
                     no auth); set one with ovhook install --url, or url = off for journal only"
                ),
            )];
            out.extend(check(cfg).into_iter().map(|mut c| {
                if c.level == Level::Fail && c.what == "server" {
                    c.level = Level::Warn;
                    c.detail = format!(
                        "{}; no local OpenViking answers: turns stay in the journal and the \
                         back-off keeps the hooks fast",
                        c.detail
                    );
                }
                c
            }));
            out
        }
    }
}
