//! Credentials into `~/.openviking/ovcli.conf` (the anchor's `configure_ovcli` semantics).
//!
//! * `url`: a value sets it; `--url ""` removes it (back to the embedded default). A value
//!   must be a server URL by configuration's rule ([`ServerUrl`]), or `off`: `install` refuses
//!   anything else before writing ([`Credentials::url_error`]).
//! * `api_key`: any given value is written, `--api-key ""` as `""` (an unauthenticated server).
//! * `account`, `user`: a value sets it, an empty value removes it.
//! * A flag not given keeps the current value; every other key is kept.
//!
//! Unlike the anchor, a malformed `ovcli.conf` is refused (and left untouched) instead of being
//! replaced by `{}`. The file is 0600, its folder 0700; the previous file is kept as
//! `ovcli.conf.bak` (0600) when it changes. It is written through a symlink and never over a
//! read-only file ([`atomic::write`]).

use std::path::Path;

use anyhow::{bail, Context};
use ov_engine::config::{Secret, ServerUrl, UrlError};
use serde_json::{Map, Value};

use super::atomic;

/// The credential flags of `ovhook install`; `None` = not given (keep).
#[derive(Debug, Default, Clone)]
pub struct Credentials {
    /// `--url`.
    pub url: Option<String>,
    /// `--api-key`.
    pub api_key: Option<Secret>,
    /// `--account`.
    pub account: Option<String>,
    /// `--user`.
    pub user: Option<String>,
}

impl Credentials {
    /// Why `--url` is not a server URL (by the rule configuration reads it with), when it is
    /// not one; empty, `off` and `none` are fine.
    pub fn url_error(&self) -> Option<UrlError> {
        let url = self.url.as_deref()?.trim();
        if url.is_empty() || ServerUrl::means_off(url) {
            return None;
        }
        ServerUrl::parse(url).err()
    }

    /// True when at least one flag was given.
    pub fn any(&self) -> bool {
        self.url.is_some()
            || self.api_key.is_some()
            || self.account.is_some()
            || self.user.is_some()
    }
}

/// What [`write()`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Written (the file changed).
    Written,
    /// Already up to date.
    Unchanged,
}

/// Merges `creds` into the file at `path`.
pub fn write(path: &Path, creds: &Credentials) -> anyhow::Result<Outcome> {
    let dir = path
        .parent()
        .with_context(|| format!("{} has no parent folder", path.display()))?;
    atomic::create_dir(dir, 0o700)?;
    set_mode(dir, 0o700)?;
    // A FIFO or device is refused here without being opened for a blocking read.
    let original = ov_engine::regular_file::read(path, 1 << 20)
        .with_context(|| format!("could not read {}", path.display()))?;
    let mut map = match &original {
        None => Map::new(),
        Some(b) if b.iter().all(u8::is_ascii_whitespace) => Map::new(),
        Some(b) => match serde_json::from_slice::<Value>(b) {
            Ok(Value::Object(m)) => m,
            Ok(_) => bail!("{} is not a JSON object; fix it and re-run", path.display()),
            Err(e) => bail!(
                "{} is malformed JSON ({e}); fix it and re-run",
                path.display()
            ),
        },
    };
    if let Some(url) = &creds.url {
        let url = url.trim().trim_end_matches('/');
        if url.is_empty() {
            map.remove("url");
        } else {
            map.insert("url".into(), Value::String(url.into()));
        }
    }
    if let Some(key) = &creds.api_key {
        map.insert("api_key".into(), Value::String(key.expose().trim().into()));
    }
    for (name, alias, value) in [
        ("account", "account_id", &creds.account),
        ("user", "user_id", &creds.user),
    ] {
        if let Some(v) = value {
            map.remove(alias);
            if v.trim().is_empty() {
                map.remove(name);
            } else {
                map.insert(name.into(), Value::String(v.trim().into()));
            }
        }
    }
    let mut bytes =
        serde_json::to_vec_pretty(&Value::Object(map)).context("could not encode ovcli.conf")?;
    bytes.push(b'\n');
    if original.as_deref() == Some(bytes.as_slice()) {
        // Only ever narrowed: a file the user made read-only stays read-only.
        if let Some(mode) = atomic::mode_of(path) {
            set_mode(path, mode & 0o600)?;
        }
        return Ok(Outcome::Unchanged);
    }
    if let Some(old) = &original {
        atomic::write(&backup_path(path), old, 0o600)?;
    }
    atomic::write(path, &bytes, 0o600)?;
    Ok(Outcome::Written)
}

fn set_mode(path: &Path, mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("could not chmod {}", path.display()))
}

/// `<file>.bak` next to `path`.
pub fn backup_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".bak");
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key given to `install` is written to the file and shows in no `Debug`.
    #[test]
    fn the_key_is_written_and_never_shown() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join(".openviking/ovcli.conf");
        let creds = Credentials {
            api_key: Some(" sk-install-key ".into()),
            ..Credentials::default()
        };
        assert!(!format!("{creds:?}").contains("sk-install-key"));
        assert_eq!(write(&path, &creds).expect("write"), Outcome::Written);
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains(r#""api_key": "sk-install-key""#), "{text}");
    }

    #[rstest::rstest]
    #[case::unset(None, None)]
    #[case::empty(Some(""), None)]
    #[case::off(Some("OFF"), None)]
    #[case::url(Some("https://KEY@h:1/"), None)]
    #[case::no_scheme(Some("h:1933"), Some(UrlError::Scheme))]
    #[case::query(Some("http://h/?k=1"), Some(UrlError::QueryOrFragment))]
    fn a_url_is_checked_by_the_server_url_rule(
        #[case] url: Option<&str>,
        #[case] want: Option<UrlError>,
    ) {
        let creds = Credentials {
            url: url.map(str::to_owned),
            ..Credentials::default()
        };
        assert_eq!(creds.url_error(), want);
    }
}
