//! What loading tells besides the configuration: its sources and one warning per problem.

use std::fmt;
use std::path::{Path, PathBuf};

use super::Config;

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

/// A file source considered by [`load`](super::load), in precedence order (highest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceReport {
    /// The source.
    pub source: Source,
    /// What happened to it.
    pub status: SourceStatus,
}

/// The result of [`load`](super::load): never an error.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The effective configuration.
    pub config: Config,
    /// One line per problem, in the order found.
    pub warnings: Vec<ConfigWarning>,
    /// The file sources considered (registry, repo local, repo, ovcli), highest precedence first.
    pub sources: Vec<SourceReport>,
}
