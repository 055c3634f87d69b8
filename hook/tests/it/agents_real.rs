//! The real Qwen Code, Codex, GitHub Copilot, Gemini, OpenCode and Kilo Code CLIs (pinned, cached under
//! `target/agents` by `scripts/agent-clis.sh`) run headless and offline against the scripted
//! model server (`testdata/agents/fake_openai.py`, which also speaks the Gemini API), with
//! ovhook installed by
//! `ovhook install --harness <name>` into a temporary HOME, and the real OpenViking server.
//!
//! Per agent, four turns, each its own CLI invocation (the later ones resume the session):
//! a tool-using turn with a two-part answer, "yes" twice, and a file or shell tool call on
//! a `viking://` URI. Asserted from the model server's request log and the OpenViking
//! server: a seeded memory reaches the model as recalled context; the `viking://` call is
//! denied and the model sees why; every turn is on the server exactly once, with its prompt
//! and its whole final answer; no worker of ours is left running.
//!
//! Nothing bypasses an agent's own checks: Codex runs our hooks because the install recorded the
//! user's trust (`--trust`), as Codex's `/hooks` screen would; Gemini runs them because the
//! project folder is trusted in `~/.gemini/trustedFolders.json`, as its folder-trust prompt
//! records it; OpenCode and Kilo Code run our plugin shim because the install named it in their
//! config's `plugin` list.
//!
//! A CLI that is not installed fails its test unless `OVHOOK_SKIP_CLI_TESTS=1`.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::Env;
use serde_json::{json, Value};

/// Upper bound of one CLI invocation (only catches a hang; a turn takes seconds).
const CLI_TIMEOUT: Duration = Duration::from_secs(240);

pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The pinned CLI, or None (with a message) when it is not installed.
pub(crate) fn cli(agent: &str) -> Option<PathBuf> {
    let bin = repo()
        .join("target/agents")
        .join(agent)
        .join("bin")
        .join(agent);
    if bin.is_file() {
        return Some(bin);
    }
    common::cli_missing(
        &format!("{agent} CLI"),
        &format!("{} does not exist", bin.display()),
    );
    None
}

/// The scripted model server, stopped on drop.
pub(crate) struct ModelServer {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl ModelServer {
    pub(crate) fn start(dir: &Path, script: &Value) -> ModelServer {
        let script_path = dir.join("script.json");
        std::fs::write(&script_path, script.to_string()).expect("script");
        let log = dir.join("requests.jsonl");
        let mut child = Command::new("python3")
            .arg(repo().join("testdata/agents/fake_openai.py"))
            .args(["--port", "0", "--log"])
            .arg(&log)
            .arg("--script")
            .arg(&script_path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs the fake model server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("LISTENING line");
        let port = line
            .strip_prefix("LISTENING ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("fake model server said {line:?}"));
        ModelServer { child, port, log }
    }

    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The Gemini API's base (the SDK adds `/v1beta/models/…`).
    fn gemini_base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub(crate) fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where every run seeds its memory on the shared server: `kumquat-<agent>-<pid>.md`.
const SEEDS: &str = "viking://user/default/memories/preferences";

/// Removes the memories earlier runs seeded whose test process is gone: recall returns the
/// top few of many near-identical facts, and a run's own fact must not be crowded out by the
/// leftovers of runs that ended (a run still going, in another checkout, keeps its own).
fn forget_stale_seeds(url: &str) {
    let http = reqwest::blocking::Client::new();
    let Ok(listing) = http
        .get(format!("{url}/api/v1/fs/ls"))
        .query(&[
            ("uri", SEEDS),
            ("output", "original"),
            ("node_limit", "5000"),
        ])
        .timeout(Duration::from_secs(60))
        .send()
        .and_then(|r| r.json::<Value>())
    else {
        return;
    };
    let names: Vec<String> = listing["result"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["name"].as_str().map(str::to_owned))
        .collect();
    for name in names {
        let Some(pid) = name
            .strip_prefix("kumquat-")
            .and_then(|n| n.strip_suffix(".md"))
            .and_then(|n| n.rsplit('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        common::forget(url, &format!("{SEEDS}/{name}"));
    }
}

/// Runs `cmd` to completion with `stdin` as its input (killed and failed past [`CLI_TIMEOUT`]).
pub(crate) fn run(mut cmd: Command, what: &str, stdin: Option<&str>) -> Output {
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        use std::io::Write;
        pipe.write_all(text.as_bytes())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(CLI_TIMEOUT) {
        Ok(out) => out.unwrap_or_else(|e| panic!("{what}: {e}")),
        Err(_) => {
            // SAFETY: signalling the child we spawned, by its pid.
            unsafe {
                libc::kill(id as libc::pid_t, libc::SIGKILL);
            }
            panic!("{what}: no exit within {CLI_TIMEOUT:?}");
        }
    }
}

/// One agent under test.
struct Agent {
    name: &'static str,
    /// The remote-session prefix of its harness.
    prefix: &'static str,
    /// The tool call reading a file, by path.
    read: fn(&Path) -> Value,
    /// The tool call on a `viking://` URI that the guard denies.
    viking: Value,
}

const PROMPTS: [&str; 4] = [
    "Which tabs do I like in the kumquat editor? Please read my notes.",
    "yes",
    "yes",
    "Open my viking memory",
];

impl Agent {
    fn command(&self, bin: &Path, env: &Env, work: &Path, model: &ModelServer) -> Command {
        let mut cmd = Command::new(bin);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", env.home())
            .env("OVHOOK_STATE_DIR", env.state())
            .env("TMPDIR", env.home().join("tmp"))
            .current_dir(work);
        for (k, v) in &env.vars {
            cmd.env(k, v);
        }
        match self.name {
            "qwen" => {
                cmd.env("OPENAI_BASE_URL", model.base_url())
                    .env("OPENAI_API_KEY", "test")
                    .env("OPENAI_MODEL", "fake-model")
                    .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1");
            }
            "codex" => {
                cmd.env("FAKE_MODEL_API_KEY", "test");
            }
            "gemini" => {
                cmd.env("GOOGLE_GEMINI_BASE_URL", model.gemini_base_url())
                    .env("GEMINI_API_KEY", "test");
            }
            "opencode" | "kilo" => {
                cmd.env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                    .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                    .env("KILO_DISABLE_MODELS_FETCH", "1")
                    .env("KILO_DISABLE_AUTOUPDATE", "1");
            }
            _ => {
                cmd.env("COPILOT_OFFLINE", "true")
                    .env("COPILOT_PROVIDER_BASE_URL", model.base_url())
                    .env("COPILOT_PROVIDER_TYPE", "openai")
                    .env("COPILOT_PROVIDER_API_KEY", "test")
                    .env("COPILOT_MODEL", "fake-model");
            }
        }
        cmd
    }

    /// Runs one turn; returns the session id once known.
    fn turn(
        &self,
        bin: &Path,
        env: &Env,
        work: &Path,
        model: &ModelServer,
        prompt: &str,
        session: Option<&str>,
    ) -> String {
        let mut cmd = self.command(bin, env, work, model);
        // OpenCode and Kilo wrap an argument holding a space in quotes; stdin is taken as is.
        let mut stdin = None;
        match self.name {
            "qwen" => {
                cmd.args(["--auth-type", "openai", "--yolo", "-o", "json"]);
                if let Some(s) = session {
                    cmd.args(["--resume", s]);
                }
                cmd.arg(prompt);
            }
            "codex" => {
                cmd.args(["exec", "--skip-git-repo-check", "--json"]);
                if let Some(s) = session {
                    cmd.args(["resume", s]);
                }
                cmd.arg(prompt);
            }
            "gemini" => {
                cmd.args(["-p", prompt, "--yolo", "-o", "json"]);
                if let Some(s) = session {
                    cmd.args(["--resume", s]);
                }
            }
            "opencode" | "kilo" => {
                cmd.args(["run", "--format", "json"]);
                if let Some(s) = session {
                    cmd.args(["--session", s]);
                }
                stdin = Some(prompt);
            }
            _ => {
                cmd.args(["-p", prompt, "--allow-all-tools"]);
                if let Some(s) = session {
                    cmd.arg(format!("--resume={s}"));
                }
            }
        }
        let out = run(cmd, &format!("{} {prompt:?}", self.name), stdin);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{} {prompt:?} exited {:?}\n{stdout}\n{}",
            self.name,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        if self.name == "codex" {
            // Codex reports a hook it had to change (a SessionEnd timeout over its 3 s) as an
            // error item on every run: our install stays within its limits.
            let errors: Vec<&str> = stdout
                .lines()
                .filter(|l| {
                    serde_json::from_str::<Value>(l).is_ok_and(|e| {
                        e["item"]["type"] == "error"
                            && e["item"]["message"]
                                .as_str()
                                .is_some_and(|m| m.contains("hook"))
                    })
                })
                .collect();
            assert!(errors.is_empty(), "codex reported hook errors: {errors:#?}");
        }
        if let Some(s) = session {
            return s.to_owned();
        }
        match self.name {
            "qwen" => {
                let events: Value = serde_json::from_str(&stdout).expect("qwen -o json");
                events
                    .as_array()
                    .and_then(|a| a.iter().find(|e| e["type"] == "result"))
                    .and_then(|r| r["session_id"].as_str())
                    .expect("session_id")
                    .to_owned()
            }
            "gemini" => serde_json::from_str::<Value>(&stdout)
                .ok()
                .and_then(|v| v["session_id"].as_str().map(str::to_owned))
                .unwrap_or_else(|| panic!("no session_id in gemini's output: {stdout}")),
            "codex" => stdout
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|e| e["type"] == "thread.started")
                .and_then(|e| e["thread_id"].as_str().map(str::to_owned))
                .expect("thread.started"),
            "opencode" | "kilo" => stdout
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find_map(|e| e["sessionID"].as_str().map(str::to_owned))
                .unwrap_or_else(|| panic!("no sessionID in {}'s output: {stdout}", self.name)),
            _ => format!("{stdout}{}", String::from_utf8_lossy(&out.stderr))
                .split("--resume=")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .map(str::to_owned)
                .unwrap_or_else(|| panic!("no session id in copilot's output: {stdout}")),
        }
    }

    fn run_test(&self) {
        let Some(url) = common::server_url() else {
            return;
        };
        let Some(bin) = cli(self.name) else {
            return;
        };
        let env = Env::with_url(&url);
        let work = env.home().join("work");
        std::fs::create_dir_all(&work).expect("work");
        std::fs::create_dir_all(env.home().join("tmp")).expect("tmp");
        let notes = work.join("notes.md");
        std::fs::write(&notes, "# Notes\nNOTE-CONTENT-42: water the plants.\n").expect("notes");

        // A memory only this run's prompt recalls.
        let marker = format!("{}-{}", self.name, std::process::id());
        let fact = format!("The user prefers {marker}-striped tabs in the kumquat editor.");
        forget_stale_seeds(&url);
        let seeded = common::Seeded {
            url: url.clone(),
            uri: format!("{SEEDS}/kumquat-{marker}.md"),
        };
        common::seed(&url, &seeded.uri, &fact);

        let dir = env.home().join("model");
        std::fs::create_dir_all(&dir).expect("model dir");
        let model = ModelServer::start(
            &dir,
            &json!({"rules": [
                {"match": "read my notes", "tool_call": (self.read)(&notes),
                 "tool_text": "Let me read that file.", "final": ["NOTES-ANSWER part one. ", "Part two."]},
                {"match": "viking memory", "tool_call": self.viking, "final": ["VIKING-ANSWER"]},
                {"final": ["PLAIN-ANSWER first part. ", "Second part."]}]}),
        );
        if self.name == "codex" {
            let codex = env.home().join(".codex");
            std::fs::create_dir_all(&codex).expect(".codex");
            std::fs::write(
                codex.join("config.toml"),
                format!(
                    "model = \"fake-model\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
                     sandbox_mode = \"danger-full-access\"\n\n[model_providers.fake]\nname = \"fake\"\n\
                     base_url = \"{}\"\nwire_api = \"responses\"\nenv_key = \"FAKE_MODEL_API_KEY\"\n",
                    model.base_url()
                ),
            )
            .expect("config.toml");
        }
        if self.name == "gemini" {
            // The user's own settings: an API key as the auth type (the base URL alone selects
            // a gateway, which `-p` refuses), and the project folder trusted as Gemini's
            // folder-trust prompt records it.
            let gemini = env.home().join(".gemini");
            std::fs::create_dir_all(&gemini).expect(".gemini");
            std::fs::write(
                gemini.join("settings.json"),
                json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
            )
            .expect("settings.json");
            std::fs::write(
                gemini.join("trustedFolders.json"),
                json!({ work.display().to_string(): "TRUST_FOLDER" }).to_string(),
            )
            .expect("trustedFolders.json");
        }
        if let Some((folder, file)) = match self.name {
            "opencode" => Some(("opencode", "opencode.json")),
            "kilo" => Some(("kilo", "kilo.json")),
            _ => None,
        } {
            // The user's own config: the loopback model as a custom OpenAI-compatible provider.
            let dir = env.home().join(".config").join(folder);
            std::fs::create_dir_all(&dir).expect("config dir");
            let config = json!({
                "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
                    "options": {"baseURL": model.base_url(), "apiKey": "test"},
                    "models": {"fake-model": {"name": "Fake Model"}}}},
                "model": "fake/fake-model", "small_model": "fake/fake-model"});
            std::fs::write(dir.join(file), config.to_string()).expect("config");
        }

        // Installed as a user would: for Codex, consenting to trust our hooks (Codex runs no
        // untrusted hook and says nothing), never bypassing Codex's trust check.
        let home = env.home().display().to_string();
        let mut install = vec!["install", "--harness", self.name, "--home", &home];
        if self.name == "codex" {
            install.push("--trust");
        }
        let out = env.run_with(&install, b"", &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "install: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );

        // The turns; the request log split per turn.
        let mut session: Option<String> = None;
        let mut per_turn: Vec<Vec<Value>> = Vec::new();
        for prompt in PROMPTS {
            let before = model.requests().len();
            let sid = self.turn(&bin, &env, &work, &model, prompt, session.as_deref());
            session = Some(sid);
            per_turn.push(model.requests().split_off(before));
        }
        let sid = session.expect("session id");

        // Recall: the seeded memory reached the model in the first turn's first request (side
        // calls without tools, like Gemini's routing call, are not the turn's).
        let first = per_turn[0]
            .iter()
            .find(|r| r["answer"]["label"] != "side")
            .expect("a model request in turn 1");
        assert!(
            first["body"].to_string().contains(&marker),
            "the recalled memory did not reach the model; log:\n{}",
            std::fs::read_to_string(env.state().join("ovhook.log")).unwrap_or_default()
        );

        // Guard: the viking:// call was denied and the model saw why.
        let denied = per_turn[3]
            .iter()
            .find(|r| r["answer"]["label"] == "final-after-tool")
            .expect("the model answered after the denied call");
        let seen = denied["answer"]["text"].as_str().unwrap_or("");
        assert!(seen.contains("OpenViking MCP"), "the model saw: {seen}");

        // The whole final answer of each turn, as the model gave it.
        let answers: Vec<String> = per_turn
            .iter()
            .map(|reqs| {
                reqs.iter()
                    .rev()
                    .find(|r| r["answer"]["label"] == "final-after-tool")
                    .or_else(|| reqs.iter().find(|r| r["answer"]["label"] == "final"))
                    .and_then(|r| r["answer"]["text"].as_str())
                    .expect("a final answer")
                    .trim()
                    .to_owned()
            })
            .collect();
        assert_eq!(answers[1], "PLAIN-ANSWER first part. Second part.");

        // Every turn on the server exactly once, prompt and whole answer.
        common::wait_all_idle(&env);
        let remote = ov_engine::ids::remote_session_id(self.prefix, &sid);
        let client = common::client(&url);
        let deadline = Instant::now() + Duration::from_secs(60);
        let held = loop {
            let held = client.session_messages(&remote).unwrap_or_default();
            if held.len() >= 2 * PROMPTS.len() || Instant::now() > deadline {
                break held;
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        let shown: Vec<(String, Option<String>, String)> = held
            .iter()
            .map(|m| (m.role.clone(), m.turn_id.clone(), m.content.clone()))
            .collect();
        assert_eq!(held.len(), 2 * PROMPTS.len(), "{remote}: {shown:#?}");
        for (i, (prompt, answer)) in PROMPTS.iter().zip(&answers).enumerate() {
            let user = held.get(2 * i).expect("user");
            let assistant = held.get(2 * i + 1).expect("assistant");
            assert_eq!(
                (user.role.as_str(), user.content.as_str()),
                ("user", *prompt),
                "{shown:#?}"
            );
            assert_eq!(
                (assistant.role.as_str(), assistant.content.trim()),
                ("assistant", answer.as_str()),
                "{shown:#?}"
            );
            assert!(
                user.turn_id.is_some() && user.turn_id == assistant.turn_id,
                "{shown:#?}"
            );
        }
        let turns: std::collections::HashSet<_> = held.iter().map(|m| &m.turn_id).collect();
        assert_eq!(
            turns.len(),
            PROMPTS.len(),
            "\"yes\" twice is two turns: {shown:#?}"
        );
        common::wait_all_idle(&env);
        // The transcript the agent's Stop names is journaled, and it is the file read last.
        if matches!(self.name, "copilot" | "gemini") {
            let named = env.state_of(&sid).transcript_path;
            assert!(named.is_some(), "no Stop named the transcript");
            let last_read = env
                .events(&sid)
                .into_iter()
                .rev()
                .find_map(|e| match e.event {
                    ov_engine::event::Event::RolloutRead { path, .. } => Some(path),
                    _ => None,
                });
            assert_eq!(last_read, named);
        }
    }
}

#[test]
fn qwen_code_real_cli() {
    Agent {
        name: "qwen",
        prefix: "qw-",
        read: |p| json!({"name": "read_file", "arguments": {"file_path": p}}),
        // read_file rejects a viking:// path itself; glob hands it to the hook.
        viking: json!({"name": "glob", "arguments": {"pattern": "viking://user/memories/*.md"}}),
    }
    .run_test();
}

#[test]
fn codex_real_cli() {
    Agent {
        name: "codex",
        prefix: "cx-",
        read: |p| json!({"name": "exec_command", "arguments": {"cmd": format!("cat {}", p.display())}}),
        viking: json!({"name": "exec_command", "arguments": {"cmd": "cat viking://user/memories/profile.md"}}),
    }
    .run_test();
}

#[test]
fn copilot_real_cli() {
    Agent {
        name: "copilot",
        prefix: "gh-",
        read: |p| json!({"name": "view", "arguments": {"path": p}}),
        viking: json!({"name": "view", "arguments": {"path": "viking://user/memories/profile.md"}}),
    }
    .run_test();
}

#[test]
fn gemini_cli_real_cli() {
    Agent {
        name: "gemini",
        prefix: "gm-",
        read: |p| json!({"name": "read_file", "arguments": {"file_path": p}}),
        viking: json!({"name": "read_file", "arguments": {"file_path": "viking://user/memories/profile.md"}}),
    }
    .run_test();
}

#[test]
fn opencode_real_cli() {
    Agent {
        name: "opencode",
        prefix: "oc-",
        read: |p| json!({"name": "read", "arguments": {"filePath": p}}),
        viking: json!({"name": "read", "arguments": {"filePath": "viking://user/memories/profile.md"}}),
    }
    .run_test();
}

#[test]
fn kilo_real_cli() {
    Agent {
        name: "kilo",
        prefix: "kc-",
        read: |p| json!({"name": "read", "arguments": {"filePath": p}}),
        viking: json!({"name": "read", "arguments": {"filePath": "viking://user/memories/profile.md"}}),
    }
    .run_test();
}
