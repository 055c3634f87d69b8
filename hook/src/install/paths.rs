//! Where ovhook's own files are for a home folder, computed as the hooks compute them.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// `~/.openviking/ovcli.conf`, honouring `OPENVIKING_CLI_CONFIG_FILE` and `OPENVIKING_HOME`
/// exactly as `engine::config` reads it.
pub fn ovcli_path(home: &Path) -> PathBuf {
    let mut ctx = ov_engine::config::LoadContext::from_process(Some(home));
    ctx.home = home.to_path_buf();
    ctx.ovcli_path()
}

/// The state root for `home`, as the hooks compute it.
pub fn state_root(home: &Path) -> PathBuf {
    ov_engine::paths::state_root_from(&|k| std::env::var(k).ok(), home)
}

/// The repository root holding `dir` (a worktree's `.git` file counts).
pub fn project_root(dir: &Path) -> anyhow::Result<PathBuf> {
    let dir = std::fs::canonicalize(dir)
        .with_context(|| format!("could not resolve {}", dir.display()))?;
    match ov_engine::config::RepoInfo::discover(&dir) {
        Some(repo) => Ok(repo.root),
        None => bail!(
            "{} is not inside a git repository: --scope project needs one (a project \
             install writes its files at the repository's root)",
            dir.display()
        ),
    }
}
