//! Hostile inputs through the real `ovhook` binary: a cloned repository's files (FIFOs,
//! terminals, huge git configs, budgets it tries to raise), stdin that never closes, slow
//! servers. Every hook must exit 0 within its budget whatever it is given.
//!
//! The "hanging" and "slow" servers are loopback listeners: faults the real server cannot
//! produce on demand.

use crate::common;

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

const HOOKS: [&str; 4] = [
    "session-start",
    "user-prompt-submit",
    "pre-tool-use",
    "stop",
];

/// The most a hook may take in these tests: its own budget (at most 6 s) plus process and
/// machine slack. Not a speed figure: a bound that a hang or a 600 s timeout breaks.
const HOOK_BOUND: Duration = Duration::from_secs(15);

fn wire_name(cmd: &str) -> &'static str {
    match cmd {
        "session-start" => "SessionStart",
        "user-prompt-submit" => "UserPromptSubmit",
        "pre-tool-use" => "PreToolUse",
        _ => "Stop",
    }
}

/// A payload for `cmd` in session `sid`, run in `cwd`.
fn payload(cmd: &str, sid: &str, cwd: &Path) -> Value {
    let turn = Turn::new(cmd);
    match cmd {
        "user-prompt-submit" => ups_payload(sid, &turn, cwd),
        "stop" => stop_payload(sid, &turn, cwd),
        "pre-tool-use" => {
            let mut v = base_payload("PreToolUse", sid, Some(&turn.id), cwd);
            v["tool_name"] = json!("Read");
            v["tool_input"] = json!({"file_path": "viking://resources/x"});
            v
        }
        _ => {
            let mut v = base_payload(wire_name(cmd), sid, None, cwd);
            v["source"] = json!("startup");
            v
        }
    }
}

/// A repository `<home>/repo` with an origin remote; returns its root.
fn repo(env: &Env) -> PathBuf {
    let root = env.home().join("repo");
    std::fs::create_dir_all(root.join(".git")).expect("mkdir");
    std::fs::create_dir_all(root.join(".openviking")).expect("mkdir");
    std::fs::write(
        root.join(".git/config"),
        "[remote \"origin\"]\n\turl = git@github.com:acme/app.git\n",
    )
    .expect("git config");
    root
}

fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Runs one hook, asserting exit 0 within [`HOOK_BOUND`]; returns stdout and the time taken.
fn timed_hook(env: &Env, cmd: &str, payload: &Value) -> (String, Duration) {
    let t = Instant::now();
    let out = env.run_with(&[cmd], payload.to_string().as_bytes(), &[]);
    let took = t.elapsed();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{cmd}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < HOOK_BOUND, "{cmd} took {took:?}");
    (String::from_utf8(out.stdout).expect("utf-8"), took)
}

/// A server that accepts connections and never answers (each held open until the test ends).
fn hanging_server() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        for s in l.incoming().flatten() {
            held.push(s);
        }
    });
    format!("http://127.0.0.1:{port}")
}

// ---- a cloned repository --------------------------------------------------------------

/// `.openviking/config.json` (and `config.local.json`) as a FIFO, or a symlink to the hook's
/// own stdin or stdout, is skipped: no hook blocks on it.
#[test]
fn irregular_repository_config_never_blocks_a_hook() {
    let env = Env::new();
    let root = repo(&env);
    let dir = root.join(".openviking");
    mkfifo(&dir.join("config.json"));
    std::os::unix::fs::symlink("/proc/self/fd/1", dir.join("config.local.json")).expect("ln");
    for cmd in HOOKS {
        let sid = unique_session();
        timed_hook(&env, cmd, &payload(cmd, &sid, &root));
        assert!(!env.events(&sid).is_empty(), "{cmd} journaled nothing");
    }
    std::fs::remove_file(dir.join("config.local.json")).expect("rm");
    std::os::unix::fs::symlink("/proc/self/fd/0", dir.join("config.local.json")).expect("ln");
    for cmd in HOOKS {
        timed_hook(&env, cmd, &payload(cmd, &unique_session(), &root));
    }
}

/// A FIFO as `.git/config`, or as the `.git` file of a worktree, blocks nothing.
#[test]
fn irregular_git_metadata_never_blocks_a_hook() {
    let env = Env::new();
    let root = env.home().join("wt");
    std::fs::create_dir_all(&root).expect("mkdir");
    mkfifo(&root.join(".git"));
    let other = repo(&env);
    std::fs::remove_file(other.join(".git/config")).expect("rm");
    mkfifo(&other.join(".git/config"));
    for cwd in [&root, &other] {
        for cmd in HOOKS {
            timed_hook(&env, cmd, &payload(cmd, &unique_session(), cwd));
        }
    }
}

/// A repository that asks for a 600 s request timeout and recall budget does not get them: a
/// server that never answers costs UserPromptSubmit its normal budget, not ten minutes.
#[test]
fn repository_cannot_raise_the_time_budget() {
    let mut env = Env::new();
    env.set("OPENVIKING_URL", &hanging_server());
    let root = repo(&env);
    std::fs::write(
        root.join(".openviking/config.json"),
        r#"{"network":{"timeout_ms":600000,"connect_timeout_ms":600000,"recall_budget_ms":600000}}"#,
    )
    .expect("write");
    let sid = unique_session();
    let turn = Turn::new("slow");
    let (out, _) = timed_hook(&env, "user-prompt-submit", &ups_payload(&sid, &turn, &root));
    assert_eq!(out, "");
}

/// Runs one hook and returns its own peak resident set (KiB), as GNU time reports it.
///
/// Not this process's `wait4`: a child's peak counts the pages of the process it was
/// forked from until it execs, and this test binary runs every other test at the same
/// time. `/usr/bin/time` forks the hook from its own small image.
fn hook_peak_rss_kib(env: &Env, cmd: &str, payload: &Value) -> i64 {
    let hook = env.command(&[cmd]);
    let report = env.home().join(format!("peak-rss-{cmd}"));
    let mut timed = std::process::Command::new("/usr/bin/time");
    timed
        .env_clear()
        .envs(hook.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(hook.get_program())
        .args(hook.get_args())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if let Some(dir) = hook.get_current_dir() {
        timed.current_dir(dir);
    }
    let mut child = timed.spawn().expect("/usr/bin/time (Debian package time)");
    let mut stdin = child.stdin.take().expect("stdin");
    let _ = stdin.write_all(payload.to_string().as_bytes());
    drop(stdin);
    let deadline = Instant::now() + HOOK_BOUND;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "{cmd} did not exit within {HOOK_BOUND:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(status.success(), "{cmd}: {status}");
    let text = std::fs::read_to_string(&report).expect("time's report");
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("time's report: {text:?}"))
}

/// A 200 MB `.git/config` is not read whole: every hook stays far below its size in memory.
#[test]
fn huge_git_config_is_not_read_whole() {
    let env = Env::new();
    let root = repo(&env);
    let cfg = root.join(".git/config");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&cfg)
        .expect("open");
    let line = format!("\t# {}\n", "x".repeat(1000));
    let block = line.repeat(1024);
    for _ in 0..200 {
        f.write_all(block.as_bytes()).expect("write");
    }
    drop(f);
    for cmd in HOOKS {
        let rss = hook_peak_rss_kib(&env, cmd, &payload(cmd, &unique_session(), &root));
        assert!(rss < 100 * 1024, "{cmd} peaked at {rss} KiB");
    }
}

// ---- stdin that never closes ------------------------------------------------------------

/// What a hook is given on stdin.
enum Stdin<'a> {
    /// A pipe the writer keeps open after writing these bytes (maybe none).
    OpenPipe(&'a [u8]),
    /// `/dev/zero`.
    Zero,
}

/// Runs `cmd` with `stdin`, holding a pipe open until the hook exits; asserts exit 0 within
/// [`HOOK_BOUND`].
fn run_with_stdin(env: &Env, cmd: &str, stdin: Stdin<'_>) -> (String, Duration) {
    let mut c = env.command(&[cmd]);
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut held = None;
    match stdin {
        Stdin::Zero => {
            c.stdin(std::fs::File::open("/dev/zero").expect("/dev/zero"));
        }
        Stdin::OpenPipe(_) => {
            c.stdin(std::process::Stdio::piped());
        }
    }
    let t = Instant::now();
    let mut child = c.spawn().expect("spawn");
    if let Stdin::OpenPipe(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(bytes).expect("write");
        held = Some(pipe);
    }
    let deadline = t + Duration::from_secs(60);
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{cmd} hung on an open stdin");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = t.elapsed();
    drop(held);
    let out = child.wait_with_output().expect("output");
    assert_eq!(out.status.code(), Some(0), "{cmd}");
    assert!(took < HOOK_BOUND, "{cmd} took {took:?}");
    (String::from_utf8(out.stdout).expect("utf-8"), took)
}

/// The hook events journaled anywhere under the state root.
fn hook_events(env: &Env) -> Vec<ov_engine::event::HookReceived> {
    all_events(env)
        .into_iter()
        .filter_map(|e| match e.event {
            ov_engine::event::Event::HookReceived(h) => Some(h),
            _ => None,
        })
        .collect()
}

/// A whole payload on a stdin that stays open: every hook acts on it as soon as it has
/// arrived (journaled as well-formed, under its session).
#[test]
fn a_complete_payload_without_eof_is_acted_on() {
    let env = Env::new();
    let cwd = env.home().to_path_buf();
    for cmd in HOOKS {
        let sid = unique_session();
        let p = payload(cmd, &sid, &cwd);
        let (out, _) = run_with_stdin(&env, cmd, Stdin::OpenPipe(p.to_string().as_bytes()));
        if cmd == "pre-tool-use" {
            assert!(deny_of(&out).is_some(), "{out}");
        }
        let evs = env.events(&sid);
        let received = evs.iter().find_map(|e| match &e.event {
            ov_engine::event::Event::HookReceived(h) => Some(h),
            _ => None,
        });
        let h = received.unwrap_or_else(|| panic!("{cmd}: nothing journaled"));
        assert_eq!(h.malformed, None, "{cmd}");
    }
}

/// A stdin that is open and silent, or endless zeros: every hook stops reading, journals
/// what it got as malformed, and exits 0 in budget.
#[test]
fn silent_or_endless_stdin_is_journaled_and_left() {
    for (name, input) in [("silent", Stdin::OpenPipe(b"")), ("zero", Stdin::Zero)] {
        for cmd in HOOKS {
            let env = Env::new();
            run_with_stdin(
                &env,
                cmd,
                match input {
                    Stdin::OpenPipe(b) => Stdin::OpenPipe(b),
                    Stdin::Zero => Stdin::Zero,
                },
            );
            let hs = hook_events(&env);
            assert_eq!(hs.len(), 1, "{name} {cmd}: {hs:?}");
            let m = hs[0].malformed.clone().unwrap_or_default();
            assert!(!m.is_empty(), "{name} {cmd}: not journaled as malformed");
            if name == "silent" {
                assert!(m.contains("stdin still open"), "{name} {cmd}: {m}");
            }
        }
    }
    // A payload cut off mid-value, stdin left open.
    let env = Env::new();
    run_with_stdin(
        &env,
        "stop",
        Stdin::OpenPipe(br#"{"sessionId":"sess_x","respo"#),
    );
    let m = hook_events(&env)[0].malformed.clone().unwrap_or_default();
    assert!(m.contains("stdin still open"), "{m}");
}

// ---- budgets and the shared back-off ----------------------------------------------------

/// A server that answers every request after `delay`, one thread per connection; it logs
/// each request line.
fn slow_server(delay: Duration) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    answering_server(
        delay,
        r#"{"status":"ok","result":{"user":"default"}}"#.to_owned(),
    )
}

/// A server that answers every request with `body` after `delay`, one thread per connection;
/// it logs each request line.
fn answering_server(
    delay: Duration,
    body: String,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader};
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", l.local_addr().expect("addr"));
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = log.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let seen = seen.clone();
            let body = body.clone();
            std::thread::spawn(move || {
                let mut r = BufReader::new(&s);
                let mut line = String::new();
                let _ = r.read_line(&mut line);
                seen.lock().expect("log").push(line.trim().to_owned());
                // The request's headers and body, so that closing never resets the reply.
                let mut len = 0usize;
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                    if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                }
                let _ = std::io::Read::read_exact(&mut r, &mut vec![0; len]);
                std::thread::sleep(delay);
                let mut w = &s;
                let _ = write!(
                    w,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (url, log)
}

/// A server taking 7 s per request: SessionStart stays within its budget (not 3 × 7 s), the
/// slowness starts the back-off, and the back-off holds for every session: a second session's
/// SessionStart and UserPromptSubmit do not ask that server again.
#[test]
fn a_slow_server_costs_one_budget_once_for_every_session() {
    let (url, log) = slow_server(Duration::from_secs(7));
    let mut env = Env::new();
    env.set("OPENVIKING_URL", &url);
    let cwd = env.home().to_path_buf();
    let first = unique_session();
    let (_, took) = timed_hook(
        &env,
        "session-start",
        &payload("session-start", &first, &cwd),
    );
    assert!(took < Duration::from_secs(7), "SessionStart took {took:?}");
    let unreachable = env
        .events(&first)
        .iter()
        .any(|e| matches!(e.event, ov_engine::event::Event::ServerUnreachable { .. }));
    assert!(unreachable, "a slow server was not noted");
    let shared = ov_engine::backoff::read(&env.state()).expect("the shared back-off");
    assert_eq!(shared.url, url);
    let asked = |log: &std::sync::Mutex<Vec<String>>| {
        log.lock()
            .expect("log")
            .iter()
            .filter(|l| l.contains("/system/status") || l.contains("/search/"))
            .count()
    };
    let before = asked(&log);
    let second = unique_session();
    timed_hook(
        &env,
        "session-start",
        &payload("session-start", &second, &cwd),
    );
    timed_hook(
        &env,
        "user-prompt-submit",
        &ups_payload(&second, &Turn::new("again"), &cwd),
    );
    assert_eq!(
        asked(&log),
        before,
        "a second session asked the slow server again"
    );
}

/// A back-off written while the clock was a day ahead (the server was down then) does not
/// keep recall off once the clock is right: the next prompt asks the server.
#[test]
fn a_back_off_dated_a_day_ahead_does_not_keep_recall_off() {
    let (url, log) = slow_server(Duration::ZERO);
    let mut env = Env::new();
    env.set("OPENVIKING_URL", &url);
    let cwd = env.home().to_path_buf();
    let day = 24 * 3600 * 1000;
    ov_engine::backoff::start(
        &env.state(),
        &url,
        ov_engine::store::now_ms() + day,
        30_000,
        "connection refused",
    );
    assert!(ov_engine::backoff::read(&env.state()).is_some_and(|b| b.url == url));
    let sid = unique_session();
    timed_hook(
        &env,
        "user-prompt-submit",
        &ups_payload(&sid, &Turn::new("after the clock was fixed"), &cwd),
    );
    let recalls = log
        .lock()
        .expect("log")
        .iter()
        .filter(|l| l.contains("/search/"))
        .count();
    assert!(
        recalls > 0,
        "recall stayed off: {:?}",
        log.lock().expect("log")
    );
}

// ---- output caps ------------------------------------------------------------------------

/// PreToolUse honours ZCode's `hooks.maxOutputBytes`: the denial fits under it (its reason
/// cut), and is still a denial.
#[test]
fn pre_tool_use_fits_the_harness_output_cap() {
    let env = Env::new();
    let cfg = env.home().join(".zcode/cli/config.json");
    std::fs::create_dir_all(cfg.parent().expect("dir")).expect("mkdir");
    std::fs::write(&cfg, r#"{"hooks":{"enabled":true,"maxOutputBytes":180}}"#).expect("write");
    let cwd = env.home().to_path_buf();
    let out = env.hook(
        "pre-tool-use",
        &payload("pre-tool-use", &unique_session(), &cwd),
    );
    assert!(out.len() <= 180, "{} bytes: {out}", out.len());
    assert!(deny_of(&out).is_some(), "{out}");
}

/// PreToolUse honours our own cap (`OPENVIKING_MAX_OUTPUT_BYTES`) like every other hook: a
/// denial whose reason is long is cut under it, and is still a denial.
#[test]
fn pre_tool_use_fits_our_output_cap() {
    let mut env = Env::new();
    env.set("OPENVIKING_MAX_OUTPUT_BYTES", "1024");
    let cwd = env.home().to_path_buf();
    for harness in ["zcode", "claude-code"] {
        let mut p = payload("pre-tool-use", &unique_session(), &cwd);
        p["tool_input"] =
            json!({"file_path": format!("viking://resources/{}", "a".repeat(10_000))});
        let out = env.run_with(
            &["--harness", harness, "pre-tool-use"],
            p.to_string().as_bytes(),
            &[],
        );
        assert_eq!(out.status.code(), Some(0));
        let out = String::from_utf8(out.stdout).expect("utf-8");
        assert!(out.len() <= 1024, "{harness}: {} bytes", out.len());
        assert!(deny_of(&out).is_some(), "{harness}: {out}");
    }
}

/// The recall block the server renders (its `digest`), through Claude Code's
/// UserPromptSubmit: the context injected.
fn claude_code_recall_of(digest: &str) -> String {
    let body = json!({"status": "ok", "result": {"digest": digest}}).to_string();
    let (url, _) = answering_server(Duration::ZERO, body);
    let mut env = Env::new();
    env.set("OPENVIKING_URL", &url);
    let cwd = env.home().to_path_buf();
    let sid = unique_session();
    let mut p = ups_payload(&sid, &Turn::new("recall"), &cwd);
    p["session_id"] = json!(sid);
    p["prompt"] = json!("what did we decide about the deploy");
    let out = env.run_with(
        &["--harness", "claude-code", "user-prompt-submit"],
        p.to_string().as_bytes(),
        &[],
    );
    assert_eq!(out.status.code(), Some(0));
    let out = String::from_utf8(out.stdout).expect("utf-8");
    context_of("UserPromptSubmit", &out, 32_768).expect("context injected")
}

/// Claude Code counts its 10,000-character context cap in characters: 9,000 characters of
/// multi-byte text (27,000 bytes) reach it whole.
#[test]
fn claude_code_gets_ten_thousand_characters_of_multi_byte_context() {
    let memory: String = "記憶"
        .repeat(2_250)
        .chars()
        .collect::<Vec<_>>()
        .chunks(100)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("\n");
    let ctx = claude_code_recall_of(&memory);
    assert!(ctx.chars().count() <= 10_000, "{}", ctx.chars().count());
    assert!(
        ctx.contains(&memory),
        "{} characters injected",
        ctx.chars().count()
    );
}

/// A recall block that is one line longer than the cap is cut at a character boundary, with
/// a marker, not dropped.
#[test]
fn one_long_recall_line_is_cut_not_dropped() {
    let memory = "長い一行".repeat(10_000);
    let ctx = claude_code_recall_of(&memory);
    assert!(ctx.chars().count() <= 10_000, "{}", ctx.chars().count());
    assert!(ctx.contains("[truncated]"), "{ctx}");
    let head = ctx.split("[truncated]").next().unwrap_or_default();
    assert!(
        head.chars().filter(|c| *c == '長').count() > 1_000,
        "{head}"
    );
}

// ---- the rollout ------------------------------------------------------------------------

/// A FIFO at the rollout path never blocks the worker (it holds the worker lock): the read is
/// recorded as a problem of the session, and the turn whose answer it never captured shows as
/// such in `drain` (and `ovreplay sessions`, `doctor`, which ask the same
/// `State::turns_uncaptured`).
#[test]
fn fifo_rollout_never_blocks_the_worker_and_shows_uncaptured() {
    let env = Env::new();
    let cwd = env.home().to_path_buf();
    let sid = unique_session();
    let rollout = env.rollout(&sid);
    std::fs::create_dir_all(rollout.parent().expect("dir")).expect("mkdir");
    mkfifo(&rollout);
    let turn = Turn::new("fifo");
    timed_hook(&env, "user-prompt-submit", &ups_payload(&sid, &turn, &cwd));
    let mut stop = stop_payload(&sid, &turn, &cwd);
    stop["responseText"] = json!(null);
    stop["responsePreview"] = json!(null);
    let t = Instant::now();
    let out = env.run_with(
        &["stop"],
        stop.to_string().as_bytes(),
        &[("OVHOOK_NO_DETACH", "1")],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(t.elapsed() < HOOK_BOUND, "the worker blocked on the FIFO");
    let state = env.state_of(&sid);
    assert!(
        state
            .problems
            .iter()
            .any(|p| p.contains("not a regular file")),
        "{:?}",
        state.problems
    );
    assert_eq!(state.turns_uncaptured(), vec![turn.id.as_str()]);
    let drain = env.run_with(&["drain"], b"", &[]);
    let text = String::from_utf8_lossy(&drain.stdout);
    assert!(text.contains("1 turn(s) not captured"), "{text}");
}

// ---- signals ----------------------------------------------------------------------------

/// Whether `pid` has a handler for `signal` (its `SigCgt` mask in /proc): the hook is past the
/// point where it installs them.
fn catches(pid: u32, signal: libc::c_int) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|m| m & (1u64 << (signal - 1)) != 0)
}

/// Sends `signal` to a running hook once it has its handlers, then its exit status.
fn stop_with(child: &mut std::process::Child, signal: libc::c_int) -> std::process::ExitStatus {
    let pid = child.id();
    let deadline = Instant::now() + HOOK_BOUND;
    while !catches(pid, signal) {
        assert!(
            Instant::now() < deadline,
            "the hook never installed its handlers"
        );
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the hook ended first"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        child.try_wait().expect("try_wait").is_none(),
        "the hook ended first"
    );
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, signal) }, 0);
    child.wait().expect("wait")
}

/// SIGTERM, SIGINT or SIGHUP to a hook that is still reading its stdin: exit status 0, on
/// every hook path (the harness would show any other status as an error).
#[test]
fn a_stopped_hook_exits_zero() {
    let env = Env::new();
    for cmd in [
        "session-start",
        "user-prompt-submit",
        "pre-tool-use",
        "stop",
        "session-end",
    ] {
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            for harness in ["zcode", "claude-code", "no-such-harness"] {
                let mut child = env
                    .command(&["--harness", harness, cmd])
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .expect("spawn");
                // stdin stays open: the hook is reading it.
                let stdin = child.stdin.take();
                let status = stop_with(&mut child, signal);
                drop(stdin);
                assert_eq!(
                    status.code(),
                    Some(0),
                    "{harness} {cmd} on signal {signal}: {status}"
                );
            }
        }
    }
}

/// A hook stopped while it waits on the server keeps what it journaled before: SessionStart
/// has journaled its event and waits for a server that never answers; SIGTERM ends it with
/// status 0 and the event is in the journal.
#[test]
fn a_hook_stopped_while_waiting_keeps_its_event() {
    let mut env = Env::new();
    env.set("OPENVIKING_URL", &hanging_server());
    let cwd = env.home().to_path_buf();
    let sid = unique_session();
    let mut child = env
        .command(&["session-start"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(payload("session-start", &sid, &cwd).to_string().as_bytes())
        .expect("payload");
    drop(stdin);
    let deadline = Instant::now() + HOOK_BOUND;
    while !ov_journal::is_journal(&env.journal_dir(&sid)) || env.events(&sid).is_empty() {
        assert!(Instant::now() < deadline, "nothing journaled");
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the hook ended first"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = stop_with(&mut child, libc::SIGTERM);
    assert_eq!(status.code(), Some(0), "{status}");
    let received = env.events(&sid).iter().any(|e| {
        matches!(&e.event, ov_engine::event::Event::HookReceived(h)
            if h.kind == Some(ov_engine::event::HookKind::SessionStart))
    });
    assert!(received, "the SessionStart event was lost");
}

/// A hook whose stdout nobody reads any more (the harness closed it) exits 0: the write fails
/// with EPIPE (SIGPIPE is ignored) and the hook goes on.
#[test]
fn a_hook_whose_stdout_is_closed_exits_zero() {
    let env = Env::new();
    let cwd = env.home().to_path_buf();
    for harness in ["zcode", "claude-code"] {
        let mut child = env
            .command(&["--harness", harness, "pre-tool-use"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        drop(child.stdout.take());
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(
                payload("pre-tool-use", &unique_session(), &cwd)
                    .to_string()
                    .as_bytes(),
            )
            .expect("payload");
        drop(stdin);
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(0), "{harness}: {status}");
    }
}

/// Every harness, every hook command, payloads no agent should send (nothing, not JSON, not
/// an object, wrong types, a transcript path that is a FIFO no one writes or a directory, a
/// `viking://` read): exit 0 within the bound, nothing on stderr's account on stdout (nothing,
/// or one JSON line), and the hook journaled. A harness added to the list is covered here.
#[test]
fn every_harness_answers_any_payload_with_exit_0_and_nothing_or_one_json_line() {
    let names = harness_names();
    assert!(names.len() >= 11, "{names:?}");
    let env = Env::new();
    let fifo = env.home().join("events-fifo");
    mkfifo(&fifo);
    let dir = env.home().display().to_string();
    let fifo = fifo.display().to_string();
    let hostile = |sid: &str, path: &str| {
        json!({
            "session_id": sid, "sessionId": sid, "conversation_id": sid, "conversationId": sid,
            "cwd": dir, "transcript_path": path, "transcriptPath": path,
            "agent_transcript_path": path, "prompt": {"not": "text"}, "message_id": 7,
            "tool_name": "Read", "toolName": "view",
            "tool_input": {"file_path": "viking://user/memories/profile.md"},
            "toolArgs": {"path": "viking://user/memories/profile.md"},
            "file_path": "viking://user/memories/profile.md",
        })
        .to_string()
        .into_bytes()
    };
    let commands = [
        "session-start",
        "user-prompt-submit",
        "pre-tool-use",
        "post-tool-use",
        "stop",
        "session-end",
        "pre-compact",
        "subagent-stop",
    ];
    for name in &names {
        let payloads: [(&str, Vec<u8>); 5] = [
            ("empty", Vec::new()),
            ("not json", b"{\"session_id\": ".to_vec()),
            ("array", b"[1,2,3]".to_vec()),
            ("fifo", hostile(&format!("h-{name}-fifo"), &fifo)),
            ("directory", hostile(&format!("h-{name}-dir"), &dir)),
        ];
        for cmd in commands {
            for (what, payload) in &payloads {
                let t = Instant::now();
                let out = env.run_with(&["--harness", name, cmd], payload, &[]);
                let took = t.elapsed();
                let case = format!("{name} {cmd} {what}");
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{case}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert!(took < HOOK_BOUND, "{case} took {took:?}");
                let stdout = String::from_utf8(out.stdout).expect("utf-8");
                if !stdout.is_empty() {
                    assert!(
                        stdout.ends_with('\n') && stdout.trim_end().lines().count() == 1,
                        "{case}: one line: {stdout:?}"
                    );
                    let parsed: Result<Value, _> = serde_json::from_str(stdout.trim_end());
                    assert!(parsed.is_ok(), "{case}: not JSON: {stdout:?}");
                }
            }
        }
    }
    wait_all_idle(&env);
    // Every invocation was journaled (the hostile ones under their own sessions), but
    // PostToolUse's: with `capture.tools` off nothing of a tool is journaled.
    let hooks = all_events(&env)
        .iter()
        .filter(|e| matches!(e.event, ov_engine::event::Event::HookReceived(_)))
        .count();
    assert_eq!(hooks, names.len() * (commands.len() - 1) * 5);
}
