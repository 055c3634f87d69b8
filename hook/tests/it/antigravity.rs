//! Antigravity CLI, driven from its published hook payloads (`testdata/agents/antigravity/`,
//! untested against the real CLI): three turns through the real `ovhook --harness antigravity`
//! hooks against the real OpenViking server (the first reads a file through a tool, the last two
//! send the same short prompt), the transcript written as Antigravity writes it (steps flushed
//! out of order, tool results and our injected context among them), each turn captured exactly
//! once and whole; recall injected as `injectSteps[].ephemeralMessage` once per turn, not at
//! every model call. And the project-scope install round trip.

use crate::common;

use std::io::Write;
use std::path::Path;

use common::{assert_exactly_once, Env, Turn};
use serde_json::{json, Value};

const HOOKS: &str = include_str!("../../../testdata/agents/antigravity/hooks.jsonl");

/// The recorded payload of `event` (the first), pointed at this test's session and files.
fn payload(event: &str, sid: &str, project: &Path, transcript: &Path) -> Value {
    let mut p = HOOKS
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["event"] == event)
        .map(|v| v["payload"].clone())
        .unwrap_or_else(|| panic!("no recorded {event}"));
    p["conversationId"] = json!(sid);
    p["workspacePaths"] = json!([project.display().to_string()]);
    p["transcriptPath"] = json!(transcript.display().to_string());
    p
}

fn hook(env: &Env, sub: &str, payload: &Value) -> String {
    let out = env.run_with(
        &["--harness", "antigravity", sub],
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

/// The injected message of an Antigravity output line, if any.
fn injected(stdout: &str) -> Option<String> {
    if stdout.is_empty() {
        return None;
    }
    assert!(
        stdout.ends_with('\n') && stdout.trim_end().lines().count() == 1,
        "{stdout:?}"
    );
    let v: Value = serde_json::from_str(stdout.trim_end()).expect("JSON");
    let obj = v.as_object().expect("object");
    assert_eq!(obj.keys().collect::<Vec<_>>(), ["injectSteps"], "{v}");
    let steps = v["injectSteps"].as_array().expect("list");
    assert_eq!(steps.len(), 1, "{v}");
    Some(
        steps[0]["ephemeralMessage"]
            .as_str()
            .expect("message")
            .to_owned(),
    )
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

fn user(step: u64, text: &str) -> Value {
    json!({"step_index": step, "source": "USER_EXPLICIT", "type": "USER_INPUT", "status": "DONE",
           "content": format!("<USER_REQUEST>\n{text}\n</USER_REQUEST>\n<ADDITIONAL_METADATA>\nThe current local time is: 2026-12-04T18:00:00+00:00.\n</ADDITIONAL_METADATA>")})
}

fn model(step: u64, text: &str) -> Value {
    json!({"step_index": step, "source": "MODEL", "type": "PLANNER_RESPONSE", "status": "DONE", "content": text})
}

#[test]
fn three_turns_are_captured_once_whole_with_recall_once_per_turn() {
    let Some(url) = common::server_url() else {
        return;
    };
    common::seed(
        &url,
        "viking://~/memories/preferences/wombat-amber-theme.md",
        "The user runs the wombat-amber colour theme in every terminal.",
    );
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "0");
    env.set("OPENVIKING_TIMEOUT_MS", "30000");
    let project = env.home().join("project");
    std::fs::create_dir_all(&project).expect("project");
    let sid = common::unique_session().replace("sess_", "");
    let transcript = env.home().join(format!(
        ".gemini/antigravity-cli/brain/{sid}/.system_generated/logs/transcript.jsonl"
    ));
    std::fs::create_dir_all(transcript.parent().expect("dir")).expect("mkdir");
    let p = |event: &str| payload(event, &sid, &project, &transcript);

    let start = hook(&env, "session-start", &p("SessionStart"));
    if let Some(profile) = injected(&start) {
        assert!(!profile.trim().is_empty());
    }
    let turns = [
        Turn {
            id: "step-0".into(),
            prompt: "Read notes.md: which wombat-amber colour theme do I run in my terminals?"
                .into(),
            answer: "The wombat-amber theme, in every terminal.".into(),
        },
        Turn {
            id: "step-6".into(),
            prompt: "wombat-amber theme?".into(),
            answer: "Yes, wombat-amber.".into(),
        },
        Turn {
            id: "step-9".into(),
            prompt: "wombat-amber theme?".into(),
            answer: "Still wombat-amber.".into(),
        },
    ];
    let mut recalls: Vec<Option<String>> = Vec::new();

    // Turn 1: a tool read between two model calls; the final answer's step is flushed
    // before the tool result's.
    append(&transcript, &[user(0, &turns[0].prompt)]);
    let mut pre = p("PreInvocation");
    pre["invocationNum"] = json!(0);
    recalls.push(injected(&hook(&env, "user-prompt-submit", &pre)));
    let first = recalls[0].clone().expect("the seeded memory is recalled");
    append(
        &transcript,
        &[
            json!({"step_index": 1, "source": "SYSTEM_SDK", "type": "EPHEMERAL_MESSAGE", "status": "DONE", "content": first}),
            json!({"step_index": 2, "source": "MODEL", "type": "PLANNER_RESPONSE", "status": "DONE", "tool_calls": [{"name": "view_file", "args": {"AbsolutePath": project.join("notes.md").display().to_string()}}]}),
        ],
    );
    pre["invocationNum"] = json!(1);
    assert_eq!(
        hook(&env, "user-prompt-submit", &pre),
        "",
        "a second model call of the same turn recalls nothing"
    );
    append(
        &transcript,
        &[
            model(4, &turns[0].answer),
            json!({"step_index": 3, "source": "MODEL", "type": "VIEW_FILE", "status": "DONE", "content": "File Path: `notes.md`\ntheme: wombat-amber"}),
            json!({"step_index": 5, "source": "USER_EXPLICIT", "type": "CODE_ACTION", "status": "DONE", "content": "The following changes were made by the USER to: notes.md"}),
        ],
    );
    assert_eq!(hook(&env, "stop", &p("Stop")), "", "Stop prints nothing");
    env.wait_worker_after_stop_of(&sid, "step-0");

    // Turns 2 and 3: the same short prompt, each its own turn.
    for (t, (user_step, model_step)) in turns[1..].iter().zip([(6, 8), (9, 10)]) {
        append(&transcript, &[user(user_step, &t.prompt)]);
        pre["invocationNum"] = json!(0);
        recalls.push(injected(&hook(&env, "user-prompt-submit", &pre)));
        append(&transcript, &[model(model_step, &t.answer)]);
        assert_eq!(hook(&env, "stop", &p("Stop")), "");
        env.wait_worker_after_stop_of(&sid, &t.id);
    }
    assert!(first.contains("wombat-amber"), "{first}");
    // The server may find nothing new for a short prompt in a session already given its
    // memories; whatever it answered, the same prompt gets the same injection (from the cache or the server alike).
    assert_eq!(recalls[1], recalls[2], "the same prompt, the same answer");
    let remote = ov_engine::ids::remote_session_id("ag-", &sid);
    assert_exactly_once(&url, &remote, &turns);
}

/// A project-scope install writes `<repo>/.agents/hooks.json` next to the repository's own
/// hooks, a re-install changes no byte, and uninstall leaves the file as it was.
#[test]
fn project_scope_install_keeps_the_repositorys_hooks() {
    let env = Env::new();
    let repo = env.home().join("repo");
    std::fs::create_dir_all(repo.join(".git")).expect("repo");
    let file = repo.join(".agents/hooks.json");
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    let theirs =
        json!({"lint": {"Stop": [{"type": "command", "command": "make lint", "timeout": 30}]}});
    std::fs::write(&file, serde_json::to_vec_pretty(&theirs).expect("json")).expect("write");
    let home = env.home().display().to_string();
    let root = repo.display().to_string();
    let args = [
        "install",
        "--harness",
        "antigravity",
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
    assert_eq!(installed["lint"], theirs["lint"]);
    for (event, sub) in [
        ("SessionStart", "session-start"),
        ("PreInvocation", "user-prompt-submit"),
        ("Stop", "stop"),
    ] {
        let cmd = installed["openviking-memory"][event][0]["command"]
            .as_str()
            .expect(event);
        assert!(
            cmd.ends_with(&format!(" --harness antigravity {sub}")),
            "{cmd}"
        );
    }
    let bytes = std::fs::read(&file).expect("read");
    let again = env.run_with(&args, b"", &[]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(
        std::fs::read(&file).expect("read"),
        bytes,
        "a re-install rewrote the file"
    );
    let un = env.run_with(
        &["uninstall", "--harness", "antigravity", "--home", &home],
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
