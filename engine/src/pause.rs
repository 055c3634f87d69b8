//! Paused capture (`ovhook pause` / `ovhook resume`): files under the state root.
//!
//! # Design
//!
//! | scope | file | covers |
//! |---|---|---|
//! | everything | `<state root>/paused/all` | every session |
//! | a project | `<state root>/paused/project-<slot>` | sessions whose working directory is in that project ([`crate::config::project_slot`]: every clone, subfolder and worktree of a repository) |
//! | a session | `<state root>/paused/session-<safe id>` | that session ([`crate::ids::safe_part`] of its native id) |
//!
//! Each file holds the scope's name and when it was paused, for people; only its presence
//! counts. The `paused` folder exists only while something is paused (resume removes it once
//! empty), so the hooks' check ([`paused`]) is one `stat` when nothing is: the hot path.
//!
//! While a scope is paused its hooks inject nothing and journal their receipt without content
//! and a [`crate::event::Event::CaptureRefused`]: turns made then are never sent, even after
//! resume. Workers and drains leave a paused session's unsent work where it is until resume.

use std::io;
use std::path::{Path, PathBuf};

use crate::ids::safe_part;

/// What a pause covers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum PauseScope {
    /// Every session.
    All,
    /// The sessions of one project, by its slot ([`crate::config::project_slot`]).
    Project(String),
    /// One session, by its native id.
    Session(String),
}

impl PauseScope {
    /// A short description (`global`, `project github.com-a-b`, `session 1234`).
    pub fn describe(&self) -> String {
        match self {
            PauseScope::All => "global".to_owned(),
            PauseScope::Project(p) => format!("project {p}"),
            PauseScope::Session(s) => format!("session {s}"),
        }
    }

    fn file_name(&self) -> String {
        match self {
            PauseScope::All => "all".to_owned(),
            PauseScope::Project(p) => format!("project-{}", safe_part(p)),
            PauseScope::Session(s) => format!("session-{}", safe_part(s)),
        }
    }
}

/// The folder of pause files.
pub fn pause_dir(root: &Path) -> PathBuf {
    root.join("paused")
}

fn pause_file(root: &Path, scope: &PauseScope) -> PathBuf {
    pause_dir(root).join(scope.file_name())
}

/// Pauses `scope`; `Ok(false)` when it already was.
pub fn pause(root: &Path, scope: &PauseScope, now_ms: u64) -> io::Result<bool> {
    let file = pause_file(root, scope);
    if file.exists() {
        return Ok(false);
    }
    crate::paths::create_private_dir(&pause_dir(root))?;
    let body = format!(
        "{}\npaused at {now_ms} ms since the epoch\n",
        scope.describe()
    );
    write_private(&file, body.as_bytes())?;
    Ok(true)
}

/// Resumes `scope`; `Ok(false)` when it was not paused. The folder goes once empty.
pub fn resume(root: &Path, scope: &PauseScope) -> io::Result<bool> {
    let removed = match std::fs::remove_file(pause_file(root, scope)) {
        Ok(()) => true,
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(e),
    };
    // Not empty (another scope is paused) or already gone: either way nothing to do.
    let _ = std::fs::remove_dir(pause_dir(root));
    Ok(removed)
}

/// The scope pausing a session (`session_id` native, `project` its project slot, computed only
/// when something is paused), the widest first; `None` when capture is not paused for it.
pub fn paused(
    root: &Path,
    session_id: &str,
    project: impl FnOnce() -> String,
) -> Option<PauseScope> {
    let dir = pause_dir(root);
    if !dir.exists() {
        return None;
    }
    let all = PauseScope::All;
    if pause_file(root, &all).exists() {
        return Some(all);
    }
    let project = PauseScope::Project(project());
    if pause_file(root, &project).exists() {
        return Some(project);
    }
    let session = PauseScope::Session(session_id.to_owned());
    pause_file(root, &session).exists().then_some(session)
}

/// Every paused scope, as its file's first line describes it (for `ovhook status`).
pub fn list(root: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(pause_dir(root)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = rd
        .flatten()
        .filter_map(|e| {
            let text = crate::regular_file::read_text(&e.path(), 4096).ok()??;
            text.lines().next().map(str::to_owned)
        })
        .collect();
    out.sort();
    out
}

fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_and_resume_each_scope() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        let proj = || "github.com-a-b".to_owned();
        assert_eq!(paused(root, "s1", proj), None);
        assert!(!pause_dir(root).exists(), "nothing paused: no folder");

        let session = PauseScope::Session("s1".into());
        assert!(pause(root, &session, 1).expect("pause"));
        assert!(!pause(root, &session, 2).expect("again"), "already paused");
        assert_eq!(paused(root, "s1", proj), Some(session.clone()));
        assert_eq!(paused(root, "s2", proj), None, "another session");

        let project = PauseScope::Project("github.com-a-b".into());
        assert!(pause(root, &project, 3).expect("pause"));
        assert_eq!(paused(root, "s2", proj), Some(project.clone()));
        assert_eq!(paused(root, "s2", || "other".to_owned()), None);

        assert!(pause(root, &PauseScope::All, 4).expect("pause"));
        assert_eq!(paused(root, "s9", || "x".to_owned()), Some(PauseScope::All));
        assert_eq!(
            list(root),
            ["global", "project github.com-a-b", "session s1"]
        );

        for scope in [PauseScope::All, project, session] {
            assert!(resume(root, &scope).expect("resume"));
            assert!(!resume(root, &scope).expect("again"));
        }
        assert!(!pause_dir(root).exists(), "the folder goes once empty");
        assert_eq!(paused(root, "s1", proj), None);
    }
}
