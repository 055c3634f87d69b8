//! The real Claude Code CLI (`@anthropic-ai/claude-code`, pinned in
//! `scripts/claude-code.sh`, cached under `target/`) running headless against the
//! scripted model server (`testdata/agents/claude-code/fake_anthropic.py`) and the real
//! OpenViking server, with ovhook installed by `ovhook install --harness claude-code`
//! into a temporary HOME. Skipped, with a message, only when npm is absent.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The cached `claude` binary, installing it once; None when npm is absent.
fn claude_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("OVHOOK_CLAUDE_CODE_BIN").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let out = Command::new("bash")
        .arg(repo().join("scripts/claude-code.sh"))
        .arg("install")
        .stderr(Stdio::inherit())
        .output()
        .expect("run scripts/claude-code.sh");
    match out.status.code() {
        Some(0) => Some(PathBuf::from(
            String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        )),
        Some(3) => {
            eprintln!(
                "SKIPPED: npm is not installed, so the real Claude Code CLI cannot be installed"
            );
            None
        }
        other => panic!("scripts/claude-code.sh install failed ({other:?})"),
    }
}

/// The scripted model server; killed on drop.
struct ModelServer {
    child: Child,
    port: u16,
    log: PathBuf,
    scenario: PathBuf,
}

impl ModelServer {
    fn start(dir: &Path) -> ModelServer {
        let log = dir.join("requests.jsonl");
        let scenario = dir.join("scenario.json");
        let mut child = Command::new("python3")
            .arg(repo().join("testdata/agents/claude-code/fake_anthropic.py"))
            .args(["--port", "0", "--log"])
            .arg(&log)
            .arg("--scenario")
            .arg(&scenario)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 fake_anthropic.py");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("LISTENING line");
        let port = first
            .trim()
            .strip_prefix("LISTENING ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("model server said {first:?}"));
        ModelServer {
            child,
            port,
            log,
            scenario,
        }
    }

    fn script(&self, v: &Value) {
        std::fs::write(&self.scenario, v.to_string()).expect("scenario");
    }

    /// Every `/v1/messages` request body so far.
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["path"] == "/v1/messages")
            .map(|v| v["body"].clone())
            .collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One headless Claude Code machine: HOME, project folder, the CLI.
struct Machine {
    bin: PathBuf,
    home: PathBuf,
    work: PathBuf,
    port: u16,
}

impl Machine {
    /// `claude -p PROMPT [--resume SID] --output-format json`; the result JSON and the
    /// wall time of the whole process.
    fn turn(&self, prompt: &str, resume: Option<&str>) -> (Value, Duration) {
        let tmp = self.home.join("tmp");
        std::fs::create_dir_all(&tmp).expect("tmp");
        let mut cmd = Command::new(&self.bin);
        cmd.arg("-p").arg(prompt);
        if let Some(sid) = resume {
            cmd.args(["--resume", sid]);
        }
        cmd.args(["--output-format", "json"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", self.port),
            )
            .env("ANTHROPIC_API_KEY", "test")
            .env("CLAUDE_CODE_TMPDIR", &tmp)
            .env("TMPDIR", &tmp)
            .env("XDG_RUNTIME_DIR", &tmp)
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .current_dir(&self.work)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let start = Instant::now();
        let child = cmd.spawn().expect("spawn claude");
        let pid = child.id();
        let watchdog = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(180));
            // SAFETY-free: kill(2) on the pid we spawned, if it is still running.
            let _ = Command::new("kill").arg(pid.to_string()).status();
        });
        let out = child.wait_with_output().expect("claude output");
        let took = start.elapsed();
        drop(watchdog);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "claude -p {prompt:?}: {e}: stdout {stdout} stderr {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert_eq!(v["is_error"], false, "{v}");
        (v, took)
    }
}

/// Writes `content` at `uri` for one account and user (indexed before it returns).
fn seed(url: &str, account: &str, user: &str, uri: &str, content: &str) {
    let http = reqwest::blocking::Client::new();
    for mode in ["replace", "create"] {
        let r = http
            .post(format!("{url}/api/v1/content/write"))
            .header("X-OpenViking-Account", account)
            .header("X-OpenViking-User", user)
            .json(&json!({"uri": uri, "content": content, "mode": mode, "wait": true}))
            .timeout(Duration::from_secs(120))
            .send()
            .expect("content/write");
        if r.status().is_success() {
            return;
        }
    }
    panic!("could not seed {uri}");
}

/// Pids of processes running `exe` with `HOME=home`.
fn ours_running(exe: &Path, home: &Path) -> Vec<u32> {
    let exe = std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_owned());
    let needle = format!("HOME={}", home.display());
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let runs_exe = std::fs::read_link(entry.path().join("exe")).is_ok_and(|e| e == exe);
        let env = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if runs_exe && env.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
            out.push(pid);
        }
    }
    out
}

#[test]
fn real_claude_code_turns_are_injected_guarded_and_captured_exactly_once() {
    let Some(url) = common::server_url() else {
        return;
    };
    let Some(bin) = claude_bin() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(work.join("notes.md"), "# Notes\nwater the plants\n").expect("notes");
    let account = format!(
        "acct_{}",
        common::unique_turn().replace('-', "")[5..17].to_owned()
    );
    let user = "cc_e2e";
    let profile_token = format!("Profiletoken{}", &account[5..]);
    let memory_token = format!("zyxcolour{}", &account[5..]);
    seed(
        &url,
        &account,
        user,
        "viking://~/memories/profile.md",
        &format!("# Profile\nName: {profile_token}\n"),
    );
    seed(
        &url,
        &account,
        user,
        "viking://~/memories/preferences/editor.md",
        &format!("The user prefers the Helix editor ({memory_token})."),
    );

    let ovhook = PathBuf::from(env!("CARGO_BIN_EXE_ovhook"));
    let install = Command::new(&ovhook)
        .args(["install", "--harness", "claude-code", "--url", &url])
        .args(["--account", &account, "--user", user])
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("ovhook install");
    assert!(install.status.success(), "{install:?}");

    let server = ModelServer::start(dir.path());
    let m = Machine {
        bin,
        home: home.clone(),
        work,
        port: server.port,
    };
    // Turn 1: a Read of a viking:// path (denied), then a two-block answer.
    server.script(&json!({
        "read_path": "viking://~/memories/preferences/editor.md",
        "answer": ["First block CC-E2E-A.", "Second block CC-E2E-B."]
    }));
    let (r1, _) = m.turn(
        "Which editor do I like? Read viking://~/memories/preferences/editor.md",
        None,
    );
    let sid = r1["session_id"].as_str().expect("session id").to_owned();
    // Turns 2 and 3: the same prompt twice, resumed.
    server.script(&json!({"answer": ["fine, first"]}));
    m.turn("yes", Some(&sid));
    server.script(&json!({"answer": ["fine, second"]}));
    m.turn("yes", Some(&sid));
    // Turn 4: a tool-using turn whose Read is allowed.
    server.script(
        &json!({"read_path": "notes.md", "answer": ["The notes say to water the plants."]}),
    );
    m.turn("What do my notes say?", Some(&sid));

    // Nothing of ours is left running once the detached workers are done.
    let deadline = Instant::now() + Duration::from_secs(90);
    while !ours_running(&ovhook, &home).is_empty() {
        assert!(
            Instant::now() < deadline,
            "ovhook still running: {:?}",
            ours_running(&ovhook, &home)
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // What the model saw.
    let bodies: Vec<String> = server.requests().iter().map(Value::to_string).collect();
    assert!(!bodies.is_empty());
    assert!(
        bodies[0].contains(&profile_token),
        "the profile reaches the first model call"
    );
    assert!(
        bodies.iter().any(|b| b.contains(&memory_token)),
        "the seeded memory is injected as context"
    );
    let denied = server.requests().iter().any(|b| {
        b["messages"].as_array().into_iter().flatten().any(|msg| {
            msg["content"].as_array().into_iter().flatten().any(|blk| {
                blk["type"] == "tool_result"
                    && blk["is_error"] == true
                    && blk
                        .to_string()
                        .contains("viking:// URIs are OpenViking virtual paths")
            })
        })
    });
    assert!(
        denied,
        "the viking:// Read is denied and the model sees why"
    );

    // What the server holds: every turn once, the right prompt, the whole answer.
    let client = ov_engine::client::Client::new(ov_engine::client::ClientConfig {
        base_url: url.clone(),
        account: Some(account.clone()),
        user: Some(user.to_owned()),
        ..ov_engine::client::ClientConfig::default()
    })
    .expect("client");
    let remote = ov_engine::ids::remote_session_id("cc-", &sid);
    let held = client.session_messages(&remote).expect("messages");
    let mut got: Vec<(String, String)> = held
        .iter()
        .map(|m| (m.role.clone(), m.content.clone()))
        .collect();
    got.sort();
    let turn1 = got
        .iter()
        .find(|(r, c)| r == "assistant" && c.starts_with("First block"))
        .map(|(_, c)| c.clone())
        .unwrap_or_default();
    assert!(
        turn1.starts_with("First block CC-E2E-A.\n\nSecond block CC-E2E-B. [tool_result is_error=True: viking:// URIs"),
        "the whole two-block answer: {turn1:?}"
    );
    let mut want = vec![
        (
            "user".to_string(),
            "Which editor do I like? Read viking://~/memories/preferences/editor.md".to_string(),
        ),
        ("assistant".to_string(), turn1.clone()),
        ("user".to_string(), "yes".to_string()),
        ("assistant".to_string(), "fine, first".to_string()),
        ("user".to_string(), "yes".to_string()),
        ("assistant".to_string(), "fine, second".to_string()),
        ("user".to_string(), "What do my notes say?".to_string()),
    ];
    let notes = got
        .iter()
        .find(|(r, c)| r == "assistant" && c.starts_with("The notes say"))
        .map(|(_, c)| c.clone())
        .unwrap_or_default();
    assert!(
        notes.contains("[tool_result is_error=False: 1\t# Notes"),
        "the model read the file: {notes:?}"
    );
    want.push(("assistant".to_string(), notes));
    want.sort();
    assert_eq!(got, want, "every turn on the server exactly once");
    assert!(held.iter().all(|m| m.turn_id.is_some()));
}
