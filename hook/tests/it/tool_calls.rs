//! `capture.tools` through the real `ovhook` binary: Codex's and Qwen Code's PostToolUse
//! journal the tool call (privacy applied) only when the setting is on, and the real server
//! stores the turn's answer with its tool part exactly once.

use std::time::{Duration, Instant};

use ov_engine::event::Event;
use serde_json::{json, Value};

use crate::common::{client, server_url, unique_session, Env};

/// Every byte of every file under `dir` (nothing when it does not exist).
fn all_bytes(dir: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(all_bytes(&p));
        } else if let Ok(b) = std::fs::read(&p) {
            out.extend(b);
        }
    }
    out
}

const SECRET: &str = "ghp_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78";

fn codex(event: &str, sid: &str, turn: &str, cwd: &str, extra: Value) -> Value {
    let mut p = json!({
        "session_id": sid,
        "turn_id": turn,
        "cwd": cwd,
        "hook_event_name": event,
        "model": "fake-model",
        "transcript_path": format!("{cwd}/rollout.jsonl"),
    });
    if let (Some(o), Value::Object(e)) = (p.as_object_mut(), extra) {
        o.extend(e);
    }
    p
}

fn post_tool_use(sid: &str, turn: &str, cwd: &str, marker: &str) -> Value {
    codex(
        "PostToolUse",
        sid,
        turn,
        cwd,
        json!({
            "tool_name": "Bash",
            "tool_input": {"command": format!("cat notes.md # {SECRET}")},
            "tool_response": format!("{marker}\n<private>PRIVTOOL42</private>token {SECRET}\n"),
            "tool_use_id": "call_1",
        }),
    )
}

fn tool_events(env: &Env, sid: &str) -> Vec<Event> {
    env.events(sid)
        .into_iter()
        .map(|e| e.event)
        .filter(|e| matches!(e, Event::ToolCalls { .. }))
        .collect()
}

#[test]
fn post_tool_use_journals_nothing_of_a_tool_unless_capture_tools_is_on() {
    let env = Env::new();
    let cwd = env.home().display().to_string();
    let sid = unique_session();
    let marker = "TOOLOUT-7f3a";
    env.run_with(
        &["--harness", "codex", "user-prompt-submit"],
        codex(
            "UserPromptSubmit",
            &sid,
            "t1",
            &cwd,
            json!({"prompt": "read notes"}),
        )
        .to_string()
        .as_bytes(),
        &[],
    );
    let out = env.run_with(
        &["--harness", "codex", "post-tool-use"],
        post_tool_use(&sid, "t1", &cwd, marker)
            .to_string()
            .as_bytes(),
        &[],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let bytes = all_bytes(&env.state());
    assert!(!bytes.windows(marker.len()).any(|w| w == marker.as_bytes()));
    assert!(!bytes.windows(10).any(|w| w == b"cat notes."));
    assert!(tool_events(&env, &sid).is_empty());

    // On: the call is journaled for the turn, its secret and private span gone.
    let out = env.run_with(
        &["--harness", "codex", "post-tool-use"],
        post_tool_use(&sid, "t1", &cwd, marker)
            .to_string()
            .as_bytes(),
        &[("OPENVIKING_CAPTURE_TOOLS", "1")],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let tools = tool_events(&env, &sid);
    let [Event::ToolCalls { turn_id, calls, .. }] = tools.as_slice() else {
        panic!("one ToolCalls event: {tools:?}");
    };
    assert_eq!(turn_id, "t1");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "Bash");
    assert_eq!(calls[0].id.as_deref(), Some("call_1"));
    assert!(calls[0]
        .output
        .as_deref()
        .is_some_and(|o| o.starts_with(marker)));
    let bytes = all_bytes(&env.state());
    for gone in [SECRET, "PRIVTOOL42"] {
        assert!(
            !bytes.windows(gone.len()).any(|w| w == gone.as_bytes()),
            "{gone} journaled"
        );
    }
    let state = env.state_of(&sid);
    assert!(state.redactions.total() >= 3, "{:?}", state.redactions);
}

#[test]
fn qwen_post_tool_use_keeps_what_the_model_saw() {
    let env = Env::new();
    let cwd = env.home().display().to_string();
    let sid = unique_session();
    let payload = json!({
        "session_id": sid, "cwd": cwd, "hook_event_name": "PostToolUse",
        "prompt_id": format!("{sid}########0"), "tool_name": "read_file",
        "tool_input": {"file_path": "notes.md"},
        "tool_response": {"llmContent": "NOTE-CONTENT-42", "returnDisplay": ""},
        "tool_use_id": "toolu_1",
    });
    env.run_with(
        &["--harness", "qwen", "post-tool-use"],
        payload.to_string().as_bytes(),
        &[("OPENVIKING_CAPTURE_TOOLS", "true")],
    );
    let tools = tool_events(&env, &sid);
    let [Event::ToolCalls { calls, .. }] = tools.as_slice() else {
        panic!("one ToolCalls event: {tools:?}");
    };
    assert_eq!(calls[0].output.as_deref(), Some("NOTE-CONTENT-42"));
}

/// A Codex turn with a tool call through the real hooks and the real server: the answer is
/// stored with its tool part, once, also after another drain.
#[test]
fn a_codex_turn_reaches_the_real_server_with_its_tool_part_once() {
    let Some(url) = server_url() else {
        return;
    };
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_CAPTURE_TOOLS", "1");
    let cwd = env.home().display().to_string();
    let sid = unique_session();
    let marker = format!("TOOLOUT-{}", &sid[5..17]);
    let run = |event: &str, payload: Value| {
        let out = env.run_with(
            &["--harness", "codex", event],
            payload.to_string().as_bytes(),
            &[("OVHOOK_NO_DETACH", "1")],
        );
        assert_eq!(out.status.code(), Some(0));
    };
    run(
        "user-prompt-submit",
        codex(
            "UserPromptSubmit",
            &sid,
            "t1",
            &cwd,
            json!({"prompt": "read my notes"}),
        ),
    );
    run("post-tool-use", post_tool_use(&sid, "t1", &cwd, &marker));
    run(
        "stop",
        codex(
            "Stop",
            &sid,
            "t1",
            &cwd,
            json!({"last_assistant_message": "The notes say to water the plants."}),
        ),
    );
    env.drain();
    env.drain();
    let remote = format!("cx-{sid}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let held = loop {
        let held = client(&url).session_messages(&remote).expect("read back");
        if held.len() >= 2 || Instant::now() > deadline {
            break held;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let answers: Vec<_> = held.iter().filter(|m| m.role == "assistant").collect();
    assert_eq!(answers.len(), 1, "{held:#?}");
    assert_eq!(held.iter().filter(|m| m.role == "user").count(), 1);
    let parts = &answers[0].tool_parts;
    assert_eq!(parts.len(), 1, "{parts:#?}");
    assert_eq!(parts[0]["tool_name"], json!("Bash"));
    assert_eq!(parts[0]["tool_id"], json!("call_1"));
    let output = parts[0]["tool_output"].as_str().unwrap_or_default();
    assert!(output.starts_with(&marker), "{output}");
    assert!(!output.contains(SECRET) && !output.contains("PRIVTOOL42"));
    assert!(!parts[0]["tool_input"].to_string().contains(SECRET));
}

/// PostToolUse is installed for Codex and Qwen Code only while `capture.tools` is on (a hook
/// that would do nothing would still cost a process start per tool call); a re-install with it
/// off takes ours out again, keeping a foreign PostToolUse hook; uninstall leaves none of ours.
#[test]
fn post_tool_use_is_installed_only_while_capture_tools_is_on() {
    for (harness, file) in [
        ("codex", ".codex/hooks.json"),
        ("qwen", ".qwen/settings.json"),
    ] {
        let env = Env::new();
        let home = env.home().display().to_string();
        let path = env.home().join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(
            &path,
            json!({"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "lint-after"}]}]}})
                .to_string(),
        )
        .expect("write");
        let install = |extra: &[(&str, &str)]| {
            let out = env.run_with(
                &[
                    "install",
                    "--harness",
                    harness,
                    "--home",
                    &home,
                    "--no-trust",
                ],
                b"",
                extra,
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let ours = || -> Vec<String> {
            let v: Value =
                serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
            v["hooks"]["PostToolUse"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|g| g["hooks"].as_array())
                .flatten()
                .filter_map(|e| e["command"].as_str())
                .map(str::to_owned)
                .collect()
        };
        install(&[]);
        assert_eq!(ours(), vec!["lint-after"], "{harness}: off, none of ours");
        install(&[("OPENVIKING_CAPTURE_TOOLS", "1")]);
        let on = ours();
        assert_eq!(on.len(), 2, "{harness}: {on:?}");
        assert!(
            on.iter()
                .any(|c| c.ends_with(&format!("--harness {harness} post-tool-use"))),
            "{harness}: {on:?}"
        );
        install(&[]);
        assert_eq!(ours(), vec!["lint-after"], "{harness}: off again");
        install(&[("OPENVIKING_CAPTURE_TOOLS", "1")]);
        let out = env.run_with(
            &["uninstall", "--harness", harness, "--home", &home],
            b"",
            &[],
        );
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(ours(), vec!["lint-after"], "{harness}: uninstalled");
    }
}

/// Plays the first invocation of the recorded Claude Code session (a Read turn: a `tool_use`
/// block, its `tool_result`, a two-block answer) through the real binary, with a secret put into
/// the tool's input and output; returns the session id and the transcript's path.
fn play_claude_code_read_turn(env: &Env) -> (String, std::path::PathBuf) {
    use std::io::Write;
    let sid = unique_session();
    let cwd = env.home().join("work");
    std::fs::create_dir_all(&cwd).expect("cwd");
    let cwd = cwd.display().to_string();
    let transcript = env
        .home()
        .join(".claude/projects")
        .join(ov_engine::transcript::claude_code::project_dir_name(&cwd))
        .join(format!("{sid}.jsonl"));
    std::fs::create_dir_all(transcript.parent().expect("dir")).expect("mkdir");
    let path = transcript.display().to_string();
    let first = crate::claude_code::invocations(&sid, &cwd, &path)
        .into_iter()
        .next()
        .expect("the Read turn");
    let lines = first
        .transcript
        .replace("NOTE-42", &format!("NOTE-42 {SECRET}"))
        .replace(
            r#""file_path":"notes.md""#,
            &format!(r#""file_path":"notes.md {SECRET}""#),
        );
    for (i, payload) in first.hooks.iter().enumerate() {
        let event = payload["hook_event_name"].as_str().expect("event");
        if i == 1 {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&transcript)
                .and_then(|mut f| f.write_all(lines.as_bytes()))
                .expect("transcript");
        }
        let out = env.run_with(
            &[
                "--harness",
                "claude-code",
                crate::claude_code::command_of(event),
            ],
            payload.to_string().as_bytes(),
            &[("OVHOOK_NO_DETACH", "1")],
        );
        assert_eq!(out.status.code(), Some(0), "{event}");
    }
    crate::common::wait_all_idle(env);
    (sid, transcript)
}

const READ_CALL: &str = "toolu_5faa69055df54390ac8020af";

/// A Claude Code turn's `tool_use`/`tool_result` pair reaches the real server as one tool part
/// of its answer, once: a rescan of the transcript and another drain add nothing; the secret in
/// the call's input and output never reaches the journal or the server.
#[test]
fn a_claude_code_transcript_turn_reaches_the_real_server_with_its_tool_part_once() {
    let Some(url) = server_url() else {
        return;
    };
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_CAPTURE_TOOLS", "1");
    env.set("OPENVIKING_AUTO_RECALL", "0");
    let (sid, transcript) = play_claude_code_read_turn(&env);
    // The same bytes under a new inode: the next read starts again from 0.
    let copy = transcript.with_extension("copy");
    std::fs::copy(&transcript, &copy).expect("copy");
    std::fs::rename(&copy, &transcript).expect("replace");
    env.drain();
    env.drain();

    let tools = tool_events(&env, &sid);
    let [Event::ToolCalls { calls, origin, .. }] = tools.as_slice() else {
        panic!("one ToolCalls event: {tools:?}");
    };
    assert_eq!(origin, "transcript");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id.as_deref(), Some(READ_CALL));
    let bytes = all_bytes(&env.state());
    assert!(!bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()));

    let remote = ov_engine::ids::remote_session_id("cc-", &sid);
    let held = client(&url).session_messages(&remote).expect("read back");
    let answers: Vec<_> = held.iter().filter(|m| m.role == "assistant").collect();
    assert_eq!(answers.len(), 1, "{held:#?}");
    let parts = &answers[0].tool_parts;
    assert_eq!(parts.len(), 1, "{parts:#?}");
    assert_eq!(parts[0]["tool_name"], json!("Read"));
    assert_eq!(parts[0]["tool_id"], json!(READ_CALL));
    assert_eq!(parts[0]["tool_status"], json!("completed"));
    let output = parts[0]["tool_output"].as_str().unwrap_or_default();
    assert!(output.contains("NOTE-42"), "{output}");
    assert!(!output.contains(SECRET), "{output}");
    let input = parts[0]["tool_input"].to_string();
    assert!(
        input.contains("notes.md") && !input.contains(SECRET),
        "{input}"
    );
}

/// With `capture.tools` off, a Claude Code transcript's tool calls leave nothing in the journal.
#[test]
fn a_claude_code_transcript_journals_nothing_of_a_tool_when_capture_tools_is_off() {
    let env = Env::new();
    let (sid, _) = play_claude_code_read_turn(&env);
    assert!(env
        .events(&sid)
        .iter()
        .any(|e| matches!(e.event, Event::RolloutRead { .. })));
    assert!(tool_events(&env, &sid).is_empty());
    let bytes = all_bytes(&env.state());
    assert!(!bytes
        .windows(READ_CALL.len())
        .any(|w| w == READ_CALL.as_bytes()));
}

/// After the hooks, with every worker done and two drains: one tool-call event journaled, the
/// secret nowhere under the state directory, and on the server one answer holding one tool
/// part, which is returned.
fn the_one_tool_part(env: &Env, url: &str, sid: &str, prefix: &str) -> Value {
    crate::common::wait_all_idle(env);
    env.drain();
    env.drain();
    let tools = tool_events(env, sid);
    assert_eq!(tools.len(), 1, "{tools:?}");
    let bytes = all_bytes(&env.state());
    assert!(!bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()));
    let remote = ov_engine::ids::remote_session_id(prefix, sid);
    let held = client(url).session_messages(&remote).expect("read back");
    let answers: Vec<_> = held.iter().filter(|m| m.role == "assistant").collect();
    assert_eq!(answers.len(), 1, "{held:#?}");
    let parts = &answers[0].tool_parts;
    assert_eq!(parts.len(), 1, "{parts:#?}");
    parts[0].clone()
}

/// The recorded Copilot CLI session's first turn (a `view` call) through the real binary
/// against the real server, with `capture.tools` on: the answer holds the call as one tool part
/// (paired from `events.jsonl`'s `toolRequests` and `tool.execution_complete`), the secret put
/// into its output gone; another drain adds nothing.
#[test]
fn a_copilot_turn_reaches_the_real_server_with_its_tool_part_once() {
    use crate::common::copilot_recorded;
    let Some(url) = server_url() else {
        return;
    };
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_CAPTURE_TOOLS", "1");
    env.set("OPENVIKING_AUTO_RECALL", "0");
    let sid = crate::common::uuid_shaped(&unique_session());
    let cwd = env.home().join("work");
    std::fs::create_dir_all(&cwd).expect("cwd");
    let cwd = cwd.display().to_string();
    let events = copilot_recorded::events_file(&env, &sid);
    // The first turn, the secret put into its tool's output.
    let first = copilot_recorded::turn_lines(&sid, 1)
        .replace("NOTE-CONTENT-42", &format!("NOTE-CONTENT-42 {SECRET}"));
    for (command, payload) in copilot_recorded::hooks(&sid, &cwd, &events)
        .into_iter()
        .take(5)
    {
        if command == "stop" {
            copilot_recorded::append(&events, &first);
        }
        let out = env.run_with(
            &["--harness", "copilot", command],
            payload.to_string().as_bytes(),
            &[("OVHOOK_NO_DETACH", "1")],
        );
        assert_eq!(out.status.code(), Some(0), "{command}");
    }
    let parts = [the_one_tool_part(&env, &url, &sid, "gh-")];
    assert_eq!(parts[0]["tool_name"], json!("view"));
    assert_eq!(parts[0]["tool_id"], json!("call_ffc6a1596b4c4533bfed"));
    assert_eq!(parts[0]["tool_status"], json!("completed"));
    let output = parts[0]["tool_output"].as_str().unwrap_or_default();
    assert!(output.contains("NOTE-CONTENT-42"), "{output}");
    assert!(!output.contains(SECRET), "{output}");
}

/// A ZCode turn that called a tool (its first call's `response.toolCalls`, the `role:"tool"`
/// message the second call's request ends with) through the real hooks and the real server:
/// the answer holds one tool part, the secret in the call's input and output gone; another
/// drain adds nothing.
#[test]
fn a_zcode_rollout_turn_reaches_the_real_server_with_its_tool_part_once() {
    use crate::common::{append_line, stop_payload, ups_payload, Turn};
    let Some(url) = server_url() else {
        return;
    };
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_CAPTURE_TOOLS", "1");
    env.set("OPENVIKING_AUTO_RECALL", "0");
    let sid = unique_session();
    let turn = Turn::new("zc-tool");
    let cwd = env.home().to_path_buf();
    env.hook_with("user-prompt-submit", &ups_payload(&sid, &turn, &cwd), &[]);
    let mut history = vec![
        json!({"role": "system", "content": "You are ZCode."}),
        json!({"role": "user", "content": turn.prompt}),
    ];
    let line = |history: &[Value], n: u32, response: Value| {
        json!({
            "type": "model_io", "sessionId": sid, "turnId": turn.id,
            "requestId": format!("req-{n}"), "attempt": 1, "querySource": "main_turn",
            "startedAt": "2026-07-03T03:02:56.413Z", "completedAt": "2026-07-03T03:02:57.413Z",
            "request": {"messages": history, "messagesKind": "full", "messageOffset": 0},
            "response": response,
        })
    };
    let call = json!({"id": "toolu_zc1", "name": "Bash", "input": {"command": format!("cat notes # {SECRET}")}});
    let first = line(
        &history,
        1,
        json!({"finishReason": "tool-calls", "text": "", "toolCalls": [call]}),
    );
    history.push(json!({"role": "assistant", "content": "", "toolCalls": [call]}));
    history.push(json!({"role": "tool", "content": format!("ZC-NOTE-42 {SECRET}"), "toolCallId": "toolu_zc1", "toolName": "Bash", "isError": false}));
    let second = line(
        &history,
        2,
        json!({"finishReason": "stop", "text": turn.answer, "toolCalls": []}),
    );
    let rollout = env.rollout(&sid);
    append_line(&rollout, &first);
    append_line(&rollout, &second);
    env.hook_with(
        "stop",
        &stop_payload(&sid, &turn, &cwd),
        &[("OVHOOK_NO_DETACH", "1")],
    );
    let parts = [the_one_tool_part(&env, &url, &sid, "zc-")];
    assert_eq!(parts[0]["tool_name"], json!("Bash"));
    assert_eq!(parts[0]["tool_id"], json!("toolu_zc1"));
    let output = parts[0]["tool_output"].as_str().unwrap_or_default();
    assert!(
        output.starts_with("ZC-NOTE-42") && !output.contains(SECRET),
        "{output}"
    );
    assert!(!parts[0]["tool_input"].to_string().contains(SECRET));
}
