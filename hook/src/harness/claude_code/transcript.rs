//! Where Claude Code's session transcript is.

use std::path::{Path, PathBuf};

use ov_engine::transcript::claude_code::project_dir_name;

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
