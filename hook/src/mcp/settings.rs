//! What the proxy needs to reach OpenViking, and how it notices that it changed.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use ov_engine::client::DEFAULT_USER_AGENT;
use ov_engine::config::keys::CREDENTIAL_ENV;
use ov_engine::config::{
    self, LoadContext, Loaded, Secret, ServerUrl, Source, SourceReport, SourceStatus,
};

/// Least per-request timeout (the anchor proxy's `timeoutMs`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(15_000);

/// Connection settings of the MCP proxy. Compared as a whole on reload: any difference means
/// the upstream session is stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpSettings {
    /// The MCP endpoint (`<base url>/mcp`, or `OPENVIKING_MCP_URL`), no trailing `/`, no
    /// userinfo. `None`: OpenViking is not configured; every request gets an error.
    pub url: Option<ServerUrl>,
    /// Sent as `Authorization: Bearer <key>`.
    pub api_key: Option<Secret>,
    pub account: Option<String>,
    pub user: Option<String>,
    /// The explicit peer only (`docs/anchor-behaviours.md` §2.6: the workspace-derived peer is not used here).
    pub actor_peer: Option<String>,
    pub user_agent: String,
    pub timeout: Duration,
    /// `env`, `ovcli` or `auto`: reported in authentication errors.
    pub credential_source: &'static str,
    /// The credentials file that supplied values, if any.
    pub credential_path: Option<PathBuf>,
    /// Files whose change triggers a reload (they need not exist yet).
    pub watched: Vec<PathBuf>,
}

impl McpSettings {
    /// Resolves the settings from the layered configuration of the process (its cwd, `$HOME`,
    /// `OPENVIKING_*`).
    pub fn resolve() -> McpSettings {
        let ctx = LoadContext::from_process(None);
        let loaded = config::load(&ctx);
        for w in &loaded.warnings {
            eprintln!("ovhook mcp: config: {w}");
        }
        McpSettings::from_config(&ctx, &loaded)
    }

    /// The proxy's view of a loaded configuration.
    ///
    /// * url: `Config::mcp_url` (`mcp_url`, else `<server url>/mcp`);
    /// * peer: the explicit `peer.id` only (`docs/anchor-behaviours.md` §2.6: no workspace-derived peer here);
    /// * timeout: `network.timeout`, at least [`DEFAULT_TIMEOUT`] (tool calls such as `search`
    ///   are slower than the hooks' calls, which the network settings are tuned for);
    /// * watched: `ovcli.conf` and the workspace registry file, the sources that may set the
    ///   URL and the credentials (they need not exist yet).
    pub fn from_config(ctx: &LoadContext, loaded: &Loaded) -> McpSettings {
        let cfg = &loaded.config;
        let server = cfg.server.as_ref();
        // Highest precedence first (registry, then ovcli.conf).
        let credential_files: Vec<&SourceReport> = loaded
            .sources
            .iter()
            .filter(|r| matches!(r.source, Source::Ovcli(_) | Source::Registry(_)))
            .collect();
        let env_has_credentials = CREDENTIAL_ENV
            .iter()
            .flat_map(|(_, names)| names.iter())
            .chain(&["OPENVIKING_PEER_ID"])
            .any(|name| ctx.var(name).is_some());
        // `sources` is highest precedence first: the first loaded file is the one that won.
        let file_used = credential_files
            .iter()
            .find(|r| r.status == SourceStatus::Loaded);
        let (credential_source, credential_path) = match (env_has_credentials, file_used) {
            (true, _) => ("env", None),
            (false, Some(r)) => (
                if matches!(r.source, Source::Ovcli(_)) {
                    "ovcli"
                } else {
                    "registry"
                },
                r.source.path().map(Path::to_path_buf),
            ),
            (false, None) => ("auto", None),
        };
        // ovcli.conf first: error messages name `watched[0]` as the file to edit.
        let mut files = credential_files.clone();
        files.sort_by_key(|r| !matches!(r.source, Source::Ovcli(_)));
        let watched = files
            .iter()
            .filter_map(|r| r.source.path().map(Path::to_path_buf))
            .collect();
        McpSettings {
            url: cfg.mcp_url.clone(),
            api_key: server.and_then(|s| s.api_key.clone()),
            account: server.and_then(|s| s.account.clone()),
            user: server.and_then(|s| s.user.clone()),
            actor_peer: cfg.peer.id.clone(),
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            timeout: cfg.network.timeout().max(DEFAULT_TIMEOUT),
            credential_source,
            credential_path,
            watched,
        }
    }

    /// The endpoint URL for messages (it has no userinfo), empty when not configured.
    pub fn display_url(&self) -> String {
        self.url
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default()
    }
}

/// What a watched file looked like: `None` when it is missing.
pub type Stamp = Vec<Option<(SystemTime, u64, u64)>>;

/// One `stat` per watched file; cheap enough to run before every request.
pub fn stamp(paths: &[PathBuf]) -> Stamp {
    paths
        .iter()
        .map(|p| {
            let m = std::fs::metadata(p).ok()?;
            let ino = {
                use std::os::unix::fs::MetadataExt;
                m.ino()
            };
            Some((m.modified().ok()?, m.len(), ino))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(env: &[(&str, &str)], home: &Path) -> McpSettings {
        let ctx = LoadContext {
            cwd: home.to_path_buf(),
            home: home.to_path_buf(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        };
        McpSettings::from_config(&ctx, &config::load(&ctx))
    }

    fn write_cli(home: &Path, body: &str) {
        std::fs::create_dir_all(home.join(".openviking")).expect("mkdir");
        std::fs::write(home.join(".openviking/ovcli.conf"), body).expect("write");
    }

    #[test]
    fn nothing_configured() {
        let home = tempfile::tempdir().expect("tempdir");
        let s = resolve(&[], home.path());
        // OpenViking's local default, as its own CLI and plugins use.
        assert_eq!(s.url.as_deref(), Some("http://127.0.0.1:1933/mcp"));
        assert_eq!(resolve(&[("OPENVIKING_URL", "off")], home.path()).url, None);
        assert_eq!(s.api_key, None);
        assert_eq!(s.credential_source, "auto");
        assert_eq!(
            s.watched.first(),
            Some(&home.path().join(".openviking/ovcli.conf"))
        );
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        assert_eq!(
            s.user_agent,
            format!("openviking-memory-zcode/{}", env!("CARGO_PKG_VERSION"))
        );
    }

    #[test]
    fn ovcli_fields_and_aliases() {
        let home = tempfile::tempdir().expect("tempdir");
        write_cli(
            home.path(),
            r#"{"url":"http://h:1933/","api_key":"k","account_id":"a","user_id":"u","peer_id":"p"}"#,
        );
        let s = resolve(&[], home.path());
        assert_eq!(s.url.as_deref(), Some("http://h:1933/mcp"));
        assert_eq!(s.api_key.as_ref().map(Secret::expose), Some("k"));
        assert_eq!(s.account.as_deref(), Some("a"));
        assert_eq!(s.user.as_deref(), Some("u"));
        assert_eq!(s.actor_peer.as_deref(), Some("p"));
        assert_eq!(s.credential_source, "ovcli");
        assert_eq!(
            s.credential_path,
            Some(home.path().join(".openviking/ovcli.conf"))
        );
        assert!(!format!("{s:?}").contains("\"k\""), "key leaked in Debug");
    }

    #[test]
    fn env_wins_and_mcp_url_is_verbatim() {
        let home = tempfile::tempdir().expect("tempdir");
        write_cli(home.path(), r#"{"url":"http://cli","api_key":"cli-key"}"#);
        let s = resolve(
            &[
                ("OPENVIKING_URL", "http://env:1/"),
                ("OPENVIKING_USER", "zed"),
                ("OPENVIKING_TIMEOUT_MS", "100"),
            ],
            home.path(),
        );
        assert_eq!(s.url.as_deref(), Some("http://env:1/mcp"));
        assert_eq!(s.user.as_deref(), Some("zed"));
        assert_eq!(s.credential_source, "env");
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        let s = resolve(&[("OPENVIKING_MCP_URL", "http://x/custom/")], home.path());
        assert_eq!(s.url.as_deref(), Some("http://x/custom"));
    }

    #[test]
    fn invalid_cli_file_is_empty() {
        let home = tempfile::tempdir().expect("tempdir");
        write_cli(home.path(), "{not json");
        let s = resolve(&[], home.path());
        assert_eq!(s.url.as_deref(), Some("http://127.0.0.1:1933/mcp"));
        assert_eq!(s.credential_source, "auto");
    }

    /// A key in the server URL is the proxy's key; a key in the MCP URL is dropped (the proxy
    /// authenticates with the server's key); neither shows in the settings' `Debug` or in the
    /// URL that messages name.
    #[test]
    fn keys_in_urls_are_never_shown() {
        let home = tempfile::tempdir().expect("tempdir");
        let s = resolve(
            &[("OPENVIKING_URL", "http://user:srv-KEY-1@h:1")],
            home.path(),
        );
        assert_eq!(s.api_key.as_ref().map(Secret::expose), Some("srv-KEY-1"));
        assert_eq!(s.display_url(), "http://h:1/mcp");
        assert!(!format!("{s:?}").contains("srv-KEY-1"), "{s:?}");
        let s = resolve(
            &[("OPENVIKING_MCP_URL", "http://mcp-KEY-2@m/mcp")],
            home.path(),
        );
        assert_eq!(s.api_key, None);
        assert_eq!(s.display_url(), "http://m/mcp");
        assert!(!format!("{s:?}").contains("mcp-KEY-2"), "{s:?}");
    }
}
