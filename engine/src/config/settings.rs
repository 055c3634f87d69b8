//! The effective configuration and its sections, with their defaults.

use std::path::PathBuf;
use std::time::Duration;

use super::{
    load, BypassConfig, LoadContext, Loaded, RepoInfo, ServerChoice, ServerConfig, ServerUrl,
};

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
    /// `capture.subagents` (`skip`): where a subagent's turns go ([`crate::subagent`]):
    /// nowhere (its hooks pass through: a subagent's prompts are the agent's, not the
    /// user's), a session of its own linked to its parent by name, or the parent's session.
    pub subagents: crate::subagent::SubagentCapture,
    /// `capture.tools` (false): the tool calls of a turn (name, input, bounded output, every
    /// string through the privacy rule) go with its assistant message as tool parts
    /// ([`crate::tool`]). Off, nothing of a tool is journaled or sent. A repository file can
    /// only turn it off.
    pub tools: bool,
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
    /// The MCP endpoint: `mcp_url` if set (its userinfo dropped: the MCP proxy authenticates with
    /// the server's key), else `<server url>/mcp` (`None` without a server).
    pub mcp_url: Option<ServerUrl>,
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
                subagents: crate::subagent::SubagentCapture::Skip,
                tools: false,
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
