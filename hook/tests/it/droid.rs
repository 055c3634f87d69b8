//! Factory Droid, driven from its recorded hook payloads (`testdata/agents/droid/`, untested
//! against the real CLI): three turns through the real `ovhook --harness droid` hooks against
//! the real OpenViking server (the first reads a file, the second tries a `viking://` path
//! and is steered by a `<system-reminder>`, the last two send the same short prompt), each
//! captured exactly once and whole, the answer read from the transcript Stop names; recall
//! injected in Claude Code's `hookSpecificOutput` shape; the `viking://` read denied.

use crate::common;

use std::io::Write;
use std::path::Path;

use common::{assert_exactly_once, Env, Turn};
use serde_json::{json, Value};

const HOOKS: &str = include_str!("../../../testdata/agents/droid/hooks.jsonl");

/// The recorded payloads, in order, as (event, payload).
fn recorded() -> Vec<(String, Value)> {
    HOOKS
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| {
            (
                v["event"].as_str().expect("event").to_owned(),
                v["payload"].clone(),
            )
        })
        .collect()
}

/// Runs `ovhook --harness droid <sub>` with `payload`; exit 0; its stdout.
fn hook(env: &Env, sub: &str, payload: &Value) -> String {
    let out = env.run_with(
        &["--harness", "droid", sub],
        payload.to_string().as_bytes(),
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{sub}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The one JSON object a hook printed.
fn line(stdout: &str) -> Value {
    assert!(
        stdout.ends_with('\n') && stdout.trim_end().lines().count() == 1,
        "one line expected: {stdout:?}"
    );
    serde_json::from_str(stdout.trim_end()).expect("JSON")
}

fn append(path: &Path, records: &[Value]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("transcript");
    for r in records {
        writeln!(f, "{r}").expect("write");
    }
}

fn message(id: &str, role: &str, content: Value) -> Value {
    json!({"type": "message", "id": id, "message": {"role": role, "content": content}})
}

#[test]
fn three_turns_are_captured_once_whole_with_recall_and_the_viking_read_denied() {
    let Some(url) = common::server_url() else {
        return;
    };
    let fact = "The user keeps wombat-amber tabs pinned in the droid editor.";
    common::seed(
        &url,
        "viking://~/memories/preferences/wombat-amber-tabs.md",
        fact,
    );
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "0");
    env.set("OPENVIKING_TIMEOUT_MS", "30000");
    let project = env.home().join("project");
    std::fs::create_dir_all(&project).expect("project");
    std::fs::write(project.join("notes.md"), "editor: tabs\n").expect("notes");
    let sid = format!("droid-{}", common::unique_session());
    let transcript = env
        .home()
        .join(".factory/sessions")
        .join(project.display().to_string().replace('/', "-"))
        .join(format!("{sid}.jsonl"));
    std::fs::create_dir_all(transcript.parent().expect("dir")).expect("mkdir");
    append(&transcript, &[json!({"type": "session_start", "id": sid})]);
    let prompts = [
        "Read notes.md: which wombat-amber tabs do I keep pinned in the droid editor?",
        "wombat-amber tabs?",
        "wombat-amber tabs?",
    ];
    let answers = [
        "Your notes and memory agree: wombat-amber tabs, pinned.",
        "Pinned wombat-amber tabs.",
        "Still pinned wombat-amber tabs.",
    ];
    let mut turns: Vec<Turn> = Vec::new();
    let mut recalls: Vec<Option<String>> = Vec::new();
    let mut denied = 0;
    let mut ends = 0;
    for (event, mut payload) in recorded() {
        // This test's own session, folder and transcript.
        payload["session_id"] = json!(sid);
        payload["cwd"] = json!(project.display().to_string());
        payload["transcript_path"] = json!(transcript.display().to_string());
        let n = turns.len();
        match event.as_str() {
            "SessionStart" => {
                let out = hook(&env, "session-start", &payload);
                if !out.is_empty() {
                    let v = line(&out);
                    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
                    assert!(v["hookSpecificOutput"]["additionalContext"].is_string());
                }
            }
            "UserPromptSubmit" => {
                let id = format!("{sid}-user-{n}");
                payload["prompt"] = json!(prompts[n]);
                payload["message_id"] = json!(id);
                let out = hook(&env, "user-prompt-submit", &payload);
                let ctx = (!out.is_empty()).then(|| {
                    let v = line(&out);
                    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
                    v["hookSpecificOutput"]["additionalContext"]
                        .as_str()
                        .expect("context")
                        .to_owned()
                });
                recalls.push(ctx);
                append(
                    &transcript,
                    &[message(
                        &id,
                        "user",
                        json!([{"type": "text", "text": prompts[n]}]),
                    )],
                );
                turns.push(Turn {
                    id,
                    prompt: prompts[n].to_owned(),
                    answer: answers[n].to_owned(),
                });
            }
            "PreToolUse" => {
                let path = payload["tool_input"]["file_path"]
                    .as_str()
                    .expect("path")
                    .to_owned();
                if path.starts_with("viking:") {
                    let v = line(&hook(&env, "pre-tool-use", &payload));
                    denied += 1;
                    let out = &v["hookSpecificOutput"];
                    assert_eq!(out["hookEventName"], "PreToolUse", "{v}");
                    assert_eq!(out["permissionDecision"], "deny", "{v}");
                    let reason = out["permissionDecisionReason"].as_str().expect("reason");
                    assert!(reason.contains("viking://"), "{reason}");
                    // Droid steers the turn when the user writes meanwhile: a reminder,
                    // never the prompt, which the answer must not be taken for.
                    append(
                        &transcript,
                        &[message(
                            &format!("{sid}-steer"),
                            "user",
                            json!([{"type": "text", "text": "<system-reminder>\nkeep going\n</system-reminder>"}]),
                        )],
                    );
                } else {
                    let local = project.join("notes.md").display().to_string();
                    payload["tool_input"]["file_path"] = json!(local);
                    assert_eq!(hook(&env, "pre-tool-use", &payload), "", "allowed");
                    append(
                        &transcript,
                        &[
                            message(
                                &format!("{sid}-read"),
                                "assistant",
                                json!([{"type": "text", "text": "Reading notes.md."},
                                       {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": local}}]),
                            ),
                            message(
                                &format!("{sid}-result"),
                                "user",
                                json!([{"type": "tool_result", "tool_use_id": "t1", "content": "editor: tabs\n"}]),
                            ),
                        ],
                    );
                }
            }
            "PostToolUse" => {
                assert_eq!(hook(&env, "post-tool-use", &payload), "");
            }
            "Stop" => {
                let turn = &turns[n - 1];
                let final_id = format!("{sid}-answer-{n}");
                append(
                    &transcript,
                    &[
                        message(
                            &final_id,
                            "assistant",
                            json!([{"type": "text", "text": turn.answer}]),
                        ),
                        json!({"type": "agent_turn_outcome"}),
                    ],
                );
                payload["message_id"] = json!(final_id);
                assert_eq!(hook(&env, "stop", &payload), "", "Stop prints nothing");
                env.wait_worker_after_stop_of(&sid, &turn.id);
            }
            "SessionEnd" => {
                // Droid may fire it twice at exit, the second with message_count 0.
                assert_eq!(hook(&env, "session-end", &payload), "");
                ends += 1;
            }
            other => panic!("unexpected event {other}"),
        }
    }
    common::wait_all_idle(&env);
    assert_eq!((turns.len(), denied, ends), (3, 1, 2));
    let first = recalls[0]
        .as_deref()
        .expect("the seeded memory is recalled");
    assert!(first.contains("wombat-amber"), "{first}");
    assert_eq!(
        recalls[1], recalls[2],
        "the same prompt, the same injection (this does not tell the cache from the server)"
    );
    let remote = ov_engine::ids::remote_session_id("dr-", &sid);
    assert_exactly_once(&url, &remote, &turns);
}
