//! The hook command contract, per event, on the real binary: exit 0 and a valid output
//! (or none) whatever arrives on stdin; Stop never prints; context output is exactly
//! ZCode's canonical shape and fits the output cap; PreToolUse denies `viking://` for
//! Read/Glob/Grep only; bad payloads are journaled with `malformed` set.

use crate::common;

use common::{context_of, deny_of, Env};
use ov_engine::event::{Event, HookKind};
use serde_json::{json, Value};

const EVENTS: [&str; 4] = [
    "session-start",
    "user-prompt-submit",
    "pre-tool-use",
    "stop",
];

fn wire_name(cmd: &str) -> &'static str {
    match cmd {
        "session-start" => "SessionStart",
        "user-prompt-submit" => "UserPromptSubmit",
        "pre-tool-use" => "PreToolUse",
        _ => "Stop",
    }
}

/// Checks one hook run against the contract of its event.
fn check_output(cmd: &str, out: &std::process::Output, max: usize) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{cmd}: exit {:?}, stderr {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = std::str::from_utf8(&out.stdout).expect("stdout UTF-8");
    match cmd {
        "stop" => assert_eq!(stdout, "", "Stop printed something"),
        "pre-tool-use" => {
            deny_of(stdout);
        }
        _ => {
            context_of(wire_name(cmd), stdout, max);
        }
    }
}

fn malformed_hooks(env: &Env) -> Vec<(HookKind, String)> {
    common::all_events(env)
        .into_iter()
        .filter_map(|e| match e.event {
            Event::HookReceived(h) => Some((h.kind?, h.malformed?)),
            _ => None,
        })
        .collect()
}

/// Payloads that are not what ZCode sends: each must give exit 0, valid (empty) output,
/// and a journaled `HookReceived` whose `malformed` says what was wrong.
#[test]
fn bad_payloads_exit_0_and_are_journaled_as_malformed() {
    let mut big = br#"{"session_id":"sess_big","prompt":""#.to_vec();
    big.resize(20 << 20, b'a');
    big.extend_from_slice(br#""}"#);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", Vec::new(), "empty payload"),
        (
            "malformed",
            b"{\"session_id\": \"s\", ".to_vec(),
            "not JSON",
        ),
        ("array", b"[1,2,3]".to_vec(), "not a JSON object"),
        ("non_utf8", b"\xff\xfe{\"a\":1}\xc3".to_vec(), "not UTF-8"),
        ("20mb", big, "larger than"),
        (
            "wrong_types",
            br#"{"session_id":"sess_types","prompt":7,"turnId":{"x":1},"cwd":[1]}"#.to_vec(),
            "expected a string",
        ),
    ];
    for (name, payload, what) in &cases {
        let env = Env::new();
        for cmd in EVENTS {
            let out = env.run_with(&[cmd], payload, &[]);
            check_output(cmd, &out, 32768);
            assert_eq!(out.stdout, b"", "{name}/{cmd}: output for a bad payload");
        }
        common::wait_all_idle(&env);
        let got = malformed_hooks(&env);
        for kind in [
            HookKind::SessionStart,
            HookKind::PromptSubmit,
            HookKind::PreToolUse,
            HookKind::Stop,
        ] {
            // A payload over the cap is cut at the cap or, when the writer is slower than
            // the read deadline (a loaded machine), at the deadline: both are journaled
            // pass-throughs of a payload the hook refused to wait for.
            let matches = |m: &String| {
                m.contains(what) || (*name == "20mb" && m.contains("stdin still open"))
            };
            assert!(
                got.iter().any(|(k, m)| *k == kind && matches(m)),
                "{name}: no {kind:?} journaled with malformed ~ {what:?}: {got:?}"
            );
        }
        // Whichever way a payload was cut, the hook never kept more than the cap.
        let kept = common::all_events(&env)
            .into_iter()
            .filter_map(|e| match e.event {
                Event::HookReceived(h) => Some(h.raw_len),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        assert!(kept <= 16 << 20, "{name}: a hook kept {kept} bytes");
    }
}

/// `{}` and payloads with no ids: still exit 0, nothing printed, journaled under the
/// cwd-hash fallback session.
#[test]
fn missing_ids_exit_0_and_journal_under_a_fallback_session() {
    let env = Env::new();
    for payload in [
        json!({}),
        json!({"prompt": "hi there", "responseText": "hello"}),
    ] {
        for cmd in EVENTS {
            let out = env.run_with(&[cmd], payload.to_string().as_bytes(), &[]);
            check_output(cmd, &out, 32768);
            assert_eq!(out.stdout, b"");
        }
    }
    common::wait_all_idle(&env);
    let cwd = env.home().display().to_string();
    let (sid, _) = ov_engine::ids::resolve_session_id(None, None, &cwd);
    let kinds: Vec<HookKind> = env
        .events(&sid)
        .into_iter()
        .filter_map(|e| match e.event {
            Event::HookReceived(h) => h.kind,
            _ => None,
        })
        .collect();
    assert_eq!(kinds.len(), 8, "{sid}: {kinds:?}");
}

/// ZCode sends both casings; each alone is enough to identify the session, the turn and
/// the content.
#[test]
fn camel_case_and_snake_case_keys_alone_both_work() {
    let env = Env::new();
    let cwd = env.home().display().to_string();
    let camel = json!({"hookEventName":"UserPromptSubmit","sessionId":"sess_camel","turnId":"turn_c1",
        "traceId":"t1","cwd":cwd,"prompt":"camel prompt"});
    let snake = json!({"hook_event_name":"UserPromptSubmit","session_id":"sess_snake","turn_id":"turn_s1",
        "trace_id":"t2","cwd":cwd,"prompt":"snake prompt"});
    let camel_stop = json!({"hookEventName":"Stop","sessionId":"sess_camel","turnId":"turn_c1",
        "responseText":"camel answer","toolCallCount":0,"transcriptPath":"/tmp/x/transcript.jsonl"});
    let snake_stop = json!({"hook_event_name":"Stop","session_id":"sess_snake","turn_id":"turn_s1",
        "response_text":"snake answer","tool_call_count":0,"transcript_path":"/tmp/x/transcript.jsonl"});
    for (cmd, p) in [
        ("user-prompt-submit", &camel),
        ("user-prompt-submit", &snake),
        ("stop", &camel_stop),
        ("stop", &snake_stop),
    ] {
        let out = env.run_with(&[cmd], p.to_string().as_bytes(), &[]);
        check_output(cmd, &out, 32768);
    }
    common::wait_all_idle(&env);
    for (sid, turn, prompt, answer) in [
        ("sess_camel", "turn_c1", "camel prompt", "camel answer"),
        ("sess_snake", "turn_s1", "snake prompt", "snake answer"),
    ] {
        let hooks: Vec<_> = env
            .events(sid)
            .into_iter()
            .filter_map(|e| match e.event {
                Event::HookReceived(h) => Some(h),
                _ => None,
            })
            .collect();
        assert_eq!(hooks.len(), 2, "{sid}");
        for h in &hooks {
            assert_eq!(h.session_id.as_deref(), Some(sid));
            assert_eq!(h.turn_id.as_deref(), Some(turn));
            assert!(h.malformed.is_none(), "{h:?}");
        }
        assert_eq!(hooks[0].prompt.as_deref(), Some(prompt));
        assert_eq!(hooks[1].response_text.as_deref(), Some(answer));
        assert_eq!(hooks[1].tool_call_count, Some(0));
    }
    // PreToolUse, each casing alone.
    for p in [
        json!({"toolName":"Read","toolInput":{"file_path":"viking://~/memories/a.md"},"sessionId":"sess_camel"}),
        json!({"tool_name":"Read","tool_input":{"file_path":"viking://~/memories/a.md"},"session_id":"sess_snake"}),
    ] {
        let out = env.run_with(&["pre-tool-use"], p.to_string().as_bytes(), &[]);
        check_output("pre-tool-use", &out, 32768);
        assert!(
            deny_of(std::str::from_utf8(&out.stdout).expect("utf8")).is_some(),
            "{p}"
        );
    }
}

/// PreToolUse: Read/Glob/Grep on `viking://` are denied with exactly the deny keys; local
/// paths and other tools pass through with empty stdout. Denials are journaled.
#[test]
fn pre_tool_use_denies_viking_paths_and_passes_local_ones() {
    let env = Env::new();
    let deny: [Value; 4] = [
        json!({"tool_name":"Read","tool_input":{"file_path":"viking://~/memories/profile.md"}}),
        json!({"tool_name":"Glob","tool_input":{"pattern":"viking://user/memories/**"}}),
        json!({"tool_name":"Grep","tool_input":{"pattern":"Helix","path":"viking://~/memories"}}),
        json!({"toolName":"read","toolInput":{"filePath":"VIKING://resources/p/docs.md"}}),
    ];
    let pass: [Value; 4] = [
        json!({"tool_name":"Read","tool_input":{"file_path":"/tmp/local-file.txt"}}),
        json!({"tool_name":"Glob","tool_input":{"pattern":"**/*.ts"}}),
        json!({"tool_name":"Grep","tool_input":{"pattern":"viking","path":"src/"}}),
        json!({"tool_name":"Write","tool_input":{"file_path":"viking://x"}}),
    ];
    for (i, p) in deny.iter().enumerate() {
        let mut p = p.clone();
        p["session_id"] = json!("sess_guard");
        let stdout = env.hook("pre-tool-use", &p);
        let reason = deny_of(&stdout).unwrap_or_else(|| panic!("case {i} not denied: {p}"));
        assert!(reason.contains("MCP"), "{reason}");
    }
    for p in &pass {
        let mut p = p.clone();
        p["session_id"] = json!("sess_guard");
        assert_eq!(env.hook("pre-tool-use", &p), "", "{p}");
    }
    let denied = common::count(
        &env.events("sess_guard"),
        |e| matches!(e, Event::HookReceived(h) if h.denied_uri.is_some()),
    );
    assert_eq!(denied, 4);
}

/// Stop prints nothing on any path: a full real payload, a payload with a huge answer, a
/// payload with only a preview, with capture off, and against an unreachable server.
#[test]
fn stop_prints_nothing_ever() {
    let mut env = Env::new();
    let cwd = env.home().to_path_buf();
    let sid = common::unique_session();
    let turn = common::Turn::new("stop");
    let mut payloads = vec![common::stop_payload(&sid, &turn, &cwd)];
    let mut huge = common::stop_payload(&sid, &common::Turn::new("huge"), &cwd);
    huge["responseText"] = json!("x".repeat(3 << 20));
    payloads.push(huge);
    payloads.push(json!({"session_id": sid, "responsePreview": "only a preview"}));
    for p in &payloads {
        assert_eq!(env.hook("stop", p), "");
    }
    env.set("OPENVIKING_AUTO_CAPTURE", "0");
    assert_eq!(env.hook("stop", &payloads[0]), "");
    env.unset("OPENVIKING_AUTO_CAPTURE");
    let closed = format!("http://127.0.0.1:{}", common::closed_port());
    env.set("OPENVIKING_URL", &closed);
    for p in &payloads {
        assert_eq!(env.hook("stop", p), "");
    }
    common::wait_all_idle(&env);
}

/// With a real profile on the server, SessionStart's output is exactly the canonical
/// shape and fits the cap: 32 KiB by default, and a smaller `OPENVIKING_MAX_OUTPUT_BYTES`.
#[test]
fn session_start_output_is_canonical_and_fits_the_cap() {
    let Some(url) = common::server_url() else {
        return;
    };
    // A big profile so that a small cap has to cut it (the server is shared: the profile
    // only grows, tests only rely on it being non-empty).
    let mut profile = String::from("# Profile\nName: Hooktest\n");
    for i in 0..400 {
        profile.push_str(&format!(
            "- fact {i}: the user likes \"quoted\" things and \\backslashes\\ é日本\n"
        ));
    }
    common::seed(&url, "viking://~/memories/profile.md", &profile);
    // The smallest cap the configuration accepts is 1024 bytes.
    for (max, cap) in [
        (None, 32768usize),
        (Some("2000"), 2000),
        (Some("1024"), 1024),
    ] {
        let mut env = Env::with_url(&url);
        if let Some(m) = max {
            env.set("OPENVIKING_MAX_OUTPUT_BYTES", m);
        }
        let sid = common::unique_session();
        let p = common::base_payload("SessionStart", &sid, None, env.home());
        let mut p = p;
        p["source"] = json!("startup");
        let stdout = env.hook("session-start", &p);
        let ctx = context_of("SessionStart", &stdout, cap)
            .unwrap_or_else(|| panic!("no profile output with cap {cap}"));
        assert!(ctx.contains("Hooktest") || cap < 2000, "{ctx}");
        // UserPromptSubmit under the same cap: a recall block, canonical and fitting.
        let mut t = common::Turn::new("cap");
        t.prompt = "What does my profile say about quoted things and backslashes?".into();
        let ups = env.hook(
            "user-prompt-submit",
            &common::ups_payload(&sid, &t, env.home()),
        );
        context_of("UserPromptSubmit", &ups, cap);
        common::wait_all_idle(&env);
    }
}
