//! Hook behaviour on the real binary: session id fallbacks, UPS dedup, the SessionStart
//! debounce, recall through the real server and its cache, the off switches, file modes,
//! secrets, and the back-off when the server is down.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{context_of, count, Env, Turn};
use ov_engine::event::{Event, HookKind};
use serde_json::json;

fn hooks(env: &Env, sid: &str) -> Vec<ov_engine::event::HookReceived> {
    env.events(sid)
        .into_iter()
        .filter_map(|e| match e.event {
            Event::HookReceived(h) => Some(h),
            _ => None,
        })
        .collect()
}

/// No id → the UUID in the transcript path → a hash of the cwd; an id with `../` or `/`
/// never leaves the journals folder.
#[test]
fn session_id_fallbacks_and_no_escape_from_the_journals_folder() {
    let env = Env::new();
    let cwd = env.home().join("project");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    let cwd_s = cwd.display().to_string();
    let uuid = "1b4e28ba-2fa1-41d2-883f-0016d3cca427";
    let cases = [
        (
            json!({"cwd": cwd_s, "turnId": "turn_1", "responseText": "a",
                   "transcript_path": format!("/tmp/zcode-claude-hook-{uuid}/transcript.jsonl")}),
            uuid.to_owned(),
        ),
        (
            json!({"cwd": cwd_s, "turnId": "turn_2", "responseText": "b"}),
            ov_engine::ids::resolve_session_id(None, None, &cwd_s).0,
        ),
    ];
    for (p, want) in &cases {
        assert_eq!(env.hook("stop", p), "");
        let h = hooks(&env, want);
        assert_eq!(h.len(), 1, "no journal for {want}");
        assert_eq!(h[0].session_id.as_deref(), Some(want.as_str()));
    }
    assert!(cases[1].1.starts_with("cwd-"), "{}", cases[1].1);

    for evil in [
        "../../escaped",
        "../outside",
        "/abs/path",
        "..",
        "a/../../b",
    ] {
        let p = json!({"session_id": evil, "prompt": "p", "cwd": cwd_s});
        assert_eq!(env.hook("user-prompt-submit", &p), "");
    }
    common::wait_all_idle(&env);
    let journals = ov_engine::paths::journals_dir(&env.state());
    for entry in std::fs::read_dir(&journals).expect("journals") {
        let name = entry.expect("entry").file_name();
        let name = name.to_string_lossy();
        assert!(name != "." && name != ".." && !name.contains('/'), "{name}");
    }
    // Nothing was created beside the state root or above it.
    let mut top: Vec<String> = std::fs::read_dir(env.home())
        .expect("home")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, ["project", "state"]);
    let mut in_state: Vec<String> = std::fs::read_dir(env.state())
        .expect("state")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .filter(|n| n != "ovhook.log")
        .collect();
    in_state.sort();
    assert_eq!(in_state, ["journals"]);
    assert!(!env.home().join("escaped").exists() && !Path::new("/abs/path").exists());
}

/// Recall through the real server: a seeded memory is injected (its words are this test's
/// own: other tests seed "kumquat" memories on the same server); the same `turnId` again
/// gives no second output; the same prompt on another turn is served from the cache
/// with no second recall request.
#[test]
fn recall_injects_a_seeded_memory_dedups_and_caches() {
    let Some(url) = common::server_url() else {
        return;
    };
    common::seed(
        &url,
        "viking://~/memories/preferences/persimmon-tabs.md",
        "The user prefers zebra-striped tabs in the persimmon editor.",
    );
    let env = Env::with_url(&url);
    let sid = common::unique_session();
    let mut t1 = Turn::new("recall");
    t1.prompt = "Which tabs do I like in the persimmon editor?".into();
    let p1 = common::ups_payload(&sid, &t1, env.home());
    let first = env.hook("user-prompt-submit", &p1);
    let ctx = context_of("UserPromptSubmit", &first, 32768).expect("a recall block");
    assert!(ctx.contains("zebra-striped tabs"), "{ctx}");
    assert!(ctx.starts_with("<openviking-context>"), "{ctx}");

    // The same turn again (ZCode re-fires UPS): nothing printed.
    assert_eq!(env.hook("user-prompt-submit", &p1), "");

    // The same prompt on another turn: the same block, from the cache.
    let mut t2 = Turn::new("recall");
    t2.prompt = t1.prompt.clone();
    let second = env.hook(
        "user-prompt-submit",
        &common::ups_payload(&sid, &t2, env.home()),
    );
    assert_eq!(
        context_of("UserPromptSubmit", &second, 32768).as_deref(),
        Some(ctx.as_str())
    );
    let evs = env.events(&sid);
    let served: Vec<(Option<&str>, bool)> = evs
        .iter()
        .filter_map(|e| match &e.event {
            Event::RecallServed {
                turn_id, cached, ..
            } => Some((turn_id.as_deref(), *cached)),
            _ => None,
        })
        .collect();
    assert_eq!(
        served,
        [(Some(t1.id.as_str()), false), (Some(t2.id.as_str()), true)]
    );
}

/// SessionStart with a profile on the server prints it; a second one within 2 s prints
/// nothing.
#[test]
fn session_start_is_debounced() {
    let Some(url) = common::server_url() else {
        return;
    };
    common::seed(
        &url,
        "viking://~/memories/profile.md",
        "# Profile\nName: Hooktest\n",
    );
    let env = Env::with_url(&url);
    let sid = common::unique_session();
    let mut p = common::base_payload("SessionStart", &sid, None, env.home());
    p["source"] = json!("startup");
    let first = env.hook("session-start", &p);
    let ctx = context_of("SessionStart", &first, 32768).expect("profile output");
    assert!(
        ctx.contains("<openviking-context source=\"session-start\">"),
        "{ctx}"
    );
    assert_eq!(env.hook("session-start", &p), "", "debounce");
    let starts = count(
        &env.events(&sid),
        |e| matches!(e, Event::HookReceived(h) if h.kind == Some(HookKind::SessionStart)),
    );
    assert_eq!(starts, 2, "both journaled");
    common::wait_all_idle(&env);
}

/// `OPENVIKING_MEMORY_ENABLED=0` and a bypass pattern: no output, no connection, no
/// conversation in the journal, no worker.
#[test]
fn memory_off_and_bypass_print_nothing_connect_nowhere_keep_no_content() {
    let listener = common::CountingListener::start();
    for (k, v) in [
        ("OPENVIKING_MEMORY_ENABLED", "0"),
        ("OPENVIKING_BYPASS_SESSION_PATTERNS", "sess_*"),
        ("OPENVIKING_BYPASS_SESSION", "1"),
    ] {
        let mut env = Env::with_url(&listener.url());
        env.set(k, v);
        let sid = common::unique_session();
        let turn = Turn::new("secret-conversation");
        let mut ss = common::base_payload("SessionStart", &sid, None, env.home());
        ss["source"] = json!("startup");
        assert_eq!(env.hook("session-start", &ss), "", "{k}");
        assert_eq!(
            env.hook(
                "user-prompt-submit",
                &common::ups_payload(&sid, &turn, env.home())
            ),
            "",
            "{k}"
        );
        assert_eq!(
            env.hook("stop", &common::stop_payload(&sid, &turn, env.home())),
            "",
            "{k}"
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
        common::wait_all_idle(&env);
        let evs = env.events(&sid);
        assert_eq!(
            count(&evs, |e| matches!(e, Event::HookReceived(_))),
            3,
            "{k}"
        );
        assert_eq!(
            count(&evs, |e| matches!(e, Event::WorkerStarted { .. })),
            0,
            "{k}: a worker ran"
        );
        for h in hooks(&env, &sid) {
            assert!(
                h.prompt.is_none() && h.response_text.is_none(),
                "{k}: {h:?}"
            );
        }
        let raw = read_tree(&env.state());
        assert!(
            !contains(&raw, "secret-conversation"),
            "{k}: content on disk"
        );
        assert_eq!(listener.connections(), 0, "{k}: a connection was made");
    }
}

/// `OPENVIKING_AUTO_CAPTURE=0`: the Stop is journaled (without its answer) and no worker
/// starts.
#[test]
fn auto_capture_off_spawns_no_worker() {
    let listener = common::CountingListener::start();
    let mut env = Env::with_url(&listener.url());
    env.set("OPENVIKING_AUTO_CAPTURE", "0");
    // A worker the Stop would start runs in the hook's own process: when the hook returns,
    // any worker has already journaled (no waiting for a detached one).
    env.set("OVHOOK_NO_DETACH", "1");
    let sid = common::unique_session();
    let turn = Turn::new("nocapture");
    assert_eq!(
        env.hook("stop", &common::stop_payload(&sid, &turn, env.home())),
        ""
    );
    let evs = env.events(&sid);
    assert_eq!(count(&evs, |e| matches!(e, Event::WorkerStarted { .. })), 0);
    assert!(!ov_engine::paths::worker_lock(&env.journal_dir(&sid)).exists());
    assert_eq!(listener.connections(), 0);
}

fn read_tree(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).expect("read")));
            }
        }
    }
    out
}

fn contains(files: &[(std::path::PathBuf, Vec<u8>)], needle: &str) -> bool {
    files
        .iter()
        .any(|(_, b)| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
}

/// Every file ovhook writes is 0600 in 0700 folders; the API key appears in neither the
/// journal nor `ovhook.log`, on the paths that log the most (unreachable server, debug).
#[test]
fn files_are_private_and_the_api_key_never_reaches_disk() {
    const KEY: &str = "sk-hooktest-SECRET-4242";
    let mut env = Env::with_url(&format!("http://127.0.0.1:{}", common::closed_port()));
    env.set("OPENVIKING_API_KEY", KEY)
        .set("OPENVIKING_DEBUG", "1");
    let sid = common::unique_session();
    let mut s = common::Session::new(&env);
    s.sid = sid.clone();
    let t = s.turn("perm", &[]);
    let tid = t.id.clone();
    s.wait_worker();
    let mut ss = common::base_payload("SessionStart", &sid, None, env.home());
    ss["source"] = json!("resume");
    assert_eq!(env.hook("session-start", &ss), "");
    env.drain();
    common::wait_all_idle(&env);

    let files = read_tree(&env.state());
    assert!(
        files.iter().any(|(p, _)| p.ends_with("ovhook.log")),
        "no log written: {files:?}"
    );
    assert!(contains(&files, &tid), "the journal holds the turn");
    assert!(!contains(&files, KEY), "the API key reached the disk");
    let mut stack = vec![env.state()];
    while let Some(d) = stack.pop() {
        let mode = std::fs::metadata(&d).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", d.display());
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("e").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let mode = std::fs::metadata(&p).expect("meta").permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{}", p.display());
            }
        }
    }
}

/// Server down: UPS exits 0 with nothing printed and journals `ServerUnreachable`; the
/// next UPS inside the back-off makes no connection attempt.
#[test]
fn server_down_backs_off() {
    // A closed port: the failure is journaled once, not again inside the back-off.
    let env = Env::with_url(&format!("http://127.0.0.1:{}", common::closed_port()));
    let sid = common::unique_session();
    for i in 0..3 {
        let t = Turn::new(&format!("down{i}"));
        assert_eq!(
            env.hook(
                "user-prompt-submit",
                &common::ups_payload(&sid, &t, env.home())
            ),
            ""
        );
        let n = count(&env.events(&sid), |e| {
            matches!(e, Event::ServerUnreachable { .. })
        });
        assert_eq!(n, 1, "prompt {i}");
    }

    // A listener that drops every connection: one connection for the first prompt,
    // none for the next ones.
    let listener = common::CountingListener::start();
    let env = Env::with_url(&listener.url());
    let sid = common::unique_session();
    let t = Turn::new("drop0");
    assert_eq!(
        env.hook(
            "user-prompt-submit",
            &common::ups_payload(&sid, &t, env.home())
        ),
        ""
    );
    let after_first = listener.connections();
    assert!(after_first >= 1, "the first prompt did not try the server");
    assert_eq!(
        count(&env.events(&sid), |e| matches!(
            e,
            Event::ServerUnreachable { .. }
        )),
        1
    );
    for i in 1..3 {
        let t = Turn::new(&format!("drop{i}"));
        assert_eq!(
            env.hook(
                "user-prompt-submit",
                &common::ups_payload(&sid, &t, env.home())
            ),
            ""
        );
    }
    assert_eq!(
        listener.connections(),
        after_first,
        "connected inside the back-off"
    );
}

/// Every hook installs the logger before it can fail: a journal that cannot be opened is
/// logged by each of them (PreToolUse included, which loads no configuration).
#[test]
fn every_hook_logs_its_errors() {
    let env = Env::new();
    std::fs::create_dir_all(env.state()).unwrap();
    // `journals` is a file: no session journal can be opened.
    std::fs::write(env.state().join("journals"), b"not a folder").unwrap();
    let log = env.state().join("ovhook.log");
    for (cmd, event) in [
        ("pre-tool-use", "PreToolUse"),
        ("session-start", "SessionStart"),
        ("user-prompt-submit", "UserPromptSubmit"),
        ("stop", "Stop"),
    ] {
        let _ = std::fs::remove_file(&log);
        let payload = json!({
            "session_id": "sess_log",
            "hook_event_name": event,
            "tool_name": "Read",
            "tool_input": {"file_path": "viking://~/x"},
            "prompt": "hello",
        });
        let out = env.run_with(&[cmd], payload.to_string().as_bytes(), &[]);
        assert!(out.status.success(), "{cmd}");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            text.contains("ERROR") && text.contains("sess_log"),
            "{cmd} logged nothing: {text:?}"
        );
        // The handler itself ran: the payload names this event.
        assert!(!text.contains("not acted on"), "{cmd}: {text:?}");
        if cmd == "pre-tool-use" {
            assert!(
                String::from_utf8_lossy(&out.stdout).contains("deny"),
                "the guard denied"
            );
        }
    }
}

/// PreToolUse waits milliseconds, not seconds, for a journal lock another process holds: the
/// denial is printed and the timeout logged with its (millisecond) wait.
#[test]
fn pre_tool_use_waits_milliseconds_for_a_held_journal_lock() {
    let env = Env::new();
    let payload = json!({
        "session_id": "sess_locked",
        "tool_name": "Read",
        "tool_input": {"file_path": "viking://~/x"},
    });
    assert!(!env.hook("pre-tool-use", &payload).is_empty());
    let lock = env.journal_dir("sess_locked").join(ov_journal::LOCK_FILE);
    let _held = ov_journal::FileLock::try_exclusive(&lock, std::time::Duration::from_secs(5))
        .unwrap()
        .expect("lock taken");
    let _ = std::fs::remove_file(env.state().join("ovhook.log"));
    assert!(
        !env.hook("pre-tool-use", &payload).is_empty(),
        "still denied"
    );
    let log = std::fs::read_to_string(env.state().join("ovhook.log")).unwrap_or_default();
    let waited = log
        .split("timed out after ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no lock timeout logged: {log:?}"));
    assert!(
        waited.ends_with("ms") && !waited.ends_with("µs"),
        "waited {waited}"
    );
}
