//! The OpenCode / Kilo Code plugin shim, driven by Node with the agent's own event shapes
//! (`testdata/agents/opencode/drive_shim.mjs`; see `docs/agents.md`), against the real ovhook
//! binary installed by `ovhook install --harness kilo` and the real OpenViking server. What the
//! real-CLI tests cannot steer: a subagent's session (one with a parent, run while its parent's
//! turn waits on it) follows `capture.subagents` (`skip`, `separate`, `inline`), a turn ended by
//! `session.idle`, then Kilo's `session.drained`, then `dispose` is captured once, and a
//! compaction (`experimental.session.compacting`) finds the session sent and committed.

use crate::common;

use std::process::Command;

use common::Env;
use serde_json::{json, Value};

fn text_part(id: &str, msg: &str, sid: &str, text: &str) -> Value {
    json!({"id": id, "messageID": msg, "sessionID": sid, "type": "text", "text": text})
}

fn event(kind: &str, properties: Value) -> Value {
    json!({"hook": "event", "event": {"type": kind, "properties": properties}})
}

fn assistant(id: &str, sid: &str, parent: &str, finish: Option<&str>) -> Value {
    let mut info = json!({"id": id, "role": "assistant", "sessionID": sid, "parentID": parent});
    if let Some(f) = finish {
        info["finish"] = json!(f);
    }
    event("message.updated", json!({ "info": info }))
}

/// One turn of `sid` as OpenCode fires it: prompt, a tool step, the answer step (its text
/// streamed, then completed), idle; `extra` goes between the tool step and the answer.
fn turn(sid: &str, n: &str, prompt: &str, answer: &str, extra: Vec<Value>) -> Vec<Value> {
    let (user, step1, step2) = (
        format!("msg_u{n}"),
        format!("msg_a{n}"),
        format!("msg_b{n}"),
    );
    let mut steps = vec![
        json!({"hook": "chat.message", "input": {"sessionID": sid},
               "output": {"message": {"id": user, "role": "user", "sessionID": sid},
                          "parts": [text_part(&format!("prt_u{n}"), &user, sid, prompt)]}}),
        assistant(&step1, sid, &user, None),
        event(
            "message.part.updated",
            json!({"part": text_part(&format!("prt_a{n}"), &step1, sid, "Let me read that file.")}),
        ),
        json!({"hook": "tool.execute.before", "input": {"tool": "read", "sessionID": sid, "callID": "c1"},
               "output": {"args": {"filePath": "/w/notes.md"}}}),
        assistant(&step1, sid, &user, Some("tool-calls")),
    ];
    steps.extend(extra);
    let (head, _) = answer.split_at(answer.len() / 2);
    steps.extend([
        assistant(&step2, sid, &user, None),
        event(
            "message.part.updated",
            json!({"part": text_part(&format!("prt_b{n}"), &step2, sid, head)}),
        ),
        json!({"hook": "experimental.text.complete",
               "input": {"sessionID": sid, "messageID": step2, "partID": format!("prt_b{n}")},
               "output": {"text": answer}}),
        assistant(&step2, sid, &user, Some("stop")),
        event("session.idle", json!({"sessionID": sid})),
        event("session.drained", json!({"sessionID": sid})),
    ]);
    steps
}

#[test]
fn a_kilo_session_is_captured_once_and_a_subagents_follows_capture_subagents() {
    let Some(url) = common::server_url() else {
        return;
    };
    // A memory the prompt finds, whatever else the server holds (no phrase a scripted model
    // of another test matches on).
    let seeded = common::Seeded {
        url: url.clone(),
        uri: format!(
            "viking://~/memories/preferences/kilo-notes-{}.md",
            std::process::id()
        ),
    };
    common::seed(
        &url,
        &seeded.uri,
        "The user keeps personal notes in notes.md and often wants them read aloud.",
    );
    for mode in ["skip", "separate", "inline"] {
        let mut env = Env::with_url(&url);
        env.set("OPENVIKING_CAPTURE_SUBAGENTS", mode);
        let home = env.home().display().to_string();
        let out = env.run_with(&["install", "--harness", "kilo", "--home", &home], b"", &[]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let shim = env.home().join(".openviking/ovhook/bin/ovhook-kilo.js");

        let tag = common::unique_turn();
        let (main, sub) = (format!("ses_main_{tag}"), format!("ses_sub_{tag}"));
        let mut steps = vec![event("session.created", json!({"info": {"id": main}}))];
        let viking = json!({"hook": "tool.execute.before",
                            "input": {"tool": "read", "sessionID": main, "callID": "c2"},
                            "output": {"args": {"filePath": "viking://user/memories/profile.md"}}});
        // The subagent's session runs while the main turn waits on its tool call; its parent is
        // learned from the SDK client, as for a session not created in this process.
        let mut inner = vec![viking];
        inner.extend(turn(
            &sub,
            "2",
            "internal subagent prompt",
            "internal answer",
            Vec::new(),
        ));
        steps.extend(turn(
            &main,
            "1",
            "Please read my notes",
            "NOTES-ANSWER part one. Part two.",
            inner,
        ));
        steps.push(json!({"hook": "dispose"}));
        let file = env.home().join("steps.json");
        let parents = json!({ sub.clone(): main.clone() });
        std::fs::write(
            &file,
            json!({"steps": steps, "parents": parents}).to_string(),
        )
        .expect("steps");

        let driver = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/agents/opencode/drive_shim.mjs");
        let mut cmd = Command::new("node");
        cmd.arg(&driver)
            .arg(&shim)
            .arg(&file)
            .arg(env.home())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", env.home())
            .env("OVHOOK_STATE_DIR", env.state());
        for (k, v) in &env.vars {
            cmd.env(k, v);
        }
        let out = match cmd.output() {
            Ok(out) => out,
            Err(e) => {
                common::cli_missing("node", &e.to_string());
                return;
            }
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let results: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect("a result line"))
            .collect();
        assert_eq!(results.len(), steps.len(), "{stdout}");

        // The prompt got the hook's context as a synthetic part after the user's own.
        let parts = &results[1]["output"]["parts"];
        assert_eq!(parts.as_array().map(Vec::len), Some(2), "{parts}");
        assert_eq!(parts[1]["synthetic"], true);
        assert!(
            parts[1]["text"]
                .as_str()
                .is_some_and(|t| t.contains("openviking-context")),
            "{parts}"
        );
        // The file read passed; the viking:// read was stopped with the pointer to the MCP tools.
        let threw: Vec<&str> = results.iter().filter_map(|r| r["threw"].as_str()).collect();
        assert_eq!(threw.len(), 1, "{stdout}");
        assert!(threw[0].contains("OpenViking MCP"), "{}", threw[0]);

        // The main turn is on the server once, prompt and whole answer, though idle, drained and
        // dispose each could have ended it, and the subagent's turn inside it did not end it.
        common::wait_all_idle(&env);
        let client = common::client(&url);
        let held = client
            .session_messages(&ov_engine::ids::remote_session_id("kc-", &main))
            .expect("main session");
        let mut shown: Vec<(&str, &str)> = held
            .iter()
            .map(|m| (m.role.as_str(), m.content.as_str()))
            .collect();
        let main_turn = [
            ("user", "Please read my notes"),
            ("assistant", "NOTES-ANSWER part one. Part two."),
        ];
        let sub_turn = [
            ("user", "internal subagent prompt"),
            ("assistant", "internal answer"),
        ];
        // Inline, the subagent's turn (complete first) is in the main session too, whole.
        if mode == "inline" {
            let at = shown
                .iter()
                .position(|m| *m == sub_turn[0])
                .unwrap_or_else(|| panic!("inline: no subagent turn in {shown:?}"));
            assert_eq!(shown.get(at + 1), Some(&sub_turn[1]), "{shown:?}");
            shown.drain(at..at + 2);
        }
        assert_eq!(shown, main_turn, "{mode}");

        // Separate, the subagent has a session of its own named after its parent's.
        let sub_native = ov_engine::subagent::separate_session_id(&main, &sub);
        let sub_held: Vec<(String, String)> = client
            .session_messages(&ov_engine::ids::remote_session_id("kc-", &sub_native))
            .unwrap_or_default()
            .into_iter()
            .map(|m| (m.role, m.content))
            .collect();
        let want: Vec<(String, String)> = if mode == "separate" {
            sub_turn
                .iter()
                .map(|(r, c)| ((*r).to_owned(), (*c).to_owned()))
                .collect()
        } else {
            Vec::new()
        };
        assert_eq!(sub_held, want, "{mode}");

        // Skipped, nothing of the subagent's words is journaled anywhere.
        let events = common::all_events(&env);
        let journaled = events
            .iter()
            .any(|e| format!("{:?}", e.event).contains("internal subagent prompt"));
        assert_eq!(journaled, mode != "skip", "{mode}");
        assert!(
            events.iter().all(|e| !matches!(&e.event,
                ov_engine::event::Event::HookReceived(h)
                    if h.session_id.as_deref() == Some(sub.as_str()) && h.prompt.is_some())),
            "{mode}: the subagent's prompt went into a session of the subagent's own id"
        );
    }
}
