//! The `JOURNAL` argument of the inspection commands: a journal directory, or a session id
//! looked up under the state root.

use std::path::{Path, PathBuf};

/// The state root: `--state-dir`, else `ov_engine::paths::state_root()`.
pub fn state_root(state_dir: Option<&Path>) -> PathBuf {
    state_dir.map_or_else(ov_engine::paths::state_root, Path::to_path_buf)
}

/// Resolves a `JOURNAL` argument: a journal directory, else a bare session id looked up under
/// the state root. A user error (exit 1) when neither is a journal.
pub fn resolve_journal(arg: &Path, state_dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    if ov_journal::is_journal(arg) {
        return Ok(arg.to_path_buf());
    }
    let text = arg.to_string_lossy();
    if !text.is_empty() && arg.components().count() == 1 && !arg.exists() {
        let root = state_root(state_dir);
        let dir = ov_engine::paths::journal_dir(&root, &text);
        if ov_journal::is_journal(&dir) {
            return Ok(dir);
        }
        return Err(crate::exit::user(format!(
            "no journal for session {text}: {} is not a journal (and no directory {text} here)",
            dir.display()
        )));
    }
    let why = if !arg.exists() {
        "no such directory"
    } else if !arg.is_dir() {
        "not a directory"
    } else {
        "no journal segment (*.ovj) in it"
    };
    Err(crate::exit::user(format!(
        "{} is not a journal: {why}",
        arg.display()
    )))
}
