//! `ovhook --harness claude-code`: the session recorded from Claude Code 2.1.332
//! (`testdata/agents/claude-code/recorded/`: hook payloads and the transcript) played
//! through the real binary against the real OpenViking server, invocation by
//! invocation, the transcript growing as Claude Code wrote it.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{context_of, count, Env};
use ov_engine::event::{Event, HookKind, WorkerReason};
use serde_json::{json, Value};

fn recorded(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/agents/claude-code/recorded")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const RECORDED_SID: &str = "a3508959-08af-49dc-a154-6ed5d3f59b8b";

/// One `claude -p` invocation: its hook payloads and the transcript lines it wrote.
pub(crate) struct Invocation {
    pub hooks: Vec<Value>,
    pub transcript: String,
}

/// The recording split per invocation (each starts with SessionStart; each wrote the
/// transcript lines from its queue `enqueue` line to the next one's).
pub(crate) fn invocations(sid: &str, cwd: &str, transcript: &str) -> Vec<Invocation> {
    let mut out: Vec<Invocation> = Vec::new();
    for line in recorded("hooks.jsonl").lines() {
        let mut v: Value = serde_json::from_str(line).expect("recorded payload");
        v["session_id"] = json!(sid);
        v["cwd"] = json!(cwd);
        v["transcript_path"] = json!(transcript);
        if v["hook_event_name"] == "SessionStart" && v["source"] != "compact" {
            out.push(Invocation {
                hooks: Vec::new(),
                transcript: String::new(),
            });
        }
        out.last_mut()
            .expect("starts with SessionStart")
            .hooks
            .push(v);
    }
    let mut segment = 0usize;
    for line in recorded("transcript.jsonl").split_inclusive('\n') {
        if line.contains(r#""type":"queue-operation""#) && line.contains(r#""operation":"enqueue""#)
        {
            segment += 1;
        }
        let line = line.replace(RECORDED_SID, sid);
        out[segment.max(1) - 1].transcript.push_str(&line);
    }
    assert_eq!(out.len(), 7);
    out
}

pub(crate) fn command_of(event: &str) -> &'static str {
    match event {
        "SessionStart" => "session-start",
        "UserPromptSubmit" => "user-prompt-submit",
        "PreToolUse" => "pre-tool-use",
        "Stop" => "stop",
        "SessionEnd" => "session-end",
        other => panic!("unexpected event {other}"),
    }
}

#[test]
fn a_recorded_claude_code_session_is_captured_exactly_once() {
    let Some(url) = common::server_url() else {
        return;
    };
    common::seed(
        &url,
        "viking://~/memories/profile.md",
        "# Profile\nName: Claudetest\n",
    );
    let mut env = Env::with_url(&url);
    // Recall is not under test here; a slow shared server must not put the
    // session in back-off before the compaction's profile.
    env.set("OPENVIKING_AUTO_RECALL", "0");
    let sid = common::unique_session();
    let cwd = env.home().join("work");
    std::fs::create_dir_all(&cwd).expect("cwd");
    let cwd = cwd.display().to_string();
    let transcript = env
        .home()
        .join(".claude/projects")
        .join(cwd.replace(|c: char| !c.is_ascii_alphanumeric(), "-"))
        .join(format!("{sid}.jsonl"));
    std::fs::create_dir_all(transcript.parent().expect("dir")).expect("mkdir");
    let mut compact_context = None;
    for inv in invocations(&sid, &cwd, &transcript.display().to_string()) {
        for (i, payload) in inv.hooks.iter().enumerate() {
            let event = payload["hook_event_name"].as_str().expect("event");
            if i == 1 || (i == 0 && inv.hooks.len() == 1) {
                // Claude Code has written this invocation's lines by its Stop.
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&transcript)
                    .expect("transcript");
                f.write_all(inv.transcript.as_bytes()).expect("append");
            }
            let out = env.run_with(
                &["--harness", "claude-code", command_of(event)],
                payload.to_string().as_bytes(),
                &[("OVHOOK_NO_DETACH", "1")],
            );
            assert_eq!(out.status.code(), Some(0), "{event}");
            let stdout = String::from_utf8(out.stdout).expect("utf8");
            if event == "SessionStart" && payload["source"] == "compact" {
                compact_context = context_of("SessionStart", &stdout, 10_000);
                if compact_context.is_none() {
                    eprintln!(
                        "compact SessionStart printed nothing; log:\n{}",
                        std::fs::read_to_string(env.state().join("ovhook.log")).unwrap_or_default()
                    );
                }
            }
            if matches!(event, "Stop" | "SessionEnd") {
                assert_eq!(stdout, "", "{event} prints nothing");
            }
        }
        common::wait_all_idle(&env);
    }
    // The compaction came 0.1 s after the resume's SessionStart: not debounced.
    let ctx = compact_context.expect("profile re-injected after /compact");
    assert!(ctx.contains("Claudetest"), "{ctx}");

    let remote = ov_engine::ids::remote_session_id("cc-", &sid);
    let held = common::client(&url)
        .session_messages(&remote)
        .expect("session messages");
    let mut got: Vec<(String, String)> = held
        .iter()
        .map(|m| {
            let c = m.content.split(" [tool_result").next().unwrap_or("");
            (m.role.clone(), c.to_owned())
        })
        .collect();
    got.sort();
    let mut want: Vec<(String, String)> = [
        ("user", "Please read my notes"),
        ("assistant", "Block one.\n\nBlock two."),
        ("user", "yes"),
        ("assistant", "yes again"),
        ("user", "yes"),
        ("assistant", "yes again"),
        ("user", "this one fails"),
        ("user", "next"),
        ("assistant", "after failure"),
        ("user", "after compact prompt"),
        ("assistant", "after compact"),
    ]
    .iter()
    .map(|(r, c)| (r.to_string(), c.to_string()))
    .collect();
    want.sort();
    assert_eq!(got, want, "every turn exactly once, whole answers");
    assert!(held
        .iter()
        .all(|m| m.turn_id.as_deref().is_some_and(|t| t.len() == 36)));

    let state = env.state_of(&sid);
    assert_eq!(state.harness.as_deref(), Some("claude-code"));
    assert_eq!(state.turns.len(), 6, "one turn per prompt_id");
    let failed: Vec<_> = state.messages.values().filter(|m| m.interrupted).collect();
    assert_eq!(failed.len(), 1, "the failed call's prompt is marked");
    common::assert_settled(&env, &sid);
    assert_eq!(state.commit.uncommitted(), 0, "SessionEnd commits");
    // A resume never forces a commit: no commit follows a resume's worker start
    // before the next hook.
    let evs = env.events(&sid);
    let mut after_resume = false;
    for e in &evs {
        match &e.event {
            Event::WorkerStarted { reason } => after_resume = *reason == WorkerReason::Resume,
            Event::HookReceived(_) => after_resume = false,
            Event::CommitStarted { .. } => assert!(!after_resume, "a resume committed"),
            _ => {}
        }
    }
    assert!(
        count(
            &evs,
            |e| matches!(e, Event::HookReceived(h) if h.kind == Some(HookKind::SessionEnd))
        ) == 7
    );
}

/// The plugin is disabled for one `claude -p` invocation: Claude Code writes its turn to the
/// transcript, no hook of ours runs. The next invocation's SessionStart (a resume, whose drain
/// reads the transcript on) and a later `ovhook drain` send every other turn, never that one.
#[test]
fn a_turn_made_while_the_plugin_was_disabled_is_never_sent() {
    let Some(url) = common::server_url() else {
        return;
    };
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_AUTO_RECALL", "0");
    env.set("OPENVIKING_PROFILE_ENABLED", "0");
    let sid = common::unique_session();
    let cwd = env.home().join("work");
    std::fs::create_dir_all(&cwd).expect("cwd");
    let cwd = cwd.display().to_string();
    let transcript = env
        .home()
        .join(".claude/projects")
        .join(cwd.replace(|c: char| !c.is_ascii_alphanumeric(), "-"))
        .join(format!("{sid}.jsonl"));
    std::fs::create_dir_all(transcript.parent().expect("dir")).expect("mkdir");
    let invocations = invocations(&sid, &cwd, &transcript.display().to_string());
    let disabled = invocations
        .iter()
        .position(|inv| {
            inv.hooks
                .iter()
                .any(|h| h["prompt"].as_str() == Some("next"))
        })
        .expect("the recording has a \"next\" turn");
    for (n, inv) in invocations.iter().enumerate() {
        for (i, payload) in inv.hooks.iter().enumerate() {
            if i == 1 || (i == 0 && inv.hooks.len() == 1) {
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&transcript)
                    .expect("transcript");
                f.write_all(inv.transcript.as_bytes()).expect("append");
            }
            if n == disabled {
                continue;
            }
            let event = payload["hook_event_name"].as_str().expect("event");
            let out = env.run_with(
                &["--harness", "claude-code", command_of(event)],
                payload.to_string().as_bytes(),
                &[("OVHOOK_NO_DETACH", "1")],
            );
            assert_eq!(out.status.code(), Some(0), "{event}");
        }
        common::wait_all_idle(&env);
    }
    env.drain();
    common::wait_all_idle(&env);

    let remote = ov_engine::ids::remote_session_id("cc-", &sid);
    let held = common::client(&url)
        .session_messages(&remote)
        .expect("session messages");
    let contents: Vec<String> = held
        .iter()
        .map(|m| {
            m.content
                .split(" [tool_result")
                .next()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    for gone in ["next", "after failure"] {
        assert!(
            !contents.iter().any(|c| c == gone),
            "{gone:?} was sent: {contents:?}"
        );
    }
    for kept in [
        "Please read my notes",
        "this one fails",
        "after compact prompt",
        "after compact",
    ] {
        assert!(
            contents.iter().any(|c| c == kept),
            "{kept:?} missing: {contents:?}"
        );
    }
    let state = env.state_of(&sid);
    let skipped = state
        .turns
        .iter()
        .filter(|(id, _)| state.consent_of(id) == Some(ov_engine::turnbook::Consent::NoHook))
        .count();
    assert_eq!(skipped, 1, "one turn no hook saw: {:?}", state.turns);
    common::assert_settled(&env, &sid);
}

/// Plays the first recorded invocation ("Please read my notes", answered in two text blocks
/// around a tool call) of session `sid`, writing its transcript lines to `transcript` before
/// the prompt's first hook; `named` is the `transcript_path` of its payloads (`None`: left out).
fn play_first_invocation(env: &Env, sid: &str, cwd: &str, transcript: &Path, named: Option<&Path>) {
    let inv = invocations(
        sid,
        cwd,
        &named.map(|p| p.display().to_string()).unwrap_or_default(),
    )
    .into_iter()
    .next()
    .expect("first invocation");
    std::fs::create_dir_all(transcript.parent().expect("dir")).expect("mkdir");
    std::fs::write(transcript, &inv.transcript).expect("transcript");
    for mut payload in inv.hooks {
        if named.is_none() {
            payload
                .as_object_mut()
                .expect("object")
                .remove("transcript_path");
        }
        let event = payload["hook_event_name"]
            .as_str()
            .expect("event")
            .to_owned();
        let out = env.run_with(
            &["--harness", "claude-code", command_of(&event)],
            payload.to_string().as_bytes(),
            &[("OVHOOK_NO_DETACH", "1")],
        );
        assert_eq!(out.status.code(), Some(0), "{event}");
    }
    common::wait_all_idle(env);
}

/// What the server holds of a session: (role, content before any tool result).
fn held(url: &str, sid: &str) -> Vec<(String, String)> {
    let remote = ov_engine::ids::remote_session_id("cc-", sid);
    let mut got: Vec<(String, String)> = common::client(url)
        .session_messages(&remote)
        .expect("session messages")
        .iter()
        .map(|m| {
            let c = m.content.split(" [tool_result").next().unwrap_or("");
            (m.role.clone(), c.to_owned())
        })
        .collect();
    got.sort();
    got
}

/// SessionStart and Stop name the transcript (`transcript_path`): the file is journaled and read there,
/// though no project folder holds it, and a decoy of the same session in another project
/// folder (the one a search would choose) is never read. Without the path (a journal from
/// before, a payload naming none) the search of the project folders still finds the file.
#[test]
fn the_transcript_a_stop_names_is_read_there_and_never_searched_for() {
    let Some(url) = common::server_url() else {
        return;
    };
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_AUTO_RECALL", "0");
    env.set("OPENVIKING_PROFILE_ENABLED", "0");
    let cwd = env.home().join("work");
    std::fs::create_dir_all(&cwd).expect("cwd");
    let cwd = cwd.display().to_string();
    let whole = vec![
        (
            "assistant".to_string(),
            "Block one.\n\nBlock two.".to_string(),
        ),
        ("user".to_string(), "Please read my notes".to_string()),
    ];

    let sid = common::unique_session();
    let named = env
        .home()
        .join("elsewhere/not-a-project")
        .join(format!("{sid}.jsonl"));
    let decoy = env
        .home()
        .join(".claude/projects/-decoy")
        .join(format!("{sid}.jsonl"));
    let real = invocations(&sid, &cwd, "").remove(0).transcript;
    std::fs::create_dir_all(decoy.parent().expect("dir")).expect("mkdir");
    std::fs::write(&decoy, real.replace("Block one.", "Decoy one.")).expect("decoy");
    play_first_invocation(&env, &sid, &cwd, &named, Some(&named));
    // The whole answer: both text blocks, from the named file (the Stop's
    // `last_assistant_message` holds only the last one).
    assert_eq!(held(&url, &sid), whole);
    let evs = env.events(&sid);
    let path = named.display().to_string();
    assert!(evs
        .iter()
        .any(|e| matches!(&e.event, Event::TranscriptNamed { path: p } if *p == path)));
    assert!(
        evs.iter().all(|e| match &e.event {
            Event::RolloutRead { path: p, .. } | Event::RolloutMissing { path: p } => *p == path,
            _ => true,
        }),
        "only the named file is read"
    );
    assert_eq!(env.state_of(&sid).transcript_path, Some(path));

    // No path in the payloads: nothing journaled, the file found in its project folder.
    let sid = common::unique_session();
    let moved = env
        .home()
        .join(".claude/projects/-moved")
        .join(format!("{sid}.jsonl"));
    play_first_invocation(&env, &sid, &cwd, &moved, None);
    assert_eq!(held(&url, &sid), whole);
    let evs = env.events(&sid);
    assert!(!evs
        .iter()
        .any(|e| matches!(e.event, Event::TranscriptNamed { .. })));
    assert_eq!(env.state_of(&sid).transcript_path, None);
}
