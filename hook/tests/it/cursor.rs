//! Cursor, driven from its documented hook payloads (`testdata/agents/cursor/`, untested
//! against the real app): three turns through the real `ovhook --harness cursor` hooks
//! against the real OpenViking server (the first reads a file, the second tries a
//! `viking://` path, the last two send the same short prompt), each captured exactly once
//! and whole; recall injected as Cursor's `additional_context`; the `viking://` read denied
//! and every other read allowed (Cursor's beforeReadFile fails closed). And the project-scope
//! install round trip.

use crate::common;

use std::io::Write;
use std::path::Path;

use common::{assert_exactly_once, Env, Turn};
use ov_engine::event::{Event, HookKind};
use serde_json::{json, Value};

const HOOKS: &str = include_str!("../../../testdata/agents/cursor/hooks.jsonl");

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

/// Runs `ovhook --harness cursor <sub>` with `payload`; exit 0; its stdout.
fn hook(env: &Env, sub: &str, payload: &Value) -> String {
    let out = env.run_with(
        &["--harness", "cursor", sub],
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

fn user(text: &str) -> Value {
    json!({"role": "user", "message": {"content": [{"type": "text",
        "text": format!("<timestamp>2026-12-04T18:00:00.000Z</timestamp>\n<user_query>\n{text}\n</user_query>")}]}})
}

fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "message": {"content": [{"type": "text", "text": text}]}})
}

#[test]
fn three_turns_are_captured_once_whole_with_recall_and_the_viking_read_denied() {
    let Some(url) = common::server_url() else {
        return;
    };
    let fact = "The user keeps quokka-green tabs pinned in the cursor editor.";
    common::seed(
        &url,
        "viking://~/memories/preferences/quokka-green-tabs.md",
        fact,
    );
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "0");
    env.set("OPENVIKING_TIMEOUT_MS", "30000");
    let project = env.home().join("project");
    std::fs::create_dir_all(&project).expect("project");
    std::fs::write(project.join("notes.md"), "editor: tabs\n").expect("notes");
    let transcript = env.home().join("transcript.jsonl");
    let sid = format!("cursor-{}", common::unique_session());
    let prompts = [
        "Read notes.md: which quokka-green tabs do I keep pinned in the cursor editor?",
        "quokka-green tabs?",
        "quokka-green tabs?",
    ];
    let answers = [
        "Your notes and memory agree: quokka-green tabs, pinned.",
        "Pinned quokka-green tabs.",
        "Still pinned quokka-green tabs.",
    ];
    let mut turns: Vec<Turn> = Vec::new();
    // What each turn's beforeSubmitPrompt injected (the server may find nothing new for a
    // short prompt in a session that was already given its memories).
    let mut recalls: Vec<Option<String>> = Vec::new();
    let mut denied = 0;
    let mut compacted = false;
    for (event, mut payload) in recorded() {
        // This test's own session, folder and transcript.
        payload["conversation_id"] = json!(sid);
        payload["workspace_roots"] = json!([project.display().to_string()]);
        payload["transcript_path"] = json!(transcript.display().to_string());
        if payload.get("session_id").is_some() {
            payload["session_id"] = json!(sid);
        }
        let generation = payload["generation_id"]
            .as_str()
            .expect("generation")
            .to_owned();
        match event.as_str() {
            "sessionStart" => {
                let out = hook(&env, "session-start", &payload);
                if !out.is_empty() {
                    let v = line(&out);
                    assert_eq!(v.as_object().map(|o| o.len()), Some(1), "{v}");
                    assert!(v["additional_context"].is_string(), "{v}");
                }
            }
            "beforeSubmitPrompt" => {
                let n = turns.len();
                payload["prompt"] = json!(prompts[n]);
                let v = line(&hook(&env, "user-prompt-submit", &payload));
                assert_eq!(v["continue"], true, "{v}");
                let keys = v.as_object().map_or(0, |o| o.len());
                let ctx = v["additional_context"].as_str().map(str::to_owned);
                assert_eq!(keys, 1 + usize::from(ctx.is_some()), "{v}");
                recalls.push(ctx);
                append(&transcript, &[user(prompts[n])]);
                turns.push(Turn {
                    id: generation,
                    prompt: prompts[n].to_owned(),
                    answer: answers[n].to_owned(),
                });
            }
            "beforeReadFile" => {
                let path = payload["file_path"].as_str().expect("path").to_owned();
                if !path.starts_with("viking:") {
                    payload["file_path"] = json!(project.join("notes.md").display().to_string());
                }
                let v = line(&hook(&env, "pre-tool-use", &payload));
                if path.starts_with("viking:") {
                    denied += 1;
                    assert_eq!(v["permission"], "deny", "{v}");
                    let reason = v["user_message"].as_str().expect("reason");
                    assert!(reason.contains("viking://"), "{reason}");
                    assert_eq!(v["agent_message"], v["user_message"]);
                } else {
                    assert_eq!(v, json!({"permission": "allow"}));
                    append(
                        &transcript,
                        &[json!({"role": "assistant", "message": {"content": [
                            {"type": "text", "text": "Reading notes.md."},
                            {"type": "tool_use", "name": "Read", "input": {"path": "notes.md"}}]}})],
                    );
                }
            }
            "stop" => {
                let n = turns.len() - 1;
                append(
                    &transcript,
                    &[
                        assistant(answers[n]),
                        json!({"type": "turn_ended", "status": "success"}),
                    ],
                );
                assert_eq!(hook(&env, "stop", &payload), "", "stop prints nothing");
                env.wait_worker_after_stop_of(&sid, &generation);
            }
            "preCompact" => {
                // Inside the last turn: the complete turns are on the server and committed
                // when the hook returns; the running turn stays open (sent once, by its stop).
                assert_eq!(
                    hook(&env, "pre-compact", &payload),
                    "",
                    "preCompact prints nothing"
                );
                let remote = ov_engine::ids::remote_session_id("cu-", &sid);
                let client = common::client(&url);
                let held = client.session_messages(&remote).expect("read");
                let running = &turns[turns.len() - 1];
                for t in &turns[..turns.len() - 1] {
                    assert!(held.iter().any(|m| m.content == t.answer), "{held:?}");
                }
                assert!(
                    !held
                        .iter()
                        .any(|m| m.turn_id.as_deref() == Some(running.id.as_str())),
                    "the running turn was sent before its stop: {held:?}"
                );
                let meta = client.session_meta(&remote).expect("meta").expect("exists");
                assert!(meta.commit_count >= 1, "{meta:?}");
                let events = env.events(&sid);
                assert!(events.iter().any(|e| matches!(&e.event,
                    Event::HookReceived(h) if h.kind == Some(HookKind::PreCompact)
                        && h.source.as_deref() == Some("auto"))));
                assert!(!events
                    .iter()
                    .any(|e| matches!(e.event, Event::OpenTurnsClosed)));
                compacted = true;
            }
            "sessionEnd" => {
                assert_eq!(hook(&env, "session-end", &payload), "");
                common::wait_all_idle(&env);
            }
            other => panic!("unexpected event {other}"),
        }
    }
    assert_eq!((turns.len(), denied, compacted), (3, 1, true));
    let first = recalls[0]
        .as_deref()
        .expect("the seeded memory is recalled");
    assert!(first.contains("quokka-green"), "{first}");
    assert_eq!(
        recalls[1], recalls[2],
        "the same prompt, the same injection (this does not tell the cache from the server)"
    );
    let remote = ov_engine::ids::remote_session_id("cu-", &sid);
    assert_exactly_once(&url, &remote, &turns);
}

/// A project-scope install writes `<repo>/.cursor/hooks.json` next to the repository's own
/// hooks, a re-install changes no byte, and uninstall leaves the file as it was.
#[test]
fn project_scope_install_keeps_the_repositorys_hooks() {
    let env = Env::new();
    let repo = env.home().join("repo");
    std::fs::create_dir_all(repo.join(".git")).expect("repo");
    let file = repo.join(".cursor/hooks.json");
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    let theirs =
        json!({"version": 1, "hooks": {"afterFileEdit": [{"command": ".cursor/hooks/format.sh"}]}});
    std::fs::write(&file, serde_json::to_vec_pretty(&theirs).expect("json")).expect("write");
    let home = env.home().display().to_string();
    let root = repo.display().to_string();
    let args = [
        "install",
        "--harness",
        "cursor",
        "--scope",
        "project",
        "--project",
        &root,
        "--home",
        &home,
    ];
    let out = env.run_with(&args, b"", &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("may be committed"), "{said}");
    let installed: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    assert_eq!(
        installed["hooks"]["afterFileEdit"],
        theirs["hooks"]["afterFileEdit"]
    );
    for (event, sub) in [
        ("sessionStart", "session-start"),
        ("beforeSubmitPrompt", "user-prompt-submit"),
        ("beforeReadFile", "pre-tool-use"),
        ("stop", "stop"),
        ("preCompact", "pre-compact"),
        ("sessionEnd", "session-end"),
    ] {
        let cmd = installed["hooks"][event][0]["command"]
            .as_str()
            .expect(event);
        assert!(cmd.ends_with(&format!(" --harness cursor {sub}")), "{cmd}");
    }
    assert!(
        !env.home().join(".cursor/mcp.json").exists(),
        "a project install names no MCP endpoint"
    );
    let bytes = std::fs::read(&file).expect("read");
    let again = env.run_with(&args, b"", &[]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(
        std::fs::read(&file).expect("read"),
        bytes,
        "a re-install rewrote the file"
    );
    let un = env.run_with(
        &["uninstall", "--harness", "cursor", "--home", &home],
        b"",
        &[],
    );
    assert_eq!(
        un.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&un.stderr)
    );
    let after: Value = serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    assert_eq!(after, theirs);
}

/// Cursor's beforeReadFile fails closed (no valid answer blocks the read) and its
/// beforeSubmitPrompt waits for `continue`: whatever the payload (empty, not JSON, without
/// the fields), our hooks answer "go on"; stop and sessionEnd print nothing.
#[test]
fn gates_answer_go_on_whatever_the_payload() {
    let env = Env::new();
    for stdin in [&b""[..], b"not json", b"{}", b"{\"file_path\": 7}"] {
        let run = |sub: &str| {
            let out = env.run_with(&["--harness", "cursor", sub], stdin, &[]);
            assert_eq!(out.status.code(), Some(0), "{sub}");
            String::from_utf8(out.stdout).expect("utf-8")
        };
        assert_eq!(run("pre-tool-use"), "{\"permission\":\"allow\"}\n");
        assert_eq!(run("user-prompt-submit"), "{\"continue\":true}\n");
        assert_eq!(run("stop"), "");
        assert_eq!(run("session-end"), "");
    }
}
