//! The recorded Copilot CLI 1.0.102 session (`testdata/agents/copilot/`), replayed into a test
//! machine under a new session id: its `events.jsonl` lines per turn, its hook payloads with the
//! `ovhook` command each runs.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::Env;

/// The recorded session's id, replaced by the test's.
const RECORDED_SID: &str = "c375766f-19b5-404d-962a-147958f91aac";

fn recorded(file: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/agents/copilot");
    std::fs::read_to_string(root.join(file)).expect("recorded Copilot session")
}

/// Where Copilot keeps session `sid`'s events file under the test's HOME (its folder made).
pub fn events_file(env: &Env, sid: &str) -> PathBuf {
    let events = env
        .home()
        .join(".copilot/session-state")
        .join(sid)
        .join("events.jsonl");
    std::fs::create_dir_all(events.parent().expect("dir")).expect("mkdir");
    events
}

/// The recorded `events.jsonl` lines of turn `n` (1-based: from its user message to the next;
/// the first turn from the file's start), as session `sid`'s.
pub fn turn_lines(sid: &str, n: usize) -> String {
    recorded("transcript.jsonl")
        .replace(RECORDED_SID, sid)
        .split_inclusive('\n')
        .scan(0, |users, line| {
            *users += usize::from(line.contains(r#""type":"user.message""#));
            Some((*users, line.to_owned()))
        })
        .filter(|(users, _)| *users == n || (n == 1 && *users == 0))
        .map(|(_, line)| line)
        .collect()
}

/// The recorded hook payloads, in order, with the `ovhook` command of each (events ovhook
/// does not answer left out), made session `sid`'s in `cwd`, naming `events` as the transcript.
pub fn hooks(sid: &str, cwd: &str, events: &Path) -> Vec<(&'static str, Value)> {
    recorded("hooks.jsonl")
        .lines()
        .filter_map(|line| {
            let v: Value = serde_json::from_str(line).expect("hook");
            let command = match v["event"].as_str().expect("event") {
                "sessionStart" => "session-start",
                "userPromptSubmitted" => "user-prompt-submit",
                "preToolUse" => "pre-tool-use",
                "agentStop" => "stop",
                "sessionEnd" => "session-end",
                _ => return None,
            };
            let mut payload = v["payload"].clone();
            payload["sessionId"] = json!(sid);
            payload["cwd"] = json!(cwd);
            if payload.get("transcriptPath").is_some() {
                payload["transcriptPath"] = json!(events.display().to_string());
            }
            Some((command, payload))
        })
        .collect()
}

/// Appends `text` to the events file at `path`.
pub fn append(path: &Path, text: &str) {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .expect("events.jsonl");
}
