//! The task a Claude Code subagent was given: the first user entry of its own transcript
//! (`<session>/subagents/agent-<id>.jsonl`, every entry `isSidechain`), whose string content
//! is the prompt the agent wrote for it. Codex names its subagent's transcript the same way;
//! a file of another shape gives no task.

use std::path::Path;

/// Most of the transcript's head read for the task.
pub const TASK_READ_BYTES: u64 = 1 << 20;

/// The subagent's task: the string content of the first `user` entry in the first
/// [`TASK_READ_BYTES`] of its transcript. `None` when the file is missing, not a regular
/// file, or holds no such entry there.
pub fn subagent_task(path: &Path) -> Option<String> {
    let head = crate::regular_file::read_prefix(path, TASK_READ_BYTES)
        .ok()
        .flatten()?;
    head.split(|b| *b == b'\n').find_map(task_of_line)
}

fn task_of_line(line: &[u8]) -> Option<String> {
    // Most lines are not user entries: skip them unparsed.
    memchr::memmem::find(line, br#""user""#)?;
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    if v.get("type")?.as_str()? != "user" {
        return None;
    }
    let text = v.get("message")?.get("content")?.as_str()?;
    (!text.trim().is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_is_the_first_user_entry_with_text() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("agent-a1.jsonl");
        assert_eq!(subagent_task(&p), None);
        std::fs::write(
            &p,
            concat!(
                r#"{"type":"system","subtype":"init"}"#,
                "\n",
                r#"{"type":"user","isSidechain":true,"agentId":"a1","message":{"role":"user","content":"Find the config loader"}}"#,
                "\n",
                r#"{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"text","text":"found"}]}}"#,
                "\n",
                r#"{"type":"user","isSidechain":true,"message":{"role":"user","content":"second"}}"#,
                "\n"
            ),
        )
        .expect("write");
        assert_eq!(subagent_task(&p).as_deref(), Some("Find the config loader"));
        std::fs::write(
            &p,
            "not json\n{\"type\":\"user\",\"message\":{\"content\":[]}}\n",
        )
        .expect("write");
        assert_eq!(subagent_task(&p), None);
    }
}
