//! Reading back everything the OpenViking server holds for one session, live and archived,
//! with `ov_engine::client::Client::session_messages`.

use std::time::Duration;

use anyhow::Context;

use super::count::ServerMessage;

/// Where and as whom to read.
#[derive(Debug, Clone)]
pub struct ServerAccess {
    /// Base URL.
    pub url: String,
    /// API key.
    pub api_key: Option<String>,
    /// `X-OpenViking-Account`.
    pub account: Option<String>,
    /// `X-OpenViking-User`.
    pub user: Option<String>,
}

/// Every message the server holds for `session_id`: archived (oldest archive first), then live.
pub fn session_messages(
    access: &ServerAccess,
    session_id: &str,
) -> anyhow::Result<Vec<ServerMessage>> {
    let client = ov_engine::client::Client::new(ov_engine::client::ClientConfig {
        base_url: access.url.clone(),
        api_key: access.api_key.clone().map(ov_engine::config::Secret::new),
        account: access.account.clone(),
        user: access.user.clone(),
        user_agent: concat!("ovreplay/", env!("CARGO_PKG_VERSION")).to_owned(),
        timeout: Duration::from_secs(60),
        ..ov_engine::client::ClientConfig::default()
    })
    .with_context(|| format!("could not build a client for {}", access.url))?;
    let messages = client
        .session_messages(session_id)
        .with_context(|| format!("could not list the messages of {session_id}"))?;
    Ok(messages
        .into_iter()
        .map(|m| ServerMessage {
            role: m.role,
            content: m.content,
            turn_id: m.turn_id,
        })
        .collect())
}
