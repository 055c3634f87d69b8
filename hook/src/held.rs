//! Harnesses the user uninstalled: nothing more of their sessions leaves the machine.
//!
//! `ovhook uninstall` (user scope) writes `<state root>/uninstalled/<harness>`; `ovhook install`
//! of that harness removes it. While it exists, workers and drains leave that harness's
//! sessions as they are (every session journals its harness's name): what is pending stays in
//! the journal, unsent, and the transcript is not read.

use std::io;
use std::path::{Path, PathBuf};

fn dir(root: &Path) -> PathBuf {
    root.join("uninstalled")
}

fn marker(root: &Path, harness: &str) -> PathBuf {
    dir(root).join(ov_engine::ids::safe_part(harness))
}

/// Holds `harness`'s sessions: nothing of them is sent until [`release`].
pub fn hold(root: &Path, harness: &str) -> io::Result<()> {
    ov_engine::paths::create_private_dir(&dir(root))?;
    let path = marker(root, harness);
    std::fs::write(
        &path,
        format!("{harness} was uninstalled: its sessions' unsent work stays in the journal\n"),
    )?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
}

/// Lets `harness`'s sessions send again; `Ok(true)` when they were held.
pub fn release(root: &Path, harness: &str) -> io::Result<bool> {
    let removed = match std::fs::remove_file(marker(root, harness)) {
        Ok(()) => true,
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(e),
    };
    // Only once empty.
    let _ = std::fs::remove_dir(dir(root));
    Ok(removed)
}

/// Whether `harness`'s sessions are held.
pub fn is_held(root: &Path, harness: &str) -> bool {
    marker(root, harness).exists()
}

/// What a held harness's sessions keep unsent: `(sessions, messages)` with something pending
/// (planned and not acknowledged, or in doubt).
pub fn pending(root: &Path, harness: &str) -> (usize, usize) {
    let mut sessions = 0;
    let mut messages = 0;
    for dir in ov_engine::store::session_dirs(root) {
        let Ok(reader) = ov_journal::Reader::open(&dir, std::time::Duration::from_millis(200))
        else {
            continue;
        };
        let state = ov_engine::store::fold_reader(&reader).state;
        if crate::harness::by_name(state.harness.as_deref()).name() != harness {
            continue;
        }
        let n = state.outbox().len() + state.sends.values().map(|s| s.keys.len()).sum::<usize>();
        if n > 0 {
            sessions += 1;
            messages += n;
        }
    }
    (sessions, messages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_and_release() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert!(!is_held(tmp.path(), "claude-code"));
        hold(tmp.path(), "claude-code").expect("hold");
        assert!(is_held(tmp.path(), "claude-code") && !is_held(tmp.path(), "zcode"));
        assert!(release(tmp.path(), "claude-code").expect("release"));
        assert!(!release(tmp.path(), "claude-code").expect("again"));
        assert!(!dir(tmp.path()).exists());
    }
}
