//! Claude Code's session transcript as a session's transcript source.

use std::path::{Path, PathBuf};

use ov_engine::delivery::TranscriptSource;
use ov_engine::transcript::claude_code::project_dir_name;
use ov_engine::turn::{FileIdentity, TranscriptChunk};

/// Claude Code's configuration directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn config_dir(home: &Path) -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => home.join(".claude"),
    }
}

/// Where the transcript of `session_id` is: `<config>/projects/<cwd's name>/<id>.jsonl`,
/// else (the session's cwd changed) the one project folder that holds `<id>.jsonl`.
pub fn locate(home: &Path, session_id: &str, cwd: Option<&str>) -> PathBuf {
    let projects = config_dir(home).join("projects");
    let file = format!("{}.jsonl", ov_engine::ids::safe_part(session_id));
    let expected = projects
        .join(project_dir_name(cwd.unwrap_or("/")))
        .join(&file);
    if expected.exists() {
        return expected;
    }
    std::fs::read_dir(&projects)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join(&file))
        .find(|p| p.is_file())
        .unwrap_or(expected)
}

/// The transcript at a path.
pub struct ClaudeTranscript {
    path: PathBuf,
}

impl ClaudeTranscript {
    /// The transcript at `path`.
    pub fn new(path: PathBuf) -> ClaudeTranscript {
        ClaudeTranscript { path }
    }
}

impl TranscriptSource for ClaudeTranscript {
    fn read(
        &self,
        resume: Option<(FileIdentity, u64)>,
    ) -> std::io::Result<Option<TranscriptChunk>> {
        self.read_after(resume, None)
    }

    fn read_after(
        &self,
        resume: Option<(FileIdentity, u64)>,
        last_turn: Option<&str>,
    ) -> std::io::Result<Option<TranscriptChunk>> {
        ov_engine::transcript::claude_code::read_chunk(&self.path, resume, last_turn)
    }

    fn path(&self) -> String {
        self.path.display().to_string()
    }

    fn peek(&self, resume: Option<(FileIdentity, u64)>) -> Option<bool> {
        let meta = match std::fs::metadata(&self.path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(false),
            Err(_) => return None,
        };
        Some(match resume {
            None => meta.len() > 0,
            Some((id, offset)) => {
                ov_engine::transcript::tail::identity_of(&meta) != id || meta.len() != offset
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_names_and_lookup() {
        assert_eq!(
            project_dir_name("/tmp/cc real/work.x"),
            "-tmp-cc-real-work-x"
        );
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path();
        let at = home.join(".claude/projects/-w/s1.jsonl");
        assert_eq!(locate(home, "s1", Some("/w")), at);
        std::fs::create_dir_all(home.join(".claude/projects/-elsewhere")).expect("mkdir");
        let moved = home.join(".claude/projects/-elsewhere/s1.jsonl");
        std::fs::write(&moved, "").expect("write");
        assert_eq!(locate(home, "s1", Some("/w")), moved);
    }
}
