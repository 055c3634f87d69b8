//! What configuration loading reads besides the files: cwd, home, environment.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What [`load`](super::load) reads besides the files: the cwd, the home directory and a snapshot of the
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
