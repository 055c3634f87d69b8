//! Where and as whom the client talks to OpenViking.

use std::time::{Duration, Instant};

use super::DEFAULT_USER_AGENT;
use crate::config::Secret;

/// Where and as whom to talk to OpenViking.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Server root, e.g. `http://127.0.0.1:1933`, parsed by [`crate::config::ServerUrl::parse`]
    /// (a trailing `/` is ignored; a key in its userinfo is the API key when none is set).
    pub base_url: String,
    /// API key, sent as `Authorization: Bearer <key>`. In `trusted` mode this is the root key.
    pub api_key: Option<Secret>,
    /// `X-OpenViking-Account` (dev and trusted modes; ignored by api_key mode).
    pub account: Option<String>,
    /// `X-OpenViking-User` (dev and trusted modes; ignored by api_key mode).
    pub user: Option<String>,
    /// `X-OpenViking-Actor-Peer`; `None` or empty sends no header.
    pub actor_peer: Option<String>,
    /// `User-Agent` header.
    pub user_agent: String,
    /// Upper bound of one whole call (connect, send, reply).
    pub timeout: Duration,
    /// Upper bound of establishing the connection.
    pub connect_timeout: Duration,
    /// No call may run past this instant (a hook's whole budget); a call started after it
    /// fails at once with a connect [`ClientError::Timeout`](super::ClientError::Timeout), like a server that never answers.
    pub deadline: Option<Instant>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:1933".to_owned(),
            api_key: None,
            account: None,
            user: None,
            actor_peer: None,
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            timeout: Duration::from_secs(15),
            connect_timeout: Duration::from_secs(2),
            deadline: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_key() {
        let cfg = ClientConfig {
            api_key: Some("secret-key-123".into()),
            ..ClientConfig::default()
        };
        assert!(!format!("{cfg:?}").contains("secret-key-123"));
    }
}
