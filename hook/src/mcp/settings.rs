//! What the proxy needs to reach OpenViking, and how it notices that it changed.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Default per-request timeout (anchor: `timeoutMs` 15000, minimum 1000).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(15_000);
const MIN_TIMEOUT: Duration = Duration::from_millis(1_000);

/// Connection settings of the MCP proxy. Compared as a whole on reload: any difference means
/// the upstream session is stale.
#[derive(Clone, PartialEq, Eq)]
pub struct McpSettings {
    /// The MCP endpoint (`<base url>/mcp`, or `OPENVIKING_MCP_URL` verbatim), no trailing `/`.
    /// `None`: OpenViking is not configured; every request gets an error.
    pub url: Option<String>,
    /// Sent as `Authorization: Bearer <key>`. Never logged or echoed.
    pub api_key: Option<String>,
    pub account: Option<String>,
    pub user: Option<String>,
    /// The explicit peer only (anchor §2.6: the workspace-derived peer is not used here).
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

impl fmt::Debug for McpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpSettings")
            .field("url", &self.url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("account", &self.account)
            .field("user", &self.user)
            .field("actor_peer", &self.actor_peer)
            .field("user_agent", &self.user_agent)
            .field("timeout", &self.timeout)
            .field("credential_source", &self.credential_source)
            .field("credential_path", &self.credential_path)
            .finish()
    }
}

impl McpSettings {
    /// Resolves the settings from the process environment and the credential files.
    pub fn resolve() -> McpSettings {
        // NOTE: switch to `ov_engine::config` once it lands on main: this is the one line to change.
        resolve_interim(&|k| std::env::var(k).ok(), home_dir().as_deref())
    }

    /// The endpoint URL with any `user:password@` removed, for messages.
    pub fn display_url(&self) -> String {
        self.url.as_deref().map(redact_userinfo).unwrap_or_default()
    }
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// TEMPORARY resolver until `ov_engine::config` (branch `h/config`) lands; replace the call in
/// [`McpSettings::resolve`]. Per field: environment first, then `ovcli.conf`.
///
/// * url: `OPENVIKING_MCP_URL`, else (`OPENVIKING_URL` | `OPENVIKING_BASE_URL` | ovcli `url`) + `/mcp`;
/// * api key: `OPENVIKING_BEARER_TOKEN` | `OPENVIKING_API_KEY` | ovcli `api_key`;
/// * account: `OPENVIKING_ACCOUNT` | ovcli `account` | `account_id`; user likewise with `user_id`;
/// * peer: `OPENVIKING_PEER_ID` | ovcli `actor_peer_id` | `peer_id`;
/// * ovcli path: `OPENVIKING_CLI_CONFIG_FILE` or `~/.openviking/ovcli.conf` (strict JSON; a missing
///   or invalid file counts as empty).
pub fn resolve_interim(env: &dyn Fn(&str) -> Option<String>, home: Option<&Path>) -> McpSettings {
    let env_str = |k: &str| env(k).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let cli_path = match env_str("OPENVIKING_CLI_CONFIG_FILE") {
        Some(p) => Some(expand_home(&p, home)),
        None => home.map(|h| h.join(".openviking").join("ovcli.conf")),
    };
    let cli = cli_path
        .as_deref()
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .filter(serde_json::Value::is_object);
    let cli_str = |keys: &[&str]| {
        keys.iter().find_map(|k| {
            cli.as_ref()?
                .get(*k)?
                .as_str()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        })
    };
    let first_env = |keys: &[&str]| keys.iter().find_map(|k| env_str(k));

    let env_has_credentials = [
        "OPENVIKING_URL",
        "OPENVIKING_BASE_URL",
        "OPENVIKING_MCP_URL",
        "OPENVIKING_BEARER_TOKEN",
        "OPENVIKING_API_KEY",
        "OPENVIKING_ACCOUNT",
        "OPENVIKING_USER",
        "OPENVIKING_PEER_ID",
    ]
    .iter()
    .any(|k| env_str(k).is_some());

    let url = env_str("OPENVIKING_MCP_URL")
        .map(|u| u.trim_end_matches('/').to_owned())
        .or_else(|| {
            first_env(&["OPENVIKING_URL", "OPENVIKING_BASE_URL"])
                .or_else(|| cli_str(&["url"]))
                .map(|base| format!("{}/mcp", base.trim_end_matches('/')))
        });
    let cli_used = cli.as_ref().is_some_and(|c| {
        [
            "url",
            "api_key",
            "account",
            "account_id",
            "user",
            "user_id",
            "actor_peer_id",
            "peer_id",
        ]
        .iter()
        .any(|k| c.get(*k).is_some_and(serde_json::Value::is_string))
    });
    let timeout = env_str("OPENVIKING_TIMEOUT_MS")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|ms| ms.is_finite())
        .map_or(DEFAULT_TIMEOUT, |ms| {
            Duration::from_millis(ms.max(0.0) as u64).max(MIN_TIMEOUT)
        });
    let version = env_str("OPENVIKING_INTEGRATION_VERSION")
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned());

    McpSettings {
        url,
        api_key: first_env(&["OPENVIKING_BEARER_TOKEN", "OPENVIKING_API_KEY"])
            .or_else(|| cli_str(&["api_key"])),
        account: env_str("OPENVIKING_ACCOUNT").or_else(|| cli_str(&["account", "account_id"])),
        user: env_str("OPENVIKING_USER").or_else(|| cli_str(&["user", "user_id"])),
        actor_peer: env_str("OPENVIKING_PEER_ID")
            .or_else(|| cli_str(&["actor_peer_id", "peer_id"])),
        user_agent: format!("openviking-memory-zcode/{version}"),
        timeout,
        credential_source: if env_has_credentials {
            "env"
        } else if cli_used {
            "ovcli"
        } else {
            "auto"
        },
        credential_path: cli_path.clone().filter(|_| cli_used),
        watched: cli_path.into_iter().collect(),
    }
}

fn expand_home(p: &str, home: Option<&Path>) -> PathBuf {
    match (p.strip_prefix('~'), home) {
        (Some(""), Some(h)) => h.to_path_buf(),
        (Some(rest), Some(h)) if rest.starts_with('/') => h.join(rest.trim_start_matches('/')),
        _ => PathBuf::from(p),
    }
}

/// `http://user:pw@host/x` → `http://host/x`.
fn redact_userinfo(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) if scheme.is_empty() => rest[at + 1..].to_owned(),
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_owned(),
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
    use std::collections::HashMap;

    fn resolve(env: &[(&str, &str)], home: &Path) -> McpSettings {
        let map: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        resolve_interim(&|k| map.get(k).cloned(), Some(home))
    }

    fn write_cli(home: &Path, body: &str) {
        std::fs::create_dir_all(home.join(".openviking")).expect("mkdir");
        std::fs::write(home.join(".openviking/ovcli.conf"), body).expect("write");
    }

    #[test]
    fn nothing_configured() {
        let home = tempfile::tempdir().expect("tempdir");
        let s = resolve(&[], home.path());
        assert_eq!(s.url, None);
        assert_eq!(s.api_key, None);
        assert_eq!(s.credential_source, "auto");
        assert_eq!(s.watched, vec![home.path().join(".openviking/ovcli.conf")]);
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
        assert_eq!(s.api_key.as_deref(), Some("k"));
        assert_eq!(s.account.as_deref(), Some("a"));
        assert_eq!(s.user.as_deref(), Some("u"));
        assert_eq!(s.actor_peer.as_deref(), Some("p"));
        assert_eq!(s.credential_source, "ovcli");
        assert!(s.credential_path.is_some());
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
                ("OPENVIKING_TIMEOUT_MS", "10"),
            ],
            home.path(),
        );
        assert_eq!(s.url.as_deref(), Some("http://env:1/mcp"));
        assert_eq!(s.api_key.as_deref(), Some("cli-key"));
        assert_eq!(s.user.as_deref(), Some("zed"));
        assert_eq!(s.credential_source, "env");
        assert_eq!(s.timeout, MIN_TIMEOUT);
        let s = resolve(&[("OPENVIKING_MCP_URL", "http://x/custom/")], home.path());
        assert_eq!(s.url.as_deref(), Some("http://x/custom"));
    }

    #[test]
    fn invalid_cli_file_is_empty() {
        let home = tempfile::tempdir().expect("tempdir");
        write_cli(home.path(), "{not json");
        let s = resolve(&[], home.path());
        assert_eq!(s.url, None);
        assert_eq!(s.credential_source, "auto");
    }

    #[test]
    fn userinfo_is_redacted() {
        assert_eq!(redact_userinfo("http://u:p@h:1/mcp"), "http://h:1/mcp");
        assert_eq!(redact_userinfo("http://h:1/a@b"), "http://h:1/a@b");
    }
}
