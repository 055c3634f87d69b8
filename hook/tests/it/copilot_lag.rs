//! Copilot CLI writes `events.jsonl` in batches: under load its `agentStop` and `sessionEnd`
//! hooks run before the file holds the turn they end, and `agentStop` then names the turn
//! before (the file's last user message). The recorded session's second turn, played that
//! way through the real binary (detached workers) against the real server, still reaches the
//! server before any later hook: the Stop ends the running prompt turn, and a worker waits,
//! once and bounded, for the transcript to show it.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{client, server_url, unique_session, uuid_shaped, Env};

const RECORDED_SID: &str = "c375766f-19b5-404d-962a-147958f91aac";

/// The recorded transcript's lines of turn `n` (1-based): from its user message to the next
/// (the first turn from the file's start).
fn turn_lines(transcript: &str, n: usize) -> String {
    transcript
        .split_inclusive('\n')
        .scan(0, |users, line| {
            *users += usize::from(line.contains(r#""type":"user.message""#));
            Some((*users, line))
        })
        .filter(|(users, _)| *users == n || (n == 1 && *users == 0))
        .map(|(_, line)| line)
        .collect()
}

fn append(path: &std::path::Path, text: &str) {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .expect("events.jsonl");
}

#[test]
fn a_turn_the_events_file_shows_after_its_hooks_reaches_the_server_without_a_later_hook() {
    let Some(url) = server_url() else {
        return;
    };
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_AUTO_RECALL", "0");
    let sid = uuid_shaped(&unique_session());
    let cwd = env.home().join("work");
    std::fs::create_dir_all(&cwd).expect("cwd");
    let cwd = cwd.display().to_string();
    let events = env
        .home()
        .join(".copilot/session-state")
        .join(&sid)
        .join("events.jsonl");
    std::fs::create_dir_all(events.parent().expect("dir")).expect("mkdir");
    let root =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/agents/copilot");
    let transcript = std::fs::read_to_string(root.join("transcript.jsonl"))
        .expect("transcript")
        .replace(RECORDED_SID, &sid);
    let (first, second) = (turn_lines(&transcript, 1), turn_lines(&transcript, 2));
    assert!(first.contains("user.message") && second.contains("user.message"));

    let hooks = std::fs::read_to_string(root.join("hooks.jsonl")).expect("hooks");
    let mut stops = 0;
    let mut writer = None;
    // The first two `copilot -p` runs: sessionStart … sessionEnd, twice.
    for line in hooks.lines() {
        let v: Value = serde_json::from_str(line).expect("hook");
        let command = match v["event"].as_str().expect("event") {
            "sessionStart" => "session-start",
            "userPromptSubmitted" => "user-prompt-submit",
            "preToolUse" => "pre-tool-use",
            "agentStop" => "stop",
            "sessionEnd" => "session-end",
            _ => continue,
        };
        if command == "stop" {
            stops += 1;
            if stops == 1 {
                // The first turn is in the file when its agentStop runs.
                append(&events, &first);
            }
        }
        let mut payload = v["payload"].clone();
        payload["sessionId"] = json!(sid);
        payload["cwd"] = json!(cwd);
        if payload.get("transcriptPath").is_some() {
            payload["transcriptPath"] = json!(events.display().to_string());
        }
        let out = env.run_with(
            &["--harness", "copilot", command],
            payload.to_string().as_bytes(),
            &[],
        );
        assert_eq!(out.status.code(), Some(0), "{command}");
        if command == "session-end" && stops == 2 {
            // The second turn reaches the file only after its hooks returned.
            let (path, text) = (events.clone(), second.clone());
            writer = Some(std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(700));
                append(&path, &text);
            }));
            break;
        }
        if command == "session-end" {
            crate::common::wait_all_idle(&env);
        }
    }
    writer.expect("two runs played").join().expect("writer");

    let remote = ov_engine::ids::remote_session_id("gh-", &sid);
    let deadline = Instant::now() + Duration::from_secs(60);
    let held = loop {
        crate::common::wait_all_idle(&env);
        let held = client(&url).session_messages(&remote).unwrap_or_default();
        if held.len() >= 4 || Instant::now() > deadline {
            break held;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let got: Vec<(String, String)> = held
        .iter()
        .map(|m| (m.role.clone(), m.content.trim().to_owned()))
        .collect();
    assert_eq!(got.len(), 4, "{got:#?}");
    assert_eq!(
        got.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>(),
        ["user", "assistant", "user", "assistant"]
    );
    assert_eq!(got[0].1, "Please read my notes");
    assert_eq!(got[2].1, "yes");
    assert!(held[2].turn_id.is_some() && held[2].turn_id == held[3].turn_id);
    assert_ne!(held[0].turn_id, held[2].turn_id);
    // Nothing of the journal waits for a later hook.
    let state = env.state_of(&sid);
    assert!(state.is_settled(), "{:?}", state.messages);
}
