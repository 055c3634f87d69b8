//! Where data goes and as whom: the server part of the configuration.

use super::{Secret, ServerUrl};

/// Where data goes and as whom. Only from the environment, the registry and `ovcli.conf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Base URL (`http://127.0.0.1:1933`), without userinfo: a key it carried is
    /// [`ServerConfig::api_key`] unless another is set.
    pub url: ServerUrl,
    /// API key (`Authorization: Bearer …`); `None` for an unauthenticated (dev) server.
    pub api_key: Option<Secret>,
    /// `X-OpenViking-Account`.
    pub account: Option<String>,
    /// `X-OpenViking-User`.
    pub user: Option<String>,
}

/// OpenViking's own default server, used when no URL is configured anywhere (as OpenViking's
/// CLI and plugins do); with no API key it is a local, unauthenticated server.
pub const LOCAL_DEFAULT_URL: &str = "http://127.0.0.1:1933";

/// Where [`Config::server`](super::Config::server) came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerChoice {
    /// A URL set in the environment, the registry or `ovcli.conf`.
    Configured,
    /// No URL anywhere: [`LOCAL_DEFAULT_URL`]. When nothing answers there, turns stay in the
    /// journal and the back-off keeps the hooks fast.
    LocalDefault,
    /// `url` = `off` (or `none`, or not an http(s) URL): journal only, no network at all.
    Off,
}
