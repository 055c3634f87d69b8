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
//! * the switches `memory.enabled`, `recall.enabled`, `capture.enabled`, `capture.tools`,
//!   `profile.enabled` can
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

mod bypass;
mod context;
pub mod keys;
pub mod peer;
mod report;
mod secret;
mod server;
mod server_url;
mod settings;
mod sources;
pub mod trust;

pub use bypass::BypassConfig;
pub use context::LoadContext;
pub use peer::{normalize_remote_url, project_slot, workspace_peer_from_cwd, RepoInfo};
pub use report::{ConfigWarning, Loaded, Source, SourceReport, SourceStatus};
pub use secret::Secret;
pub use server::{ServerChoice, ServerConfig, LOCAL_DEFAULT_URL};
pub use server_url::{Scheme, ServerUrl, UrlError};
pub use settings::{
    CaptureConfig, Config, HooksConfig, JournalConfig, NetworkConfig, PeerConfig, PeerScope,
    PeerSource, ProfileConfig, RecallConfig, Workspace, DEFAULT_COMMIT_TOKEN_THRESHOLD,
    DEFAULT_RETENTION_DAYS,
};

/// Loads the layered configuration for `ctx`. Cheap (a few small file reads) and infallible.
pub fn load(ctx: &LoadContext) -> Loaded {
    sources::load(ctx)
}
