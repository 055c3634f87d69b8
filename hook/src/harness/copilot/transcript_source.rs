//! Copilot CLI's session log as a session's transcript source.

use std::path::{Path, PathBuf};

use ov_engine::delivery::TranscriptSource;
use ov_engine::turn::{FileIdentity, TranscriptChunk};

/// Copilot's state folder: `$COPILOT_HOME`, else `~/.copilot`.
pub fn state_dir(home: &Path) -> PathBuf {
    match std::env::var_os("COPILOT_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => home.join(".copilot"),
    }
}

/// `<state>/session-state/<sessionId>/events.jsonl`.
pub fn locate(home: &Path, session_id: &str) -> PathBuf {
    state_dir(home)
        .join("session-state")
        .join(ov_engine::ids::safe_part(session_id))
        .join("events.jsonl")
}

/// The events file at a path.
pub struct CopilotEvents {
    path: PathBuf,
}

impl CopilotEvents {
    /// The events file at `path`.
    pub fn new(path: PathBuf) -> CopilotEvents {
        CopilotEvents { path }
    }
}

impl TranscriptSource for CopilotEvents {
    fn read(
        &self,
        resume: Option<(FileIdentity, u64)>,
    ) -> std::io::Result<Option<TranscriptChunk>> {
        ov_engine::transcript::copilot::read_chunk(&self.path, resume)
    }

    fn path(&self) -> String {
        self.path.display().to_string()
    }

    fn peek(&self, resume: Option<(FileIdentity, u64)>) -> Option<bool> {
        ov_engine::transcript::tail::changed_since(&self.path, resume)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_events_file_of_a_session() {
        let home = Path::new("/h");
        if std::env::var_os("COPILOT_HOME").is_none() {
            assert_eq!(
                locate(home, "45f1de9f-246b-49ca-b2ee-c4fd953ef9cb"),
                Path::new(
                    "/h/.copilot/session-state/45f1de9f-246b-49ca-b2ee-c4fd953ef9cb/events.jsonl"
                )
            );
        }
        // A session id is one path segment, never a way out of the folder.
        assert!(!locate(home, "../../etc").to_string_lossy().contains("../"));
    }
}
