//! Where Copilot CLI's session log is.

use std::path::{Path, PathBuf};

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
