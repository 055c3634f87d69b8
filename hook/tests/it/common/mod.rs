//! Shared by the hook integration tests: one fake machine ([`Env`]) on which the real `ovhook`
//! binary runs as an agent runs it (payload on stdin, a clean environment) or as a user runs
//! install, uninstall and doctor; ZCode's rollout written by hand in the `model_io` format, the
//! journal read back, and the real OpenViking server (`OVHOOK_TEST_URL`) read back.
#![allow(dead_code)] // NOTE: each test binary uses a different subset.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ov_engine::event::{Envelope, Event};
use ov_engine::projector::State;
use ov_engine::store::SessionStore;
use serde_json::{json, Value};

pub mod copilot_recorded;

/// Upper bound of one hook process (hooks are bounded; this only catches a hang).
const HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The URL of the shared real OpenViking server, or `None` when the caller opted out with
/// `OVHOOK_SKIP_SERVER_TESTS=1`. Panics (fails the test loudly) when neither is set.
pub fn server_url() -> Option<String> {
    if let Some(u) = std::env::var("OVHOOK_TEST_URL")
        .ok()
        .filter(|u| !u.is_empty())
    {
        return Some(u.trim_end_matches('/').to_owned());
    }
    if std::env::var("OVHOOK_SKIP_SERVER_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("OVHOOK_TEST_URL unset and OVHOOK_SKIP_SERVER_TESTS=1: skipping");
        return None;
    }
    panic!(
        "this test needs the real OpenViking server: set OVHOOK_TEST_URL (scripts/openviking-server.sh start) \
         or OVHOOK_SKIP_SERVER_TESTS=1 to skip it"
    );
}

/// A real agent CLI a test needs is not installed. The test skips only when
/// `OVHOOK_SKIP_CLI_TESTS=1` says so; otherwise it fails, since `scripts/test.sh` installs every
/// pinned CLI and a missing one would hide a broken install behind a green run.
pub fn cli_missing(what: &str, why: &str) {
    if std::env::var("OVHOOK_SKIP_CLI_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("OVHOOK_SKIP_CLI_TESTS=1: skipping the real {what} test ({why})");
        return;
    }
    panic!(
        "the real {what} is not installed ({why}): run scripts/agent-clis.sh and \
         scripts/claude-code.sh (they need npm), or set OVHOOK_SKIP_CLI_TESTS=1 to skip"
    );
}

/// A unique `sess_<uuid>`-shaped id (the server is shared between tests and runs).
pub fn unique_session() -> String {
    format!("sess_{}", uuid_like())
}

/// A unique `turn_<uuid>`-shaped id.
pub fn unique_turn() -> String {
    format!("turn_{}", uuid_like())
}

fn uuid_like() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let h = xxh(&format!("{t}-{}-{n}", std::process::id()));
    let h2 = xxh(&format!("{h}-{n}"));
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (h >> 32) as u32,
        (h >> 16) as u16,
        (h & 0xfff) as u16,
        (h2 >> 52) as u16 & 0xfff,
        h2 & 0xffff_ffff_ffff
    )
}

fn xxh(s: &str) -> u64 {
    // FNV-1a: enough to spread ids; no extra dev-dependency.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// One fake machine: a temp folder holding the HOME (`<tmp>/home`) and, beside it, repositories
/// and binaries a test places outside the HOME; the environment ovhook sees (nothing inherited
/// but what `vars` says).
pub struct Env {
    root: tempfile::TempDir,
    home: PathBuf,
    pub vars: Vec<(String, String)>,
}

impl Env {
    /// A machine as the hooks see it: no server (`OPENVIKING_URL=off`: journal only, no network;
    /// without it ovhook would use OpenViking's local default `http://127.0.0.1:1933`, whatever
    /// runs there), the state root at `<home>/state` (`OVHOOK_STATE_DIR`), the caller's PATH.
    pub fn new() -> Env {
        let mut e = Env::bare();
        e.set("PATH", &std::env::var("PATH").unwrap_or_default());
        let state = e.home().join("state");
        e.set("OVHOOK_STATE_DIR", &state.to_string_lossy());
        e.set("OPENVIKING_URL", "off");
        e
    }

    /// Talking to the server at `url`.
    pub fn with_url(url: &str) -> Env {
        let mut e = Env::new();
        e.set("OPENVIKING_URL", url);
        e
    }

    /// A machine as a user has it, for install, uninstall and doctor: only HOME and
    /// `PATH=/usr/bin:/bin` (no agent CLI found on it), the state root at its default under the
    /// HOME (`~/.openviking/ovhook`, where the install manifest lives), OpenViking's defaults.
    pub fn bare() -> Env {
        let root = tempfile::tempdir().expect("tempdir");
        let home = root.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        Env {
            root,
            home,
            vars: vec![("PATH".to_owned(), "/usr/bin:/bin".to_owned())],
        }
    }

    pub fn set(&mut self, k: &str, v: &str) -> &mut Env {
        self.vars.retain(|(a, _)| a != k);
        self.vars.push((k.to_owned(), v.to_owned()));
        self
    }

    pub fn unset(&mut self, k: &str) -> &mut Env {
        self.vars.retain(|(a, _)| a != k);
        self
    }

    /// The value of a variable of this machine's environment.
    pub fn var(&self, k: &str) -> Option<String> {
        self.vars
            .iter()
            .find(|(a, _)| a == k)
            .map(|(_, v)| v.clone())
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// `<tmp>/<rel>`: beside the HOME, not inside it.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    /// A repository at `<tmp>/<rel>` (a `.git` folder) with the nested folders `src` and
    /// `sub/dir`, canonicalised.
    pub fn repo(&self, rel: &str) -> PathBuf {
        let root = self.path(rel);
        std::fs::create_dir_all(root.join(".git")).expect("git");
        std::fs::create_dir_all(root.join("src")).expect("src");
        std::fs::create_dir_all(root.join("sub/dir")).expect("sub");
        std::fs::canonicalize(root).expect("canon")
    }

    /// The state root, as ovhook computes it in this environment.
    pub fn state(&self) -> PathBuf {
        ov_engine::paths::state_root_from(&|k| self.var(k), self.home())
    }

    /// `~/.openviking/ovcli.conf`.
    pub fn ovcli(&self) -> PathBuf {
        self.home().join(".openviking/ovcli.conf")
    }

    /// The install manifest (the projects installed into).
    pub fn manifest(&self) -> PathBuf {
        self.state().join("installs.json")
    }

    /// ZCode's user configuration, `~/.zcode/cli/config.json`.
    pub fn zcode_config(&self) -> PathBuf {
        self.home().join(".zcode/cli/config.json")
    }

    /// The journal directory of a native session id.
    pub fn journal_dir(&self, sid: &str) -> PathBuf {
        ov_engine::paths::journal_dir(&self.state(), sid)
    }

    /// `ovhook <args>` with this machine's environment only, run in the HOME.
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_of(&ovhook(), args)
    }

    /// `bin <args>` (a copy of ovhook, another binary) with this machine's environment only,
    /// run in the HOME.
    pub fn command_of(&self, bin: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin);
        cmd.args(args)
            .env_clear()
            .env("HOME", self.home())
            .current_dir(self.home());
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        cmd
    }

    /// `ovhook <args>` as an assert_cmd command, for the install and doctor tests.
    pub fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.command(args))
    }

    /// `bin <args>` as an assert_cmd command.
    pub fn cmd_of(&self, bin: &Path, args: &[&str]) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.command_of(bin, args))
    }

    /// Runs `bin <args>` in `cwd` with `extra` variables: its exit code, then stdout and stderr.
    /// A binary copied by this process may for a moment still be open for writing in a child
    /// forked by another test thread (ETXTBSY): the spawn is retried.
    pub fn run_in(
        &self,
        bin: &Path,
        cwd: &Path,
        args: &[&str],
        extra: &[(&str, &str)],
    ) -> (i32, String) {
        const ETXTBSY: i32 = 26;
        let mut tries = 0;
        let out = loop {
            let res = self
                .command_of(bin, args)
                .envs(extra.iter().copied())
                .current_dir(cwd)
                .output();
            match res {
                Err(e) if e.raw_os_error() == Some(ETXTBSY) && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => break other.expect("run"),
            }
        };
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    }

    /// Runs `ovhook <args>` with `stdin`, with extra variables; panics on a hang.
    pub fn run_with(&self, args: &[&str], stdin: &[u8], extra: &[(&str, &str)]) -> Output {
        let mut cmd = self.command(args);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn ovhook");
        let mut pipe = child.stdin.take().expect("stdin");
        let data = stdin.to_vec();
        let writer = std::thread::spawn(move || {
            // A hook may stop reading early (capped payload): a broken pipe is fine.
            let _ = pipe.write_all(&data);
        });
        let deadline = Instant::now() + HOOK_TIMEOUT;
        loop {
            if child.try_wait().expect("try_wait").is_some() {
                break;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("ovhook {args:?} did not exit within {HOOK_TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let out = child.wait_with_output().expect("output");
        let _ = writer.join();
        out
    }

    /// Runs a hook and checks the part of the contract every hook shares: exit 0.
    pub fn hook(&self, cmd: &str, payload: &Value) -> String {
        self.hook_with(cmd, payload, &[])
    }

    pub fn hook_with(&self, cmd: &str, payload: &Value, extra: &[(&str, &str)]) -> String {
        let out = self.run_with(&[cmd], payload.to_string().as_bytes(), extra);
        assert_eq!(
            out.status.code(),
            Some(0),
            "ovhook {cmd} exit {:?}, stderr {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("stdout is UTF-8")
    }

    /// `ovhook drain` in the foreground; must exit 0.
    pub fn drain(&self) {
        let out = self.run_with(&["drain"], b"", &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "drain: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Every decodable event of a session's journal (empty when there is none).
    pub fn events(&self, sid: &str) -> Vec<Envelope> {
        self.records(sid).into_iter().map(|(_, e)| e).collect()
    }

    /// Every decodable event of a session's journal with where its frame starts.
    pub fn records(&self, sid: &str) -> Vec<(ov_journal::Position, Envelope)> {
        let dir = self.journal_dir(sid);
        if !dir.exists() {
            return Vec::new();
        }
        let store = SessionStore::open_with(&dir, Duration::from_secs(10)).expect("open journal");
        store
            .events()
            .expect("events")
            .into_iter()
            .map(|(pos, r)| {
                let e = r.unwrap_or_else(|e| panic!("undecodable record at {pos:?}: {e}"));
                (pos, e)
            })
            .collect()
    }

    /// The folded state of a session's journal.
    pub fn state_of(&self, sid: &str) -> State {
        let store = SessionStore::open_with(&self.journal_dir(sid), Duration::from_secs(10))
            .expect("open journal");
        store.fold().expect("fold").state
    }

    /// Waits until no worker holds the session's worker lock and `done` holds on its events.
    /// The deadline only guards against a hang: a worker on a loaded machine, talking to a
    /// slow server with the tests' generous request timeouts, may take a minute.
    pub fn wait_for(&self, sid: &str, what: &str, done: impl Fn(&[Envelope]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            if done(&self.events(sid)) && self.worker_idle(sid) {
                return;
            }
            if Instant::now() >= deadline {
                let seen: Vec<String> = self
                    .events(sid)
                    .iter()
                    .map(|e| format!("{:?}", e.event))
                    .collect();
                panic!(
                    "timed out waiting for {what}; the session's journal holds:\n{}",
                    seen.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Nobody holds the worker lock right now.
    pub fn worker_idle(&self, sid: &str) -> bool {
        let lock = ov_engine::paths::worker_lock(&self.journal_dir(sid));
        if !lock.exists() {
            return true;
        }
        matches!(
            ov_journal::FileLock::try_exclusive(&lock, Duration::ZERO),
            Ok(Some(_))
        )
    }

    /// Waits until a worker has handled the Stop of turn `turn_id` and the lock is free again:
    /// a worker started after the Stop (its detached worker, or one it deferred to), or a
    /// worker already running wrote after it (a worker goes round again for events appended
    /// while it held the lock: the Stop's own worker found the lock taken and left). The
    /// lock must then stay free, with no new event, for a moment: between its rounds a
    /// worker lets go of the lock briefly. The Stop is found by its turn id, not by counting
    /// Stops: a test that damages the journal may have made an earlier Stop's record
    /// undecodable.
    pub fn wait_worker_after_stop_of(&self, sid: &str, turn_id: &str) {
        let handled = |evs: &[Envelope]| {
            let mut workers = std::collections::BTreeSet::new();
            let mut seen = false;
            for e in evs {
                match &e.event {
                    Event::HookReceived(h)
                        if h.kind == Some(ov_engine::event::HookKind::Stop)
                            && h.turn_id.as_deref() == Some(turn_id) =>
                    {
                        seen = true
                    }
                    Event::WorkerStarted { .. } if seen => return true,
                    Event::WorkerStarted { .. } => {
                        workers.insert(e.pid);
                    }
                    _ if seen && workers.contains(&e.pid) => return true,
                    _ => {}
                }
            }
            false
        };
        let what = format!("a worker after the Stop of {turn_id}");
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            self.wait_for(sid, &what, handled);
            let before = self.events(sid).len();
            std::thread::sleep(Duration::from_millis(250));
            if self.worker_idle(sid) && self.events(sid).len() == before {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: the journal never settled"
            );
        }
    }

    /// Where ZCode writes this session's rollout.
    pub fn rollout(&self, sid: &str) -> PathBuf {
        ov_engine::paths::zcode_rollout(self.home(), sid)
    }
}

/// The ovhook binary under test.
pub fn ovhook() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ovhook"))
}

/// A copy of the ovhook binary at `dest` (a hard link when the filesystem allows), as after an
/// upgrade that moved it; canonicalised.
pub fn ovhook_copy(dest: &Path) -> PathBuf {
    std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
    if std::fs::hard_link(ovhook(), dest).is_err() {
        std::fs::copy(ovhook(), dest).expect("copy");
    }
    std::fs::canonicalize(dest).expect("canon")
}

/// A turn as ZCode plays it: UPS, one rollout line, Stop.
#[derive(Clone, Debug)]
pub struct Turn {
    pub id: String,
    pub prompt: String,
    pub answer: String,
}

impl Turn {
    pub fn new(tag: &str) -> Turn {
        let id = unique_turn();
        Turn {
            prompt: format!("{tag}: question {id}"),
            answer: format!("{tag}: answer {id}"),
            id,
        }
    }
}

/// The common payload fields, in both casings, as ZCode 0.15 sends them.
pub fn base_payload(event: &str, sid: &str, turn: Option<&str>, cwd: &Path) -> Value {
    let mut v = json!({
        "cwd": cwd.display().to_string(),
        "hookEventName": event, "hook_event_name": event,
        "mode": "yolo",
        "sessionId": sid, "session_id": sid,
        "timestamp": "2026-07-03T03:02:56.413Z",
        "traceId": "54125864-0000-4000-8000-000000000000",
    });
    if let Some(t) = turn {
        v["turnId"] = json!(t);
    }
    v
}

pub fn ups_payload(sid: &str, turn: &Turn, cwd: &Path) -> Value {
    let mut v = base_payload("UserPromptSubmit", sid, Some(&turn.id), cwd);
    v["prompt"] = json!(turn.prompt);
    v
}

pub fn stop_payload(sid: &str, turn: &Turn, cwd: &Path) -> Value {
    let mut v = base_payload("Stop", sid, Some(&turn.id), cwd);
    let preview: String = turn.answer.chars().take(40).collect();
    v["responseText"] = json!(turn.answer);
    v["responsePreview"] = json!(preview);
    v["toolCallCount"] = json!(0);
    v["transcript_path"] = json!("/tmp/zcode-claude-hook-test/transcript.jsonl");
    v["transcriptPath"] = json!("/tmp/zcode-claude-hook-test/transcript.jsonl");
    v
}

/// Appends one complete `model_io` line for `turn` to the rollout (`docs/zcode-hooks.md`): the
/// request repeats the conversation so far, the response is the final answer.
pub fn append_rollout(path: &Path, sid: &str, history: &mut Vec<Value>, turn: &Turn) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("rollout dir");
    }
    if history.is_empty() {
        history.push(json!({"role":"system","content":"You are ZCode."}));
        history.push(json!({"role":"user","content":"<system-reminder>currentDate: 2026-07-03</system-reminder>\n"}));
    }
    history.push(json!({"role":"user","content": turn.prompt}));
    let line = json!({
        "type": "model_io",
        "sessionId": sid, "turnId": turn.id,
        "traceId": "54125864-0000-4000-8000-000000000000",
        "requestId": format!("req-{}", turn.id), "attempt": 1, "querySource": "main_turn",
        "startedAt": "2026-07-03T03:02:56.413Z", "completedAt": "2026-07-03T03:02:57.413Z",
        "durationMs": 1000,
        "model": {"modelId":"glm-4.7","providerId":"bigmodel","role":"main","source":"config"},
        "request": {
            "body": {"model":"glm-4.7","max_tokens":64000,"stream":true},
            "headers": {"User-Agent":"ZCode/0.15.0"},
            "maxOutputTokens": 64000,
            "messages": history.clone(),
            "messageCount": history.len(), "messagesKind": "full", "messageOffset": 0,
        },
        "response": {"finishReason":"stop","text": turn.answer,"toolCalls":[],
            "responseId":"msg_1","modelId":"glm-4.7",
            "usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15}},
    });
    history.push(json!({"role":"assistant","content": turn.answer}));
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open rollout");
    let mut s = line.to_string();
    s.push('\n');
    f.write_all(s.as_bytes()).expect("write rollout");
}

/// A session played as ZCode plays it: rollout line, UPS, Stop.
pub struct Session<'a> {
    pub env: &'a Env,
    pub sid: String,
    pub history: Vec<Value>,
    pub turns: Vec<Turn>,
}

impl<'a> Session<'a> {
    pub fn new(env: &'a Env) -> Session<'a> {
        Session {
            env,
            sid: unique_session(),
            history: Vec::new(),
            turns: Vec::new(),
        }
    }

    /// One turn: UPS, the rollout line, Stop, with `over` added to the environment of
    /// both hooks (and so of the worker the Stop starts).
    pub fn turn(&mut self, tag: &str, over: &[(&str, &str)]) -> &Turn {
        self.play(Turn::new(tag), over)
    }

    /// [`Session::turn`] with a turn made by the caller.
    pub fn play(&mut self, turn: Turn, over: &[(&str, &str)]) -> &Turn {
        let cwd = self.env.home().to_path_buf();
        let ups = self.env.hook_with(
            "user-prompt-submit",
            &ups_payload(&self.sid, &turn, &cwd),
            over,
        );
        if !ups.is_empty() {
            context_of("UserPromptSubmit", &ups, 32768);
        }
        let path = self.env.rollout(&self.sid);
        append_rollout(&path, &self.sid, &mut self.history, &turn);
        let out = self
            .env
            .hook_with("stop", &stop_payload(&self.sid, &turn, &cwd), over);
        assert_eq!(out, "", "Stop must print nothing");
        self.turns.push(turn);
        self.turns.last().expect("turn")
    }

    /// Waits for the worker started by the latest Stop to be done.
    pub fn wait_worker(&self) {
        let turn = self.turns.last().expect("a turn was played");
        self.env.wait_worker_after_stop_of(&self.sid, &turn.id);
    }

    /// The OpenViking session id.
    pub fn remote(&self) -> String {
        ov_engine::ids::remote_session_id("zc-", &self.sid)
    }
}

/// A client for reading back what the server holds.
pub fn client(url: &str) -> ov_engine::client::Client {
    ov_engine::client::Client::new(ov_engine::client::ClientConfig {
        base_url: url.to_owned(),
        ..ov_engine::client::ClientConfig::default()
    })
    .expect("client")
}

/// Asserts the server holds every message of `turns` exactly once (right role and turn
/// id, right content) and nothing else.
///
/// A commit archives in the server's background: while the archive is being written, the
/// live file and the archive can both list a message. So a read that finds problems is
/// repeated for a while; a real duplicate or a lost message stays and fails.
pub fn assert_exactly_once(url: &str, remote: &str, turns: &[Turn]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let held = client(url)
            .session_messages(remote)
            .expect("session messages");
        let problems = exactly_once_problems(&held, turns);
        if problems.is_empty() {
            return;
        }
        if Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(250));
            continue;
        }
        panic!(
            "{remote}: {problems:#?}\nheld: {:#?}",
            held.iter()
                .map(|m| (m.role.as_str(), m.turn_id.as_deref(), m.content.as_str()))
                .collect::<Vec<_>>()
        );
    }
}

pub fn exactly_once_problems(
    held: &[ov_engine::client::ServerMessage],
    turns: &[Turn],
) -> Vec<String> {
    let mut problems = Vec::new();
    for t in turns {
        for (role, content) in [("user", &t.prompt), ("assistant", &t.answer)] {
            let n = held
                .iter()
                .filter(|m| m.role == role && m.turn_id.as_deref() == Some(t.id.as_str()))
                .count();
            if n != 1 {
                problems.push(format!("{role} of {}: {n} copies", t.id));
            }
            if !held.iter().any(|m| {
                m.role == role && m.turn_id.as_deref() == Some(&t.id) && &m.content == content
            }) {
                problems.push(format!("{role} of {}: content differs or missing", t.id));
            }
        }
    }
    if held.len() != turns.len() * 2 {
        problems.push(format!(
            "server holds {} messages, expected {}",
            held.len(),
            turns.len() * 2
        ));
    }
    problems
}

/// Asserts the journal has nothing left to do: no pending or in-doubt sends, no commit
/// in flight.
pub fn assert_settled(env: &Env, sid: &str) {
    let s = env.state_of(sid);
    assert!(
        s.outbox().is_empty(),
        "outbox not empty: {:?}",
        s.outbox().iter().map(|(k, _)| k).collect::<Vec<_>>()
    );
    assert!(
        s.in_doubt().is_empty(),
        "in-doubt sends: {:?}",
        s.in_doubt()
    );
    assert!(s.is_settled(), "journal not settled");
}

/// A loopback port with nothing listening on it.
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    drop(l);
    port
}

/// Count of events of a kind.
pub fn count(evs: &[Envelope], pred: impl Fn(&Event) -> bool) -> usize {
    evs.iter().filter(|e| pred(&e.event)).count()
}

/// Writes `content` at `uri` on the server (`POST /api/v1/content/write`, indexed before
/// it returns); replaces an existing file.
pub fn seed(url: &str, uri: &str, content: &str) {
    let http = reqwest::blocking::Client::new();
    let mut last = String::new();
    for mode in ["replace", "create"] {
        let r = http
            .post(format!("{url}/api/v1/content/write"))
            .json(&json!({"uri": uri, "content": content, "mode": mode, "wait": true}))
            .timeout(Duration::from_secs(60))
            .send()
            .expect("content/write");
        let status = r.status();
        last = r.text().unwrap_or_default();
        if status.is_success() {
            return;
        }
    }
    panic!("could not seed {uri}: {last}");
}

/// Removes `uri` from the server (`DELETE /api/v1/fs`); a failure is ignored.
pub fn forget(url: &str, uri: &str) {
    let _ = reqwest::blocking::Client::new()
        .delete(format!("{url}/api/v1/fs"))
        .query(&[("uri", uri), ("wait", "true")])
        .timeout(Duration::from_secs(60))
        .send();
}

/// A memory a test seeded, forgotten when the test ends: the server is shared, and a memory
/// left behind is recalled into other tests' prompts.
pub struct Seeded {
    pub url: String,
    pub uri: String,
}

impl Drop for Seeded {
    fn drop(&mut self) {
        forget(&self.url, &self.uri);
    }
}

/// Checks a SessionStart / UserPromptSubmit stdout: nothing, or exactly
/// `{"hookSpecificOutput":{"hookEventName":E,"additionalContext":…}}` on one line, under
/// `max` bytes. Returns the context.
pub fn context_of(event: &str, stdout: &str, max: usize) -> Option<String> {
    if stdout.is_empty() {
        return None;
    }
    assert!(
        stdout.len() < max,
        "{event}: {} bytes >= {max}",
        stdout.len()
    );
    assert!(
        stdout.ends_with('\n') && stdout.trim_end().lines().count() == 1,
        "{event}: one line expected: {stdout:?}"
    );
    let v: Value = serde_json::from_str(stdout.trim_end()).expect("output is JSON");
    let obj = v.as_object().expect("an object");
    assert_eq!(
        obj.keys().collect::<Vec<_>>(),
        ["hookSpecificOutput"],
        "{v}"
    );
    let inner = obj["hookSpecificOutput"].as_object().expect("inner object");
    let mut keys: Vec<&str> = inner.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["additionalContext", "hookEventName"], "{v}");
    assert_eq!(inner["hookEventName"], event, "{v}");
    let ctx = inner["additionalContext"]
        .as_str()
        .expect("context is a string");
    assert!(!ctx.trim().is_empty(), "empty context printed");
    Some(ctx.to_owned())
}

/// Checks a PreToolUse stdout: nothing, or exactly the deny shape. Returns the reason.
pub fn deny_of(stdout: &str) -> Option<String> {
    if stdout.is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(stdout.trim_end()).expect("output is JSON");
    let obj = v.as_object().expect("an object");
    assert_eq!(
        obj.keys().collect::<Vec<_>>(),
        ["hookSpecificOutput"],
        "{v}"
    );
    let inner = obj["hookSpecificOutput"].as_object().expect("inner object");
    let mut keys: Vec<&str> = inner.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "hookEventName",
            "permissionDecision",
            "permissionDecisionReason"
        ],
        "{v}"
    );
    assert_eq!(inner["hookEventName"], "PreToolUse");
    assert_eq!(inner["permissionDecision"], "deny");
    let reason = inner["permissionDecisionReason"].as_str().expect("reason");
    assert!(!reason.is_empty());
    Some(reason.to_owned())
}

/// Every event of every session journal under the state root.
pub fn all_events(env: &Env) -> Vec<Envelope> {
    let mut out = Vec::new();
    for dir in ov_engine::store::session_dirs(&env.state()) {
        let store = SessionStore::open_with(&dir, Duration::from_secs(10)).expect("open");
        for (_, r) in store.events().expect("events") {
            out.push(r.expect("decodable"));
        }
    }
    out
}

/// Waits until no worker of any session holds its lock (after a grace period for a
/// just-spawned worker to take it).
pub fn wait_all_idle(env: &Env) {
    std::thread::sleep(Duration::from_millis(50));
    let deadline = Instant::now() + Duration::from_secs(30);
    for dir in ov_engine::store::session_dirs(&env.state()) {
        let lock = ov_engine::paths::worker_lock(&dir);
        while lock.exists()
            && !matches!(
                ov_journal::FileLock::try_exclusive(&lock, Duration::ZERO),
                Ok(Some(_))
            )
        {
            assert!(
                Instant::now() < deadline,
                "worker of {} never finished",
                dir.display()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A loopback listener that counts connections and closes each at once (a server that
/// is there but never answers).
pub struct CountingListener {
    pub port: u16,
    pub count: std::sync::Arc<AtomicU64>,
}

impl CountingListener {
    pub fn start() -> CountingListener {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        let count = std::sync::Arc::new(AtomicU64::new(0));
        let c = count.clone();
        std::thread::spawn(move || {
            for s in l.incoming() {
                c.fetch_add(1, Ordering::SeqCst);
                drop(s);
            }
        });
        CountingListener { port, count }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn connections(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }
}

/// Appends `line` and a newline to the file at `path` (created, with its folder, if missing).
pub fn append_line(path: &Path, line: &Value) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("dir");
    }
    let mut s = line.to_string();
    s.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(s.as_bytes()))
        .expect("append");
}

/// `sid` shaped as a UUID (Copilot's session ids are).
pub fn uuid_shaped(sid: &str) -> String {
    let hex: String = sid
        .bytes()
        .map(|b| format!("{:02x}", b))
        .collect::<String>()
        .chars()
        .rev()
        .take(32)
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Every harness `ovhook --help` lists.
pub fn harness_names() -> Vec<String> {
    let out = Env::new().run_with(&["--help"], b"", &[]);
    let help = String::from_utf8_lossy(&out.stdout).replace('\n', " ");
    let list = help
        .split("[possible values: ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .expect("--harness lists its possible values");
    list.split(',')
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .collect()
}
