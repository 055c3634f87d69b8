//! `capture.subagents` against the real OpenViking server, for the harnesses whose subagents
//! end with a SubagentStop hook in the parent's session: Claude Code (its payload as Claude Code
//! 2.1 sends it: `agent_id`, `agent_type`, `agent_transcript_path`, `last_assistant_message`;
//! the subagent's own transcript, every entry `isSidechain`) and Codex (`subagent-stop.command.
//! input` of Codex 0.169, the same keys plus `turn_id`). Each mode: `skip` keeps nothing of the
//! subagent, `separate` gives it a session of its own named `<parent's remote id>-sub-<agent>`,
//! `inline` puts its turn into the parent's session; the parent's turn that spawned it is
//! captured whole in every mode. (OpenCode's and Kilo's subagent sessions: `opencode_shim.rs`.)

use crate::common;

use common::Env;
use ov_engine::event::Event;
use serde_json::{json, Value};

const TASK: &str = "Search the repository for the configuration loader";
const SUB_ANSWER: &str = "The loader is in src/config/loader.rs.";

struct Harness {
    name: &'static str,
    prefix: &'static str,
    turn_key: &'static str,
}

const HARNESSES: [Harness; 2] = [
    Harness {
        name: "claude-code",
        prefix: "cc-",
        turn_key: "prompt_id",
    },
    Harness {
        name: "codex",
        prefix: "cx-",
        turn_key: "turn_id",
    },
];

fn payload(h: &Harness, event: &str, sid: &str, turn: &str, cwd: &str) -> Value {
    json!({
        "session_id": sid,
        "transcript_path": format!("{cwd}/no-transcript-{sid}.jsonl"),
        "cwd": cwd,
        "hook_event_name": event,
        h.turn_key: turn,
        "permission_mode": "default",
    })
}

fn run(env: &Env, harness: &str, cmd: &str, payload: &Value) {
    let out = env.run_with(
        &["--harness", harness, cmd],
        payload.to_string().as_bytes(),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{cmd}: {out:?}");
    if cmd != "user-prompt-submit" {
        assert!(out.stdout.is_empty(), "{cmd} printed {:?}", out.stdout);
    }
}

/// The subagent's own transcript, as Claude Code writes it under
/// `<session>/subagents/agent-<id>.jsonl`.
fn agent_transcript(dir: &std::path::Path, sid: &str, agent: &str) -> String {
    let path = dir.join(format!("{sid}/subagents/agent-{agent}.jsonl"));
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let lines = [
        json!({"type": "user", "isSidechain": true, "agentId": agent, "sessionId": sid,
               "message": {"role": "user", "content": TASK}}),
        json!({"type": "assistant", "isSidechain": true, "agentId": agent, "sessionId": sid,
               "message": {"id": "msg_sub1", "role": "assistant", "stop_reason": "end_turn",
                           "content": [{"type": "text", "text": SUB_ANSWER}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).expect("transcript");
    path.display().to_string()
}

#[test]
fn a_subagents_turn_goes_where_capture_subagents_says() {
    let Some(url) = common::server_url() else {
        return;
    };
    let client = common::client(&url);
    for h in &HARNESSES {
        for mode in ["skip", "separate", "inline"] {
            let mut env = Env::with_url(&url);
            env.set("OPENVIKING_CAPTURE_SUBAGENTS", mode);
            let cwd = env.home().display().to_string();
            let sid = format!("019c{}", &common::unique_turn()[5..]);
            let turn = common::unique_turn();
            let agent = format!("a{}", &common::unique_turn()[5..21].replace('-', ""));
            let prompt = format!("Where is the config loader? {turn}");
            let answer = format!("It is src/config/loader.rs. {turn}");

            let mut ups = payload(h, "UserPromptSubmit", &sid, &turn, &cwd);
            ups["prompt"] = json!(prompt);
            run(&env, h.name, "user-prompt-submit", &ups);
            // The subagent finishes while the parent's turn waits on it.
            let mut sub = payload(h, "SubagentStop", &sid, &turn, &cwd);
            sub["agent_id"] = json!(agent);
            sub["agent_type"] = json!("general-purpose");
            sub["agent_transcript_path"] = json!(agent_transcript(env.home(), &sid, &agent));
            sub["last_assistant_message"] = json!(SUB_ANSWER);
            sub["stop_hook_active"] = json!(false);
            run(&env, h.name, "subagent-stop", &sub);
            let mut stop = payload(h, "Stop", &sid, &turn, &cwd);
            stop["last_assistant_message"] = json!(answer);
            stop["stop_hook_active"] = json!(false);
            run(&env, h.name, "stop", &stop);
            env.wait_worker_after_stop_of(&sid, &turn);
            let own = ov_engine::subagent::separate_session_id(&sid, &agent);
            if mode == "separate" {
                env.wait_for(&own, "the subagent session's worker", |evs| {
                    evs.iter()
                        .skip_while(|e| !matches!(e.event, Event::SubagentTurn { .. }))
                        .any(|e| matches!(e.event, Event::WorkerStarted { .. }))
                });
            }
            common::wait_all_idle(&env);

            let what = format!("{} {mode}", h.name);
            let parent_remote = ov_engine::ids::remote_session_id(h.prefix, &sid);
            let mut parent: Vec<(String, String)> = client
                .session_messages(&parent_remote)
                .expect("parent session")
                .into_iter()
                .map(|m| (m.role, m.content))
                .collect();
            let sub_turn = [
                ("user".to_owned(), TASK.to_owned()),
                ("assistant".to_owned(), SUB_ANSWER.to_owned()),
            ];
            if mode == "inline" {
                let at = parent
                    .iter()
                    .position(|m| *m == sub_turn[0])
                    .unwrap_or_else(|| panic!("{what}: no subagent turn in {parent:?}"));
                assert_eq!(parent.get(at + 1), Some(&sub_turn[1]), "{what}");
                parent.drain(at..at + 2);
            }
            assert_eq!(
                parent,
                [
                    ("user".to_owned(), prompt.clone()),
                    ("assistant".to_owned(), answer.clone())
                ],
                "{what}: the parent's turn, whole"
            );

            let own_remote = ov_engine::ids::remote_session_id(h.prefix, &own);
            assert_eq!(own_remote, format!("{parent_remote}-sub-{agent}"));
            let own_held: Vec<(String, String)> = client
                .session_messages(&own_remote)
                .unwrap_or_default()
                .into_iter()
                .map(|m| (m.role, m.content))
                .collect();
            let want: &[(String, String)] = if mode == "separate" { &sub_turn } else { &[] };
            assert_eq!(own_held, want, "{what}: the subagent's own session");

            let journaled = common::all_events(&env)
                .iter()
                .any(|e| format!("{:?}", e.event).contains(SUB_ANSWER));
            assert_eq!(journaled, mode != "skip", "{what}: journaled");
        }
    }
}

/// A SubagentStop without an agent id captures nothing and says why in the journal.
#[test]
fn a_subagent_stop_without_an_agent_id_is_noted() {
    let mut env = Env::new();
    env.set("OPENVIKING_CAPTURE_SUBAGENTS", "inline");
    let cwd = env.home().display().to_string();
    let sid = format!("019d{}", &common::unique_turn()[5..]);
    let h = &HARNESSES[0];
    let mut sub = payload(h, "SubagentStop", &sid, "p1", &cwd);
    sub["last_assistant_message"] = json!(SUB_ANSWER);
    run(&env, h.name, "subagent-stop", &sub);
    let events = env.events(&sid);
    assert!(events.iter().any(|e| matches!(&e.event,
        Event::HookReceived(r)
            if r.malformed.as_deref().is_some_and(|m| m.contains("no agent id")))));
    assert!(!events
        .iter()
        .any(|e| format!("{:?}", e.event).contains(SUB_ANSWER)));
}
