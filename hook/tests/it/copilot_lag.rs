//! Copilot CLI writes `events.jsonl` in batches: under load its `agentStop` and `sessionEnd`
//! hooks run before the file holds the turn they end, and `agentStop` then names the turn
//! before (the file's last user message). The recorded session's second turn, played that
//! way through the real binary (detached workers) against the real server, still reaches the
//! server before any later hook: the Stop ends the running prompt turn, and a worker waits,
//! once and bounded, for the transcript to show it.

use std::time::{Duration, Instant};

use crate::common::copilot_recorded::{append, events_file, hooks, turn_lines};
use crate::common::{client, server_url, unique_session, uuid_shaped, Env};

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
    let events = events_file(&env, &sid);
    let (first, second) = (turn_lines(&sid, 1), turn_lines(&sid, 2));
    assert!(first.contains("user.message") && second.contains("user.message"));

    let mut stops = 0;
    let mut writer = None;
    // The first two `copilot -p` runs: sessionStart … sessionEnd, twice.
    for (command, payload) in hooks(&sid, &cwd, &events) {
        if command == "stop" {
            stops += 1;
            if stops == 1 {
                // The first turn is in the file when its agentStop runs.
                append(&events, &first);
            }
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
