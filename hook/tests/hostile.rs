//! Hostile inputs through the real `ovhook` binary: a cloned repository's files (FIFOs,
//! terminals, huge git configs, budgets it tries to raise), stdin that never closes, slow
//! servers. Every hook must exit 0 within its budget whatever it is given.
//!
//! The "hanging" and "slow" servers are loopback listeners: faults the real server cannot
//! produce on demand.

mod common;

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

/// The peak memory of the hooks run so far by this test process (`RUSAGE_CHILDREN`), in KiB.
fn children_max_rss_kib() -> i64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) },
        0
    );
    ru.ru_maxrss
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
        timed_hook(&env, cmd, &payload(cmd, &unique_session(), &root));
    }
    let rss = children_max_rss_kib();
    assert!(rss < 100 * 1024, "a hook peaked at {rss} KiB");
}
