//! The bridge from configuration to client settings.

use crate::client::{Client, ClientConfig, ClientError};
use crate::config::Config;

/// The client for a configuration; None on the embedded default (no server).
pub fn client_for(cfg: &Config) -> Option<Result<Client, ClientError>> {
    client_until(cfg, None)
}

/// [`client_for`] whose calls never run past `deadline` (a hook's budget).
pub fn client_until(
    cfg: &Config,
    deadline: Option<std::time::Instant>,
) -> Option<Result<Client, ClientError>> {
    let server = cfg.server.as_ref()?;
    let mut cc = ClientConfig {
        base_url: server.url.to_string(),
        ..ClientConfig::default()
    };
    cc.api_key.clone_from(&server.api_key);
    cc.account.clone_from(&server.account);
    cc.user.clone_from(&server.user);
    cc.actor_peer.clone_from(&cfg.actor_peer);
    cc.timeout = cfg.network.timeout();
    cc.connect_timeout = cfg.network.connect_timeout();
    cc.deadline = deadline;
    Some(Client::new(cc))
}
