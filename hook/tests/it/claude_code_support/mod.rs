//! The real Claude Code CLI (`@anthropic-ai/claude-code`, pinned in `scripts/claude-code.sh`,
//! cached under `target/`) run headless against the scripted model server
//! (`testdata/agents/claude-code/fake_anthropic.py`) in a temporary HOME.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The cached `claude` binary, installing it once; None when npm is absent.
pub fn claude_bin() -> Option<PathBuf> {
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
            crate::common::cli_missing("Claude Code CLI", "npm is not installed");
            None
        }
        other => panic!("scripts/claude-code.sh install failed ({other:?})"),
    }
}

/// The scripted model server; killed on drop.
pub struct ModelServer {
    child: Child,
    pub port: u16,
    log: PathBuf,
    scenario: PathBuf,
}

impl ModelServer {
    pub fn start(dir: &Path) -> ModelServer {
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

    pub fn script(&self, v: &Value) {
        std::fs::write(&self.scenario, v.to_string()).expect("scenario");
    }

    /// Every `/v1/messages` request body so far.
    pub fn requests(&self) -> Vec<Value> {
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
pub struct Machine {
    pub bin: PathBuf,
    pub home: PathBuf,
    pub work: PathBuf,
    pub port: u16,
    /// Variables set on top of the clean environment (hooks inherit them).
    pub extra: Vec<(String, String)>,
}

impl Machine {
    /// `claude -p PROMPT [--resume SID] --output-format json`; the result JSON and the
    /// wall time of the whole process.
    pub fn turn(&self, prompt: &str, resume: Option<&str>) -> (Value, Duration) {
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
            .envs(self.extra.iter().map(|(k, v)| (k, v)))
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

/// Pids of processes running `exe` with `HOME=home`.
pub fn ours_running(exe: &Path, home: &Path) -> Vec<u32> {
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

/// On a failing test, prints what ovhook under `home` logged and journaled (the default state
/// root, `~/.openviking/ovhook`), so a failure on a loaded CI machine says why.
pub struct ReportOnFailure {
    pub home: PathBuf,
}

impl Drop for ReportOnFailure {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let root = self.home.join(".openviking/ovhook");
        let log = std::fs::read_to_string(root.join("ovhook.log")).unwrap_or_default();
        eprintln!("---- ovhook.log ----\n{log}");
        for dir in ov_engine::store::session_dirs(&root) {
            let Ok(store) = ov_engine::store::SessionStore::open(&dir) else {
                continue;
            };
            eprintln!("---- journal {} ----", dir.display());
            for (_, e) in store.events().unwrap_or_default() {
                match e {
                    Ok(env) => eprintln!("{} {:?}", env.at_ms, env.event),
                    Err(err) => eprintln!("(damaged: {err})"),
                }
            }
        }
    }
}
