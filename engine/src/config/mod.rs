//! Layered configuration: environment, machine registry, repository files, `ovcli.conf`, defaults.
//!
//! # Context
//!
//! [`load`] runs on every hook invocation, so it only reads a handful of small files (no process
//! spawn, no git binary) and never fails: a bad source yields one [`ConfigWarning`] line and
//! loading goes on with the others.
//!
//! # Design
//!
//! ```text
//!  precedence (highest first)                        may set
//!  ──────────────────────────────────────────────    ─────────────────────────────
//!  1 environment  OPENVIKING_*                       everything
//!  2 machine registry ~/.openviking/workspaces/<slot>.json   everything
//!  3 <repo>/.openviking/config.local.json            tuning only  (trust boundary)
//!  4 <repo>/.openviking/config.json                  tuning only  (trust boundary)
//!  5 ~/.openviking/ovcli.conf                        everything
//!  6 built-in defaults                               -
//! ```
//!
//! `~/.openviking` is `$OPENVIKING_HOME` when set; `ovcli.conf` is `$OPENVIKING_CLI_CONFIG_FILE`
//! when set. The repository root is the nearest ancestor of the cwd holding `.git` (a directory,
//! or a `gitdir:` file for worktrees and submodules).
//!
//! **Trust boundary.** The two files inside a repository come with whatever the user clones. They
//! may tune recall, capture, profile, network timeouts and the peer, but:
//! * they can never choose where data goes or which credentials are used: `url`, `api_key`,
//!   `account`, `user`, `mcp_url`, `server.*`, `mcp.*` set there are ignored, one warning each;
//! * the switches `memory.enabled`, `recall.enabled`, `capture.enabled`, `profile.enabled` can
//!   only be turned *off* there (a `true` over a machine-level `false` is ignored with a warning),
//!   `bypass.session` only *on*, and `bypass.patterns` are added to the machine's, never replace;
//! * time budgets, output caps and limits can only be *lowered* there ([`trust`] has the rule of
//!   every key), so a cloned repository cannot make a hook slower or louder;
//! * only regular files of at most 1 MiB are read, without blocking ([`crate::regular_file`]).
//!
//! **Workspace slot** (the registry file name): the repository's normalised `origin` remote
//! (`github.com-volcengine-openviking`) when the repository has one; else the repository root
//! path, else the cwd, with every character outside `[A-Za-z0-9]` replaced by `-` (the anchor's
//! `deriveWorkspacePeerId`). Clones, subfolders and worktrees of one repository share a slot.
//!
//! File keys may be nested (`{"recall":{"max_items":5}}`) or dotted (`{"recall.max_items":5}`).
//! See [`keys`] for the key table and the environment names.

pub mod keys;
pub mod peer;
mod sources;
pub mod trust;
mod url_credentials;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use peer::{normalize_remote_url, project_slot, workspace_peer_from_cwd, RepoInfo};
pub use url_credentials::split_url_credentials;

/// What [`load`] reads besides the files: the cwd, the home directory and a snapshot of the
/// environment (only `OPENVIKING_*` and `OVHOOK_*` variables matter).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadContext {
    /// The working directory of the agent (the hook payload's `cwd`, else the process's).
    pub cwd: PathBuf,
    /// The user's home directory.
    pub home: PathBuf,
    /// Environment variables, name → value.
    pub env: BTreeMap<String, String>,
}

impl LoadContext {
    /// Snapshots the process: `cwd` (or the current directory), `$HOME` (else `$USERPROFILE`,
    /// else `/`) and every `OPENVIKING_*` / `OVHOOK_*` variable.
    pub fn from_process(cwd: Option<&Path>) -> LoadContext {
        let cwd = match cwd {
            Some(c) => c.to_path_buf(),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        };
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .or_else(|| std::env::var_os("USERPROFILE").filter(|h| !h.is_empty()))
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/"));
        let env = std::env::vars()
            .filter(|(k, _)| k.starts_with("OPENVIKING_") || k.starts_with("OVHOOK_"))
            .collect();
        LoadContext { cwd, home, env }
    }

    /// The value of a variable, `None` when unset **or empty** (empty counts as unset).
    pub fn var(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    /// `~/.openviking`, or `$OPENVIKING_HOME`.
    pub fn openviking_home(&self) -> PathBuf {
        match self.var("OPENVIKING_HOME") {
            Some(h) => expand_tilde(h, &self.home),
            None => self.home.join(".openviking"),
        }
    }

    /// `<openviking home>/ovcli.conf`, or `$OPENVIKING_CLI_CONFIG_FILE`.
    pub fn ovcli_path(&self) -> PathBuf {
        match self.var("OPENVIKING_CLI_CONFIG_FILE") {
            Some(p) => expand_tilde(p, &self.home),
            None => self.openviking_home().join("ovcli.conf"),
        }
    }
}

fn expand_tilde(p: &str, home: &Path) -> PathBuf {
    let p = p.trim();
    if p == "~" {
        home.to_path_buf()
    } else if let Some(rest) = p.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(p)
    }
}

/// A credential. Its `Debug` and `Display` never show the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }
    /// The value itself, for the one place that puts it in a request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Where data goes and as whom. Only from the environment, the registry and `ovcli.conf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Base URL, trailing `/` stripped (`http://127.0.0.1:1933`).
    pub url: String,
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

/// Where [`Config::server`] came from.
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

/// `recall.peer_scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PeerScope {
    /// Every peer's memories (no `peer_scope` field sent).
    #[default]
    All,
    /// Global memories plus the current actor peer only.
    Actor,
}

/// `peer.source`: how the actor peer is derived when `peer.id` is not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PeerSource {
    /// The repository's normalised `origin` remote (else its folder name, else cwd rules).
    #[default]
    Git,
    /// The anchor's `deriveWorkspacePeerId(cwd)`.
    Cwd,
    /// No peer header.
    None,
}

/// `recall.*`.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallConfig {
    /// `recall.enabled` (true).
    pub enabled: bool,
    /// `recall.max_items` (10, min 1).
    pub max_items: u32,
    /// `recall.score_threshold` (0.35, in 0..=1).
    pub score_threshold: f64,
    /// `recall.peer_scope` (`all`).
    pub peer_scope: PeerScope,
    /// `recall.token_budget` (2000, min 200).
    pub token_budget: u32,
    /// `recall.max_content_chars` (500, min 50).
    pub max_content_chars: u32,
    /// `recall.prefer_abstract` (true).
    pub prefer_abstract: bool,
    /// `recall.skip_control_prompts` (true): no recall for a prompt that only steers the work
    /// under way (`yes`, `continue`, a bare slash command; [`crate::text::control`]).
    pub skip_control_prompts: bool,
    /// `recall.query_filters` (`recallQueryFilters`): the user's rules for the recall query
    /// ([`crate::privacy::rules`]), as written.
    pub query_filters: Vec<String>,
}

/// `capture.*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureConfig {
    /// `capture.enabled` (true).
    pub enabled: bool,
    /// `capture.commit_token_threshold` ([`DEFAULT_COMMIT_TOKEN_THRESHOLD`]): commit once the
    /// estimated tokens of acknowledged-but-uncommitted messages reach it; 0 = after every turn.
    pub commit_token_threshold: u64,
    /// `capture.max_length`: characters sent per message (`None` = unlimited, also for 0).
    /// Truncates what is sent, never the dedup identity.
    pub max_length: Option<usize>,
    /// `capture.subagents` (false): hooks of a subagent's own session (ZCode's
    /// `sess_subagent_agent_<uuid>`, `sess_dwf-…-actor_…`) are captured and recalled as
    /// a session of their own. Off, they pass through: a subagent's internal prompts are
    /// not the user's conversation.
    pub subagents: bool,
    /// `capture.filters` (`captureFilters`): the user's rules for captured text
    /// ([`crate::privacy::rules`]), as written. Added to the built-in redaction, never
    /// instead of it.
    pub filters: Vec<String>,
}

/// `profile.*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileConfig {
    /// `profile.enabled` (true): inject the profile at SessionStart.
    pub enabled: bool,
    /// `profile.token_budget` (6000, min 500).
    pub token_budget: u32,
}

/// `peer.*`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PeerConfig {
    /// `peer.source` (`git`).
    pub source: PeerSource,
    /// `peer.id`: explicit peer, wins over `source`.
    pub id: Option<String>,
}

/// `hooks.*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HooksConfig {
    /// `hooks.max_output_bytes` (32768, ZCode's `hooks.maxOutputBytes` default).
    pub max_output_bytes: usize,
}

/// `network.*`, all in milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkConfig {
    /// `network.timeout_ms` (8000, min 100): one request.
    pub timeout_ms: u64,
    /// `network.connect_timeout_ms` (1000, min 10).
    pub connect_timeout_ms: u64,
    /// `network.backoff_ms` (30000): after a failed connect, hooks skip the network this long.
    pub backoff_ms: u64,
    /// `network.recall_budget_ms` (5000, min 100): the whole UserPromptSubmit recall.
    pub recall_budget_ms: u64,
}

impl NetworkConfig {
    /// `timeout_ms` as a duration.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }
    /// `connect_timeout_ms` as a duration.
    pub fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.connect_timeout_ms)
    }
    /// `backoff_ms` as a duration.
    pub fn backoff(&self) -> Duration {
        Duration::from_millis(self.backoff_ms)
    }
    /// `recall_budget_ms` as a duration.
    pub fn recall_budget(&self) -> Duration {
        Duration::from_millis(self.recall_budget_ms)
    }
}

/// `journal.*`: how long a session's history is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalConfig {
    /// `journal.retention_days` ([`DEFAULT_RETENTION_DAYS`], 1..=36500): a settled session's
    /// segments that only its snapshot still needs, and a whole journal of a session
    /// finished (settled, committed, untouched) this long, are pruned by a worker
    /// (`crate::retention`).
    pub retention_days: u64,
}

/// Default of `journal.retention_days`.
pub const DEFAULT_RETENTION_DAYS: u64 = 14;

/// `bypass.*` (the anchor's `shouldBypassAgent`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BypassConfig {
    /// `bypass.session`: bypass every session.
    pub session: bool,
    /// `bypass.patterns`: globs tested against the session id and the cwd (`**` any, `*` no `/`).
    pub patterns: Vec<String>,
}

impl BypassConfig {
    /// True when memory must be skipped for this session (id without the `zc-` prefix) and cwd.
    pub fn matches(&self, session_id: &str, cwd: &str) -> bool {
        self.session
            || self.patterns.iter().any(|p| {
                [session_id, cwd]
                    .iter()
                    .filter(|v| !v.is_empty())
                    .any(|v| glob_match(p, v))
            })
    }
}

/// Anchored glob: `**` matches anything, `*` anything but `/`, every other char is literal.
fn glob_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[char], t: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('*', rest)) => {
                if let Some(('*', rest2)) = rest.split_first() {
                    (0..=t.len()).any(|i| go(rest2, t.get(i..).unwrap_or_default()))
                } else {
                    let stop = t.iter().position(|c| *c == '/').unwrap_or(t.len());
                    (0..=stop).any(|i| go(rest, t.get(i..).unwrap_or_default()))
                }
            }
            Some((c, rest)) => t
                .split_first()
                .is_some_and(|(tc, tr)| tc == c && go(rest, tr)),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    go(&p, &t)
}

/// Default of `capture.commit_token_threshold`: about two substantive turns. The anchor commits
/// after every Stop (a full archive and memory extraction each time); OpenViking's own 20000 was
/// reported to keep short but important sessions from ever reaching long-term memory.
pub const DEFAULT_COMMIT_TOKEN_THRESHOLD: u64 = 2000;

/// Where the agent runs, as far as configuration is concerned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Workspace {
    /// The cwd it was loaded for.
    pub cwd: PathBuf,
    /// The repository, when the cwd is inside one.
    pub repo: Option<RepoInfo>,
    /// The machine registry slot (`~/.openviking/workspaces/<slot>.json`).
    pub slot: String,
}

/// The effective configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `memory.enabled` (true): master switch; false turns every hook but the URI guard into a no-op.
    pub memory_enabled: bool,
    /// `recall.*`.
    pub recall: RecallConfig,
    /// `capture.*`.
    pub capture: CaptureConfig,
    /// `profile.*`.
    pub profile: ProfileConfig,
    /// `peer.*` as configured.
    pub peer: PeerConfig,
    /// The resolved actor peer (`X-OpenViking-Actor-Peer`); `None` = no peer header.
    pub actor_peer: Option<String>,
    /// `hooks.*`.
    pub hooks: HooksConfig,
    /// `network.*`.
    pub network: NetworkConfig,
    /// `journal.*`.
    pub journal: JournalConfig,
    /// `bypass.*`.
    pub bypass: BypassConfig,
    /// `debug` (false).
    pub debug: bool,
    /// The server; **`None` is journal only, no network** (`url` = `off`).
    pub server: Option<ServerConfig>,
    /// Why [`Config::server`] is what it is.
    pub server_choice: ServerChoice,
    /// The MCP endpoint: `mcp_url` if set, else `<server url>/mcp`; `None` without a server.
    pub mcp_url: Option<String>,
    /// The workspace it was resolved for.
    pub workspace: Workspace,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            memory_enabled: true,
            recall: RecallConfig {
                enabled: true,
                max_items: 10,
                score_threshold: 0.35,
                peer_scope: PeerScope::All,
                token_budget: 2000,
                max_content_chars: 500,
                prefer_abstract: true,
                skip_control_prompts: true,
                query_filters: Vec::new(),
            },
            capture: CaptureConfig {
                enabled: true,
                commit_token_threshold: DEFAULT_COMMIT_TOKEN_THRESHOLD,
                max_length: None,
                subagents: false,
                filters: Vec::new(),
            },
            profile: ProfileConfig {
                enabled: true,
                token_budget: 6000,
            },
            peer: PeerConfig::default(),
            actor_peer: None,
            hooks: HooksConfig {
                max_output_bytes: 32768,
            },
            network: NetworkConfig {
                timeout_ms: 8000,
                connect_timeout_ms: 1000,
                backoff_ms: 30000,
                recall_budget_ms: 5000,
            },
            journal: JournalConfig {
                retention_days: DEFAULT_RETENTION_DAYS,
            },
            bypass: BypassConfig::default(),
            debug: false,
            server: None,
            server_choice: ServerChoice::Off,
            mcp_url: None,
            workspace: Workspace::default(),
        }
    }
}

impl Config {
    /// Loads the layered configuration. Same as [`load`].
    pub fn load(ctx: &LoadContext) -> Loaded {
        load(ctx)
    }
}

/// One configuration source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An environment variable.
    Env(String),
    /// `~/.openviking/workspaces/<slot>.json`.
    Registry(PathBuf),
    /// `<repo>/.openviking/config.local.json`.
    RepoLocal(PathBuf),
    /// `<repo>/.openviking/config.json`.
    Repo(PathBuf),
    /// `~/.openviking/ovcli.conf`.
    Ovcli(PathBuf),
    /// The repository's git metadata (peer derivation).
    Git(PathBuf),
}

impl Source {
    /// True for the two files inside a repository (the untrusted side of the boundary).
    pub fn is_repo(&self) -> bool {
        matches!(self, Source::RepoLocal(_) | Source::Repo(_))
    }
    /// The file, if the source is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Source::Env(_) => None,
            Source::Registry(p)
            | Source::RepoLocal(p)
            | Source::Repo(p)
            | Source::Ovcli(p)
            | Source::Git(p) => Some(p),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Env(name) => write!(f, "env {name}"),
            other => match other.path() {
                Some(p) => write!(f, "{}", p.display()),
                None => Ok(()),
            },
        }
    }
}

/// One problem with one source, printed as one line: `<source>: <message>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    /// Which source.
    pub source: Source,
    /// The key concerned, when there is one.
    pub key: Option<String>,
    /// What is wrong and what was done about it.
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source, self.message)
    }
}

/// Whether a file source was found and used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceStatus {
    /// The file does not exist.
    Absent,
    /// Read and applied (possibly with per-key warnings).
    Loaded,
    /// Unreadable or not a JSON object: skipped entirely.
    Skipped,
}

/// A file source considered by [`load`], in precedence order (highest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceReport {
    /// The source.
    pub source: Source,
    /// What happened to it.
    pub status: SourceStatus,
}

/// The result of [`load`]: never an error.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The effective configuration.
    pub config: Config,
    /// One line per problem, in the order found.
    pub warnings: Vec<ConfigWarning>,
    /// The file sources considered (registry, repo local, repo, ovcli), highest precedence first.
    pub sources: Vec<SourceReport>,
}

/// Loads the layered configuration for `ctx`. Cheap (a few small file reads) and infallible.
pub fn load(ctx: &LoadContext) -> Loaded {
    sources::load(ctx)
}
