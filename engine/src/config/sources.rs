//! Reading the sources and folding them, lowest precedence first, into a [`Config`].

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::keys::{self, Typed};
use super::peer::{slot_for, workspace_peer_from_cwd, RepoInfo};
use super::trust;
use super::{
    Config, ConfigWarning, LoadContext, Loaded, PeerSource, Secret, ServerChoice, ServerConfig,
    ServerUrl, Source, SourceReport, SourceStatus, Workspace, LOCAL_DEFAULT_URL,
};

/// Files larger than this are not configuration: skipped with a warning.
const MAX_FILE_BYTES: u64 = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CredentialMode {
    Auto,
    EnvOnly,
    FilesOnly,
}

/// Credential fields as the layers set them; `Some("")` = explicitly empty.
#[derive(Default)]
struct Creds {
    url: Option<String>,
    url_source: Option<Source>,
    api_key: Option<String>,
    account: Option<String>,
    user: Option<String>,
    mcp_url: Option<String>,
    mcp_url_source: Option<Source>,
}

impl Creds {
    fn set(&mut self, source: &Source, key: &str, value: String) {
        match key {
            "url" => self.url_source = Some(source.clone()),
            "mcp_url" => self.mcp_url_source = Some(source.clone()),
            _ => {}
        }
        let slot = match key {
            "url" => &mut self.url,
            "api_key" => &mut self.api_key,
            "account" => &mut self.account,
            "user" => &mut self.user,
            "mcp_url" => &mut self.mcp_url,
            _ => return,
        };
        *slot = Some(value.trim().to_owned());
    }
}

struct Loader<'a> {
    ctx: &'a LoadContext,
    cfg: Config,
    creds: Creds,
    mode: CredentialMode,
    warnings: Vec<ConfigWarning>,
    reports: Vec<SourceReport>,
}

impl Loader<'_> {
    fn warn(&mut self, source: &Source, key: Option<&str>, message: String) {
        self.warnings.push(ConfigWarning {
            source: source.clone(),
            key: key.map(str::to_owned),
            message,
        });
    }

    fn file(&mut self, source: Source) {
        let Some(path) = source.path().map(Path::to_path_buf) else {
            return;
        };
        let status = match read_object(&path) {
            Ok(None) => SourceStatus::Absent,
            Ok(Some(map)) => {
                let mut entries = Vec::new();
                flatten(&map, "", &mut entries);
                for (key, value) in entries {
                    self.entry(&source, &key, &value);
                }
                SourceStatus::Loaded
            }
            Err(message) => {
                self.warn(&source, None, format!("{message}; file ignored"));
                SourceStatus::Skipped
            }
        };
        self.reports.push(SourceReport { source, status });
    }

    fn entry(&mut self, source: &Source, raw_key: &str, value: &Value) {
        let key = keys::canonical(raw_key);
        if keys::is_credential(key) {
            if source.is_repo() {
                self.warn(
                    source,
                    Some(raw_key),
                    format!(
                        "ignored {raw_key:?}: a repository's config cannot choose the server or \
                         credentials (use ~/.openviking/ovcli.conf or OPENVIKING_* variables)"
                    ),
                );
                return;
            }
            if !keys::CREDENTIALS.contains(&key) {
                if !matches!(source, Source::Ovcli(_)) {
                    self.warn(
                        source,
                        Some(raw_key),
                        format!("unknown key {raw_key:?} ignored"),
                    );
                }
                return;
            }
            match value {
                Value::String(s) => {
                    if self.mode != CredentialMode::EnvOnly {
                        self.creds.set(source, key, s.clone());
                    }
                }
                Value::Null => {}
                other => self.warn(
                    source,
                    Some(raw_key),
                    format!(
                        "{raw_key:?}: expected a string, found {}; ignored",
                        kind_name(other)
                    ),
                ),
            }
            return;
        }
        let Some(kind) = keys::kind_of(key) else {
            // ovcli.conf is shared with other OpenViking tools: its other keys are not ours.
            if !matches!(source, Source::Ovcli(_)) {
                self.warn(
                    source,
                    Some(raw_key),
                    format!("unknown key {raw_key:?} ignored"),
                );
            }
            return;
        };
        match keys::from_json(kind, value) {
            Ok((typed, note)) => {
                if let Some(note) = note {
                    self.warn(source, Some(raw_key), format!("{raw_key:?}: {note}"));
                }
                self.set(source, raw_key, key, typed);
            }
            Err(message) => self.warn(
                source,
                Some(raw_key),
                format!("{raw_key:?}: {message}; ignored"),
            ),
        }
    }

    fn set(&mut self, source: &Source, raw_key: &str, key: &str, typed: Typed) {
        if source.is_repo() {
            if let Err(reason) = trust::check_repo_value(&self.cfg, key, &typed) {
                self.warn(
                    source,
                    Some(raw_key),
                    format!("ignored {raw_key:?}: {reason}"),
                );
                return;
            }
        }
        keys::assign(&mut self.cfg, key, typed, source.is_repo());
    }

    fn env(&mut self) {
        let ctx = self.ctx;
        for (key, kind, name) in keys::TUNING {
            let Some(raw) = ctx.var(name) else { continue };
            let source = Source::Env((*name).to_owned());
            match keys::from_env(*kind, raw) {
                Ok((typed, note)) => {
                    if let Some(note) = note {
                        self.warn(&source, Some(key), note);
                    }
                    keys::assign(&mut self.cfg, key, typed, false);
                }
                Err(message) => self.warn(&source, Some(key), format!("{message}; ignored")),
            }
        }
        if ctx.var("OPENVIKING_PEER_SOURCE").is_none() {
            if let Some(v) = ctx.var("OPENVIKING_WORKSPACE_PEER") {
                if !keys::env_bool(v) {
                    self.cfg.peer.source = PeerSource::None;
                }
            }
        }
        if self.mode == CredentialMode::FilesOnly {
            return;
        }
        for (key, names) in keys::CREDENTIAL_ENV {
            if let Some(v) = names.iter().find_map(|n| ctx.var(n)) {
                let name = names
                    .iter()
                    .find(|n| ctx.var(n).is_some())
                    .copied()
                    .unwrap_or_default();
                self.creds
                    .set(&Source::Env(name.to_owned()), key, v.to_owned());
            }
        }
    }

    fn finish(mut self, repo: Option<RepoInfo>, slot: String) -> Loaded {
        let creds = std::mem::take(&mut self.creds);
        // A key in the URL's userinfo is the API key unless one is set; the URL kept has none.
        let api_key = creds.api_key.filter(|k| !k.is_empty()).map(Secret::new);
        let account = creds.account.filter(|a| !a.is_empty());
        let user = creds.user.filter(|a| !a.is_empty());
        let server_for = |url: ServerUrl| {
            let (url, url_key) = url.split_key();
            ServerConfig {
                url,
                api_key: api_key.or(url_key),
                account,
                user,
            }
        };
        let (server, choice) = match creds.url.filter(|u| !u.is_empty()) {
            None => match ServerUrl::parse(LOCAL_DEFAULT_URL) {
                Ok(url) => (Some(server_for(url)), ServerChoice::LocalDefault),
                Err(_) => (None, ServerChoice::Off),
            },
            Some(u) if ServerUrl::means_off(&u) => (None, ServerChoice::Off),
            Some(u) => match ServerUrl::parse(&u) {
                Ok(url) => (Some(server_for(url)), ServerChoice::Configured),
                Err(e) => {
                    let source = creds.url_source.unwrap_or(Source::Env("url".into()));
                    self.warn(
                        &source,
                        Some("url"),
                        format!("server url: {e} (nor \"off\"); journal only"),
                    );
                    (None, ServerChoice::Off)
                }
            },
        };
        self.cfg.server_choice = choice;
        let mcp_url = match creds.mcp_url.filter(|u| !u.is_empty()) {
            Some(u) => match ServerUrl::parse(&u) {
                Ok(url) => Some(url.split_key().0),
                Err(e) => {
                    let source = creds
                        .mcp_url_source
                        .unwrap_or(Source::Env("mcp_url".into()));
                    self.warn(
                        &source,
                        Some("mcp_url"),
                        format!("mcp url: {e}; using <server url>/mcp"),
                    );
                    None
                }
            },
            None => None,
        };
        self.cfg.mcp_url = mcp_url.or_else(|| server.as_ref().and_then(|s| s.url.join("mcp").ok()));
        self.cfg.server = server;

        self.cfg.peer.id = self
            .cfg
            .peer
            .id
            .take()
            .map(|p| clean_header(&p))
            .filter(|p| !p.is_empty());
        self.cfg.actor_peer = match (&self.cfg.peer.id, self.cfg.peer.source) {
            (Some(id), _) => Some(id.clone()),
            (None, PeerSource::None) => None,
            (None, PeerSource::Git) => match &repo {
                Some(r) => r.peer(),
                None => cwd_peer(&self.ctx.cwd),
            },
            (None, PeerSource::Cwd) => cwd_peer(&self.ctx.cwd),
        };
        self.cfg.workspace = Workspace {
            cwd: self.ctx.cwd.clone(),
            repo,
            slot,
        };
        self.reports.reverse();
        Loaded {
            config: self.cfg,
            warnings: self.warnings,
            sources: self.reports,
        }
    }
}

/// `url` values that mean "no server: journal only".
fn cwd_peer(cwd: &Path) -> Option<String> {
    let p = workspace_peer_from_cwd(&cwd.to_string_lossy());
    (!p.is_empty()).then_some(p)
}

/// A header-safe value: control characters dropped, trimmed, at most 256 bytes.
fn clean_header(s: &str) -> String {
    let mut out: String = s.trim().chars().filter(|c| !c.is_control()).collect();
    if out.len() > 256 {
        let mut cut = 256;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

pub(super) fn load(ctx: &LoadContext) -> Loaded {
    let mode = match ctx
        .var("OPENVIKING_CREDENTIAL_SOURCE")
        .or_else(|| ctx.var("OPENVIKING_CREDENTIALS_SOURCE"))
        .map(|m| m.trim().to_ascii_lowercase())
        .as_deref()
    {
        Some("env" | "environment") => CredentialMode::EnvOnly,
        Some("cli" | "ovcli" | "file" | "config") => CredentialMode::FilesOnly,
        _ => CredentialMode::Auto,
    };
    let mut loader = Loader {
        ctx,
        cfg: Config::default(),
        creds: Creds::default(),
        mode,
        warnings: Vec::new(),
        reports: Vec::new(),
    };
    let repo = RepoInfo::discover(&ctx.cwd);
    let slot = slot_for(repo.as_ref(), &ctx.cwd);

    loader.file(Source::Ovcli(ctx.ovcli_path()));
    if let Some(r) = &repo {
        let dir = r.root.join(".openviking");
        loader.file(Source::Repo(dir.join("config.json")));
        loader.file(Source::RepoLocal(dir.join("config.local.json")));
    }
    let registry: PathBuf = ctx
        .openviking_home()
        .join("workspaces")
        .join(format!("{slot}.json"));
    loader.file(Source::Registry(registry));
    loader.env();
    loader.finish(repo, slot)
}

/// `Ok(None)` when the file does not exist; `Err` (one line) when it is unusable. Only a regular
/// file of at most [`MAX_FILE_BYTES`] is read, never blocking (a FIFO or a terminal is refused).
fn read_object(path: &Path) -> Result<Option<Map<String, Value>>, String> {
    let text = match crate::regular_file::read_text(path, MAX_FILE_BYTES) {
        Ok(None) => return Ok(None),
        Ok(Some(t)) => t,
        Err(crate::regular_file::RegularFileError::TooLarge { size, max, .. }) => {
            return Err(format!("{size} bytes, larger than {max}"))
        }
        Err(crate::regular_file::RegularFileError::NotRegular { kind, .. }) => {
            return Err(format!("not a regular file ({kind})"))
        }
        Err(e) => return Err(format!("could not read: {e}")),
    };
    if text.trim().is_empty() {
        return Ok(Some(Map::new()));
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(other) => Err(format!(
            "expected a JSON object, found {}",
            kind_name(&other)
        )),
        Err(e) => Err(format!("malformed JSON ({e})")),
    }
}

/// Nested objects become dotted keys, stopping at known leaves.
fn flatten(map: &Map<String, Value>, prefix: &str, out: &mut Vec<(String, Value)>) {
    for (k, v) in map {
        let full = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Object(inner) if !keys::is_leaf(&full) => flatten(inner, &full, out),
            _ => out.push((full, v.clone())),
        }
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
