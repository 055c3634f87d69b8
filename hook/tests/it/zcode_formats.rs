//! ZCode as people run it, through the real `ovhook` binary and the real OpenViking server:
//! what is not the user's words, turns that end badly, payloads that contradict their hook,
//! subagent sessions, and payloads without a turn id.

use crate::common;

use common::{base_payload, client, unique_session, unique_turn, Env};
use ov_engine::event::Event;
use serde_json::{json, Value};

/// One `model_io` line of `turn` (optionally without a `turnId`), answering with `finish`
/// (`None`: an interrupted call with an error line).
fn line(
    sid: &str,
    turn: Option<&str>,
    trace: &str,
    messages: &[Value],
    finish: Option<&str>,
    text: &str,
) -> String {
    let mut v = json!({
        "type": "model_io", "sessionId": sid, "traceId": trace,
        "requestId": unique_turn(), "attempt": 1, "querySource": "main_turn",
        "request": {"messages": messages, "messagesKind": "full", "messageOffset": 0},
        "response": {"text": text, "toolCalls": []},
    });
    if let Some(t) = turn {
        v["turnId"] = json!(t);
    }
    match finish {
        Some(f) => v["response"]["finishReason"] = json!(f),
        None => v["error"] = json!({"name": "Error", "message": "v4 session stopped"}),
    }
    let mut s = v.to_string();
    s.push('\n');
    s
}

fn append(env: &Env, sid: &str, text: &str) {
    use std::io::Write;
    let path = env.rollout(sid);
    std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .expect("open");
    f.write_all(text.as_bytes()).expect("write");
}

fn env_with(url: &str) -> Env {
    let mut e = Env::with_url(url);
    e.set("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "0");
    e.set("OVHOOK_NO_DETACH", "1");
    e.set("OPENVIKING_AUTO_RECALL", "false");
    e
}

/// (role, turn id, content) of everything the server holds for `sid`.
fn held(url: &str, sid: &str) -> Vec<(String, Option<String>, String)> {
    let remote = ov_engine::ids::remote_session_id("zc-", sid);
    client(url)
        .session_messages(&remote)
        .unwrap_or_default()
        .into_iter()
        .map(|m| (m.role, m.turn_id, m.content))
        .collect()
}

fn planned_roles(env: &Env, sid: &str) -> Vec<(String, &'static str)> {
    env.events(sid)
        .into_iter()
        .flat_map(|e| match e.event {
            Event::MessagesPlanned { messages } => messages
                .into_iter()
                .map(|m| (m.content, m.role.as_str()))
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

#[test]
fn only_the_users_words_reach_the_server() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = env_with(&url);
    let sid = unique_session();
    let cwd = env.home().to_path_buf();
    let typed = format!("make the header blue {}", unique_turn());
    let raw = format!(
        "<in-app-browser-context source=\"ambient-ui-state\">\n- Current URL: https://intranet.example.com/admin?token=abc\n</in-app-browser-context>\n\n## My request for ZCode:\n{typed}\n[Image: source: /Users/ann/Desktop/shot.png]"
    );
    let t1 = unique_turn();
    let mut ups = base_payload("UserPromptSubmit", &sid, Some(&t1), &cwd);
    ups["prompt"] = json!(raw);
    env.hook("user-prompt-submit", &ups);
    let msgs = [json!({"role": "user", "content": raw})];
    append(
        &env,
        &sid,
        &line(&sid, Some(&t1), "tr1", &msgs, Some("stop"), "Done."),
    );
    let mut stop = base_payload("Stop", &sid, Some(&t1), &cwd);
    stop["responseText"] = json!("Done.");
    env.hook("stop", &stop);
    // A background task's notification starts the next turn: never the user's words.
    let t2 = unique_turn();
    let note = "<task-notification>\n<task-id>bg_1</task-id>\n<status>completed</status>\n</task-notification>";
    let msgs2 = [
        json!({"role": "user", "content": raw}),
        json!({"role": "assistant", "content": "Done."}),
        json!({"role": "user", "content": note}),
    ];
    append(
        &env,
        &sid,
        &line(
            &sid,
            Some(&t2),
            "tr2",
            &msgs2,
            Some("stop"),
            "The task finished.",
        ),
    );
    let mut stop2 = base_payload("Stop", &sid, Some(&t2), &cwd);
    stop2["responseText"] = json!("The task finished.");
    env.hook("stop", &stop2);
    let got = held(&url, &sid);
    assert_eq!(
        got,
        [
            ("user".into(), Some(t1.clone()), format!("{typed}\n[image]")),
            ("assistant".into(), Some(t1), "Done.".into()),
            ("assistant".into(), Some(t2), "The task finished.".into()),
        ]
    );
}

#[test]
fn an_interrupted_turn_sends_its_prompt_and_its_last_text_marked() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = env_with(&url);
    let sid = unique_session();
    let cwd = env.home().to_path_buf();
    let t1 = unique_turn();
    let mut ups = base_payload("UserPromptSubmit", &sid, Some(&t1), &cwd);
    ups["prompt"] = json!("explain the fold");
    env.hook("user-prompt-submit", &ups);
    let msgs = [json!({"role": "user", "content": "explain the fold"})];
    append(
        &env,
        &sid,
        &line(
            &sid,
            Some(&t1),
            "tr1",
            &msgs,
            Some("tool-calls"),
            "Reading it now.",
        ),
    );
    append(
        &env,
        &sid,
        &line(&sid, Some(&t1), "tr1", &msgs, None, "The fold takes"),
    );
    // ZCode's Stop for a stopped turn carries the partial text.
    let mut stop = base_payload("Stop", &sid, Some(&t1), &cwd);
    stop["responseText"] = json!("The fold takes");
    env.hook("stop", &stop);
    assert_eq!(
        held(&url, &sid),
        [
            ("user".into(), Some(t1.clone()), "explain the fold".into()),
            (
                "assistant".into(),
                Some(t1),
                "[interrupted] The fold takes".into()
            ),
        ]
    );
}

#[test]
fn a_preview_never_beats_the_rollouts_final_answer() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = env_with(&url);
    let sid = unique_session();
    let cwd = env.home().to_path_buf();
    let t1 = unique_turn();
    let full = "The whole answer, much longer than its preview.";
    let msgs = [json!({"role": "user", "content": "answer me"})];
    let mut ups = base_payload("UserPromptSubmit", &sid, Some(&t1), &cwd);
    ups["prompt"] = json!("answer me");
    env.hook("user-prompt-submit", &ups);
    append(
        &env,
        &sid,
        &line(&sid, Some(&t1), "tr1", &msgs, Some("stop"), full),
    );
    let mut stop = base_payload("Stop", &sid, Some(&t1), &cwd);
    stop["responsePreview"] = json!("The whole answer, mu");
    env.hook("stop", &stop);
    let got = held(&url, &sid);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[1].2, full);
}

#[test]
fn a_stop_before_its_rollout_lines_is_captured_whole_by_one_drain() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = env_with(&url);
    let sid = unique_session();
    let cwd = env.home().to_path_buf();
    let t1 = unique_turn();
    // No UserPromptSubmit; the Stop's worker finds no rollout line of the turn yet.
    let mut stop = base_payload("Stop", &sid, Some(&t1), &cwd);
    stop["responseText"] = json!("the answer");
    env.hook("stop", &stop);
    assert!(
        planned_roles(&env, &sid).is_empty(),
        "nothing before the prompt is known"
    );
    let msgs = [json!({"role": "user", "content": "the prompt"})];
    append(
        &env,
        &sid,
        &line(&sid, Some(&t1), "tr1", &msgs, Some("stop"), "the answer"),
    );
    env.drain();
    assert_eq!(
        planned_roles(&env, &sid),
        [
            ("the prompt".into(), "user"),
            ("the answer".into(), "assistant")
        ]
    );
    assert_eq!(held(&url, &sid).len(), 2);
}

#[test]
fn payloads_without_a_turn_id_reach_the_server_once() {
    let Some(url) = common::server_url() else {
        return;
    };
    for trace in [Some("tr-idless"), None] {
        let env = env_with(&url);
        let sid = unique_session();
        let cwd = env.home().to_path_buf();
        let prompt = format!("id-less prompt {}", unique_turn());
        let strip = |mut v: Value| {
            let o = v.as_object_mut().expect("object");
            o.remove("turnId");
            o.remove("traceId");
            if let Some(t) = trace {
                o.insert("traceId".into(), json!(t));
            }
            v
        };
        let mut ups = strip(base_payload("UserPromptSubmit", &sid, None, &cwd));
        ups["prompt"] = json!(prompt);
        env.hook("user-prompt-submit", &ups);
        let mut stop = strip(base_payload("Stop", &sid, None, &cwd));
        stop["responseText"] = json!("id-less answer");
        env.hook("stop", &stop);
        // Later, the rollout names the turn.
        let msgs = [json!({"role": "user", "content": prompt})];
        let rollout_trace = trace.unwrap_or("tr-other");
        append(
            &env,
            &sid,
            &line(
                &sid,
                Some(&unique_turn()),
                rollout_trace,
                &msgs,
                Some("stop"),
                "id-less answer",
            ),
        );
        env.drain();
        let got = held(&url, &sid);
        assert_eq!(got.len(), 2, "trace {trace:?}: {got:?}");
        let mut roles: Vec<(&str, &str)> = got
            .iter()
            .map(|(r, _, c)| (r.as_str(), c.as_str()))
            .collect();
        roles.sort_unstable();
        assert_eq!(
            roles,
            [("assistant", "id-less answer"), ("user", prompt.as_str())],
            "trace {trace:?}"
        );
    }
}

/// Hooks without a `turnId` but with a `traceId`, and the rollout already holding the
/// turn (same `traceId`) when the Stop's worker reads it: the server holds the turn under
/// ZCode's own turn id, once.
#[test]
fn a_turn_the_rollout_names_before_it_is_sent_goes_under_the_rollouts_turn_id() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = env_with(&url);
    let sid = unique_session();
    let cwd = env.home().to_path_buf();
    let turn = unique_turn();
    let trace = format!("tr-{}", unique_turn());
    let prompt = format!("named by the rollout {turn}");
    let without_turn_id = |mut v: Value| {
        let o = v.as_object_mut().expect("object");
        o.remove("turnId");
        o.insert("traceId".into(), json!(trace));
        v
    };
    let mut ups = without_turn_id(base_payload("UserPromptSubmit", &sid, None, &cwd));
    ups["prompt"] = json!(prompt);
    env.hook("user-prompt-submit", &ups);
    let msgs = [json!({"role": "user", "content": prompt})];
    append(
        &env,
        &sid,
        &line(&sid, Some(&turn), &trace, &msgs, Some("stop"), "the answer"),
    );
    let mut stop = without_turn_id(base_payload("Stop", &sid, None, &cwd));
    stop["responseText"] = json!("the answer");
    env.hook("stop", &stop);
    env.drain();
    let mut got = held(&url, &sid);
    got.sort();
    assert_eq!(
        got,
        [
            (
                "assistant".to_owned(),
                Some(turn.clone()),
                "the answer".to_owned()
            ),
            ("user".to_owned(), Some(turn.clone()), prompt.clone()),
        ]
    );
}

#[test]
fn a_payload_naming_another_event_is_journaled_as_malformed_and_not_acted_on() {
    let env = Env::new();
    let sid = unique_session();
    let cwd = env.home().to_path_buf();
    let mut post = base_payload("PostToolUse", &sid, Some(&unique_turn()), &cwd);
    post["toolName"] = json!("Bash");
    assert_eq!(env.hook("stop", &post), "");
    let mut ups = base_payload("UserPromptSubmit", &sid, Some(&unique_turn()), &cwd);
    ups["prompt"] = json!("hello");
    assert_eq!(env.hook("stop", &ups), "");
    let st = env.state_of(&sid);
    assert_eq!(st.malformed_hooks, 2);
    assert!(st.hook_counts.is_empty(), "{:?}", st.hook_counts);
    let evs = env.events(&sid);
    assert!(evs
        .iter()
        .all(|e| !matches!(e.event, Event::WorkerStarted { .. })));
}

#[test]
fn a_subagent_session_is_captured_only_when_configured() {
    for (capture, want) in [(None, 0), (Some("true"), 2)] {
        let mut env = Env::new();
        env.set("OVHOOK_NO_DETACH", "1");
        if let Some(v) = capture {
            env.set("OPENVIKING_CAPTURE_SUBAGENTS", v);
        }
        let sid = format!(
            "sess_subagent_agent_{}",
            unique_turn().trim_start_matches("turn_")
        );
        let cwd = env.home().to_path_buf();
        let t = unique_turn();
        let mut ups = base_payload("UserPromptSubmit", &sid, Some(&t), &cwd);
        ups["prompt"] = json!("internal subagent prompt");
        env.hook("user-prompt-submit", &ups);
        let mut stop = base_payload("Stop", &sid, Some(&t), &cwd);
        stop["responseText"] = json!("internal answer");
        env.hook("stop", &stop);
        let evs = env.events(&sid);
        let kept_content = evs.iter().any(|e| {
            matches!(&e.event, Event::HookReceived(h) if h.prompt.is_some() || h.response_text.is_some())
        });
        assert_eq!(kept_content, want > 0, "capture.subagents {capture:?}");
        assert_eq!(
            planned_roles(&env, &sid).len(),
            want,
            "capture.subagents {capture:?}"
        );
    }
}
