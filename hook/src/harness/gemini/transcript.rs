//! Where Gemini CLI's session file is:
//!
//! `<gemini>/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of the id>.jsonl`,
//! where `<gemini>` is `$GEMINI_CLI_HOME/.gemini` (else `~/.gemini`) and `<project>` the
//! name `<gemini>/projects.json` gives the session's folder (`{"projects": {"<abs path>":
//! "<name>"}}`). A `--resume` appends to the same file; one in a later minute also leaves a
//! new file of that minute holding only headers (its SessionStart names that one), so of the
//! files of a session the largest is its transcript.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Gemini's folder: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
pub fn gemini_dir(home: &Path) -> PathBuf {
    match std::env::var_os("GEMINI_CLI_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join(".gemini"),
        _ => home.join(".gemini"),
    }
}

/// Largest `projects.json` read.
const MAX_PROJECTS_BYTES: u64 = 1 << 20;

/// The project name Gemini gives `cwd`, from `projects.json`.
fn project_name(gemini: &Path, cwd: &str) -> Option<String> {
    let file = ov_engine::regular_file::open_stream(&gemini.join("projects.json")).ok()??;
    let mut text = String::new();
    file.take(MAX_PROJECTS_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let name = v.get("projects")?.get(cwd)?.as_str()?;
    // One path segment, never a way out of the folder.
    (!name.is_empty() && !name.contains('/') && name != "..").then(|| name.to_owned())
}

/// Whether the session file at `path` begins with the header of `session_id`.
fn holds_session(path: &Path, session_id: &str) -> bool {
    let Ok(Some(file)) = ov_engine::regular_file::open_stream(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(4096).read_to_end(&mut head).is_err() {
        return false;
    }
    let needle = format!("\"sessionId\":\"{session_id}\"");
    crate::harness::transcript_tail::contains(&head, needle.as_bytes())
}

/// The largest session file of `session_id` in `chats` (see the module doc).
fn in_chats(chats: &Path, session_id: &str) -> Option<PathBuf> {
    let short: String = session_id.chars().take(8).collect();
    let suffix = format!("-{short}.jsonl");
    std::fs::read_dir(chats)
        .ok()?
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with("session-") && n.ends_with(&suffix))
        })
        .map(|e| e.path())
        .filter(|p| holds_session(p, session_id))
        .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
}

/// Where the session file of `session_id` is: in the chats of the project Gemini names
/// `cwd`, else in any project's chats; `None` when there is none (yet).
pub fn locate(home: &Path, session_id: &str, cwd: Option<&str>) -> Option<PathBuf> {
    let session_id = ov_engine::ids::safe_part(session_id);
    let tmp = gemini_dir(home).join("tmp");
    if let Some(name) = cwd.and_then(|c| project_name(&gemini_dir(home), c)) {
        if let Some(p) = in_chats(&tmp.join(name).join("chats"), &session_id) {
            return Some(p);
        }
    }
    std::fs::read_dir(&tmp)
        .ok()?
        .flatten()
        .find_map(|e| in_chats(&e.path().join("chats"), &session_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_file_of_a_session() {
        if std::env::var_os("GEMINI_CLI_HOME").is_some() {
            return;
        }
        let home = tempfile::tempdir().expect("tmp");
        let sid = "ae23a062-bde1-4a61-8951-e337c1491c99";
        assert!(locate(home.path(), sid, Some("/w/p")).is_none());
        let g = home.path().join(".gemini");
        let chats = g.join("tmp").join("p").join("chats");
        std::fs::create_dir_all(&chats).expect("mkdir");
        std::fs::write(g.join("projects.json"), r#"{"projects":{"/w/p":"p"}}"#).expect("projects");
        let file = chats.join("session-2026-12-04T16-16-ae23a062.jsonl");
        let header = format!("{{\"sessionId\":\"{sid}\",\"kind\":\"main\"}}\n");
        std::fs::write(
            &file,
            format!("{header}{{\"id\":\"u1\",\"type\":\"user\"}}\n"),
        )
        .expect("session");
        // A resume in a later minute leaves a file of headers only: not the transcript.
        std::fs::write(
            chats.join("session-2026-12-04T16-17-ae23a062.jsonl"),
            &header,
        )
        .expect("stub");
        // Another session whose id starts the same is not this one.
        std::fs::write(
            chats.join("session-2026-12-04T16-20-ae23a062.jsonl"),
            "{\"sessionId\":\"ae23a062-0000\",\"kind\":\"main\"}\n",
        )
        .expect("other");
        assert_eq!(locate(home.path(), sid, Some("/w/p")), Some(file.clone()));
        // A folder Gemini does not know: every project's chats are searched.
        assert_eq!(locate(home.path(), sid, Some("/elsewhere")), Some(file));
        assert!(locate(home.path(), "../../etc", None).is_none());
    }
}
