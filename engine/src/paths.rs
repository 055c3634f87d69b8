//! Where ovhook keeps its files, and where ZCode keeps its rollout (the other agents' transcript
//! paths are their harnesses' business: a payload names them or the hook side finds them).
//!
//! Invariant: every folder ovhook creates is 0700 and every file 0600, because
//! journals hold conversation text.

use std::io;
use std::path::{Path, PathBuf};

use crate::ids::safe_part;

/// The state root: `$OVHOOK_STATE_DIR`, else `$OPENVIKING_HOME/ovhook`, else
/// `~/.openviking/ovhook`.
pub fn state_root_from(env: &dyn Fn(&str) -> Option<String>, home: &Path) -> PathBuf {
    if let Some(dir) = env("OVHOOK_STATE_DIR").filter(|s| !s.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = env("OPENVIKING_HOME").filter(|s| !s.is_empty()) {
        return PathBuf::from(dir).join("ovhook");
    }
    home.join(".openviking").join("ovhook")
}

/// The binaries' stable home, `<home>/.openviking/ovhook/bin`: where `ovhook install` copies
/// `ovhook` and `ovreplay` and what every installed entry names. Fixed under the home folder (no
/// variable moves it), so a plugin manifest can name `$HOME/.openviking/ovhook/bin/ovhook`.
pub fn bin_dir(home: &Path) -> PathBuf {
    home.join(".openviking").join("ovhook").join("bin")
}

/// The state root for this process's environment.
pub fn state_root() -> PathBuf {
    state_root_from(&|k| std::env::var(k).ok(), &home_dir())
}

/// `$HOME`, else `$USERPROFILE`, else `/`.
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var_os("USERPROFILE").filter(|h| !h.is_empty()))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Folder holding every session's journal.
pub fn journals_dir(root: &Path) -> PathBuf {
    root.join("journals")
}

/// The journal directory of one session.
pub fn journal_dir(root: &Path, session_id: &str) -> PathBuf {
    journals_dir(root).join(safe_part(session_id))
}

/// The per-session worker lock (one sender per session at a time).
pub fn worker_lock(journal_dir: &Path) -> PathBuf {
    journal_dir.join("worker.lock")
}

/// ovhook's log file.
pub fn log_file(root: &Path) -> PathBuf {
    root.join("ovhook.log")
}

/// ZCode's rollout file for a session: `~/.zcode/cli/rollout/model-io-<sessionId>.jsonl`.
/// ZCode names the file after the raw id; an id that cannot be one file-name component
/// (a separator, `..`) is replaced by its [`safe_part`], so the path never leaves the folder.
pub fn zcode_rollout(home: &Path, session_id: &str) -> PathBuf {
    let name = match crate::ids::file_component(session_id) {
        Some(raw) => raw.to_owned(),
        None => safe_part(session_id),
    };
    home.join(".zcode")
        .join("cli")
        .join("rollout")
        .join(format!("model-io-{name}.jsonl"))
}

/// Creates `dir` and its missing parents with mode 0700.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_root_precedence() {
        let home = Path::new("/h");
        let none = |_: &str| None;
        assert_eq!(
            state_root_from(&none, home),
            PathBuf::from("/h/.openviking/ovhook")
        );
        let ov = |k: &str| (k == "OPENVIKING_HOME").then(|| "/ov".to_string());
        assert_eq!(state_root_from(&ov, home), PathBuf::from("/ov/ovhook"));
        let both = |k: &str| match k {
            "OVHOOK_STATE_DIR" => Some("/s".to_string()),
            "OPENVIKING_HOME" => Some("/ov".to_string()),
            _ => None,
        };
        assert_eq!(state_root_from(&both, home), PathBuf::from("/s"));
    }

    #[test]
    fn rollout_path_cannot_escape() {
        let p = zcode_rollout(Path::new("/h"), "../../x");
        assert_eq!(p.parent(), Some(Path::new("/h/.zcode/cli/rollout")));
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        assert!(
            name.starts_with("model-io-") && !name.contains('/'),
            "{name}"
        );
        // A plain component keeps the raw id, as ZCode names the file.
        assert_eq!(
            zcode_rollout(Path::new("/h"), "proj x"),
            PathBuf::from("/h/.zcode/cli/rollout/model-io-proj x.jsonl")
        );
    }
}
