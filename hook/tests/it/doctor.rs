//! `ovhook doctor` against a temporary HOME (and a tiny loopback HTTP server).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

use assert_cmd::Command;
use serde_json::{json, Value};
use tempfile::TempDir;

fn doctor(home: &Path, cwd: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let out = Command::cargo_bin("ovhook")
        .expect("binary")
        .env_clear()
        .env("HOME", home)
        // No server unless a test names one (the local default may be anything on this machine).
        .env("OPENVIKING_URL", "off")
        .envs(env.iter().copied())
        .current_dir(cwd)
        .arg("doctor")
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn install(home: &Path) {
    Command::cargo_bin("ovhook")
        .expect("binary")
        .env_clear()
        .args(["install", "--home", &home.to_string_lossy()])
        .assert()
        .success();
}

fn config(home: &Path) -> Value {
    serde_json::from_slice(&fs::read(home.join(".zcode/cli/config.json")).expect("r")).expect("j")
}

fn set_config(home: &Path, v: &Value) {
    fs::write(home.join(".zcode/cli/config.json"), v.to_string()).expect("w");
}

fn setup() -> (TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cwd = tmp.path().join("work");
    fs::create_dir_all(&cwd).expect("cwd");
    (tmp, cwd)
}

#[test]
fn every_line_has_the_check_format() {
    let (tmp, cwd) = setup();
    install(tmp.path());
    let (_, out) = doctor(tmp.path(), &cwd, &[]);
    for line in out.lines() {
        let (level, rest) = line.split_once(' ').expect("level");
        assert!(["ok", "warn", "FAIL"].contains(&level), "{line}");
        assert!(rest.contains(": "), "{line}");
    }
}

#[test]
fn missing_config_fails() {
    let (tmp, cwd) = setup();
    let (code, out) = doctor(tmp.path(), &cwd, &[]);
    assert_eq!(code, 1);
    assert!(
        out.contains("FAIL zcode config:") && out.contains("does not exist"),
        "{out}"
    );
}

#[test]
fn fresh_install_is_healthy_journal_only() {
    let (tmp, cwd) = setup();
    install(tmp.path());
    let (code, out) = doctor(tmp.path(), &cwd, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("FAIL"), "{out}");
    for ev in ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"] {
        assert!(out.contains(&format!("ok hook {ev}:")), "{out}");
    }
    assert!(out.contains("ok hooks.enabled: true"), "{out}");
    assert!(out.contains("ok mcp: openviking"), "{out}");
    assert!(
        out.contains("ok server: off (url = off): journal only"),
        "{out}"
    );
}

#[test]
fn malformed_config_fails() {
    let (tmp, cwd) = setup();
    install(tmp.path());
    fs::write(tmp.path().join(".zcode/cli/config.json"), "{nope").expect("w");
    let (code, out) = doctor(tmp.path(), &cwd, &[]);
    assert_eq!(code, 1);
    assert!(
        out.contains("FAIL zcode config:") && out.contains("malformed JSON"),
        "{out}"
    );
}

#[test]
fn unknown_event_key_disabled_hooks_duplicates_and_missing_binary_fail() {
    let (tmp, cwd) = setup();
    install(tmp.path());
    let mut cfg = config(tmp.path());
    cfg["hooks"]["enabled"] = json!(false);
    cfg["hooks"]["events"]["SessionEnd"] = json!([]);
    let stop = cfg["hooks"]["events"]["Stop"][0].clone();
    cfg["hooks"]["events"]["Stop"]
        .as_array_mut()
        .expect("a")
        .push(stop);
    cfg["hooks"]["events"]["PreToolUse"][0]["hooks"][0]["command"] = json!("/nonexistent/ovhook");
    cfg["hooks"]["events"]
        .as_object_mut()
        .expect("o")
        .remove("SessionStart");
    cfg["mcp"]["servers"]
        .as_object_mut()
        .expect("o")
        .remove("openviking");
    set_config(tmp.path(), &cfg);
    let (code, out) = doctor(tmp.path(), &cwd, &[]);
    assert_eq!(code, 1);
    assert!(out.contains("FAIL hooks.enabled:"), "{out}");
    assert!(
        out.contains("FAIL hooks.events:") && out.contains("\"SessionEnd\""),
        "{out}"
    );
    assert!(out.contains("FAIL hook Stop: 2 entries of ours"), "{out}");
    assert!(
        out.contains("FAIL hook PreToolUse: /nonexistent/ovhook does not exist"),
        "{out}"
    );
    assert!(out.contains("FAIL hook SessionStart: missing"), "{out}");
    assert!(out.contains("warn mcp:"), "{out}");
    assert!(out.contains("ok hook UserPromptSubmit:"), "{out}");
}

#[test]
fn node_plugin_leftovers_warn() {
    let (tmp, cwd) = setup();
    install(tmp.path());
    let mut cfg = config(tmp.path());
    cfg["hooks"]["events"]["Stop"].as_array_mut().expect("a").push(json!({"hooks": [{
        "type": "command",
        "command": "OPENVIKING_INTEGRATION_ID='openviking-memory' node '/x/scripts/auto-capture.mjs'",
        "timeout": 30}]}));
    set_config(tmp.path(), &cfg);
    let (code, out) = doctor(tmp.path(), &cwd, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("warn node plugin: 1 hook entries"), "{out}");
}

#[test]
fn ignored_repository_keys_are_shown() {
    let (tmp, cwd) = setup();
    install(tmp.path());
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join(".git")).expect("git");
    fs::create_dir_all(repo.join(".openviking")).expect("ov");
    fs::write(
        repo.join(".openviking/config.json"),
        r#"{"url":"https://evil.example","recall":{"max_items":3}}"#,
    )
    .expect("w");
    let (code, out) = doctor(tmp.path(), &repo, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("warn config:") && out.contains("cannot choose the server"),
        "{out}"
    );
    assert!(out.contains("ok server: off"), "{out}");
    assert!(
        out.contains("ok config sources:") && out.contains(".openviking/config.json"),
        "{out}"
    );
    let _ = cwd;
}

/// The issue's example: a cloned repository naming another project's peer is shown as ignored.
#[test]
fn a_repository_naming_another_peer_is_shown_as_ignored() {
    let (tmp, _cwd) = setup();
    install(tmp.path());
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join(".git")).expect("git");
    fs::create_dir_all(repo.join(".openviking")).expect("ov");
    fs::write(
        repo.join(".openviking/config.json"),
        r#"{"peer":{"id":"github.com-acme-payroll"},"recall":{"peer_scope":"actor"}}"#,
    )
    .expect("w");
    let (code, out) = doctor(tmp.path(), &repo, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("warn config:") && out.contains("cannot choose the peer"),
        "{out}"
    );
    assert!(
        !out.contains("config peer: github.com-acme-payroll"),
        "{out}"
    );
}

/// Serves `n` requests: `/health` → 200, `/api/v1/system/status` → `status_code`.
fn fake_server(status_code: u16, n: usize) -> (String, std::thread::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let handle = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for stream in listener.incoming().take(n) {
            let mut stream = stream.expect("conn");
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let (code, body) = if head.starts_with("GET /health") {
                (200, r#"{"status":"ok","healthy":true}"#.to_owned())
            } else if status_code == 200 {
                (
                    200,
                    r#"{"status":"ok","result":{"initialized":true,"user":"bob"}}"#.to_owned(),
                )
            } else {
                (status_code, r#"{"status":"error"}"#.to_owned())
            };
            seen.push(head);
            let _ = write!(
                stream,
                "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        seen
    });
    (url, handle)
}

#[test]
fn reachable_and_authorised_server() {
    let (tmp, cwd) = setup();
    install(tmp.path());
    let (url, handle) = fake_server(200, 2);
    let (code, out) = doctor(
        tmp.path(),
        &cwd,
        &[("OPENVIKING_URL", &url), ("OPENVIKING_API_KEY", "sk-123")],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("ok server: {url} reachable")),
        "{out}"
    );
    assert!(
        out.contains("ok server auth: authorised as user bob"),
        "{out}"
    );
    assert!(!out.contains("sk-123"));
    let seen = handle.join().expect("server");
    // Header names are case-insensitive in HTTP.
    assert!(
        seen[1]
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-123"),
        "{seen:?}"
    );
}

#[test]
fn unauthorised_server_fails() {
    let (tmp, cwd) = setup();
    install(tmp.path());
    let (url, handle) = fake_server(401, 2);
    let (code, out) = doctor(tmp.path(), &cwd, &[("OPENVIKING_URL", &url)]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL server auth: HTTP 401"), "{out}");
    handle.join().expect("server");
}

#[test]
fn unreachable_server_fails_fast() {
    let (tmp, cwd) = setup();
    install(tmp.path());
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let (code, out) = doctor(tmp.path(), &cwd, &[("OPENVIKING_URL", &url)]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL server:") && out.contains("Connection refused"),
        "{out}"
    );
}

fn run_hook(home: &Path, cmd: &str, payload: &str) {
    Command::cargo_bin("ovhook")
        .expect("binary")
        .env_clear()
        .env("HOME", home)
        .env("OPENVIKING_URL", "off")
        .env("OVHOOK_NO_DETACH", "1")
        .arg(cmd)
        .write_stdin(payload.to_string())
        .assert()
        .success()
        .stdout("");
}

#[test]
fn journals_with_unsent_work_are_reported() {
    let (tmp, cwd) = setup();
    let home = tmp.path();
    install(home);
    let (_, clean) = doctor(home, &cwd, &[]);
    assert!(clean.contains("ok journals: none yet"), "{clean}");
    // url = off: the turn is captured into the journal and stays unsent.
    run_hook(
        home,
        "user-prompt-submit",
        r#"{"sessionId":"sess_doc","turnId":"turn_1","prompt":"remember tabs"}"#,
    );
    run_hook(
        home,
        "stop",
        r#"{"sessionId":"sess_doc","turnId":"turn_1","responseText":"noted"}"#,
    );
    let (_, out) = doctor(home, &cwd, &[]);
    assert!(
        out.contains("warn session sess_doc: 2 message(s) unsent, 0 in doubt"),
        "{out}"
    );
    assert!(
        out.contains("ok journals: 1 session(s); 2 message(s) waiting in 1"),
        "{out}"
    );
}

/// No URL anywhere: doctor names OpenViking's local default, and when nothing answers there it
/// warns (turns stay in the journal) without failing.
#[test]
fn no_url_is_the_local_default_and_says_so() {
    let (tmp, cwd) = setup();
    install(tmp.path());
    let out = Command::cargo_bin("ovhook")
        .expect("binary")
        .env_clear()
        .env("HOME", tmp.path())
        .current_dir(&cwd)
        .arg("doctor")
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("ok server url: http://127.0.0.1:1933: no URL configured"),
        "{text}"
    );
    // Whether something answers on 1933 depends on the machine; either way no FAIL for it,
    // and a line that says which.
    assert!(!text.contains("FAIL server:"), "{text}");
    assert!(
        text.contains("ok server:") || text.contains("warn server:"),
        "{text}"
    );
    if TcpListener::bind("127.0.0.1:1933").is_ok() {
        assert!(
            text.contains("warn server:") && text.contains("turns stay in the journal"),
            "{text}"
        );
    }
}

/// An executable stand-in for an agent's binary.
fn fake_agent(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    fs::write(path, "#!/bin/sh\nexit 0\n").expect("write");
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Doctor lists every agent it finds on the machine (its executable on PATH, else its
/// configuration folder) and none it does not, says whether ovhook is installed for each, and
/// whether our hooks will run there: Codex runs no hook it does not trust, ZCode none while
/// `hooks.enabled` is false.
#[test]
fn agents_on_the_machine_are_listed_installed_or_not_and_whether_hooks_run() {
    let (tmp, cwd) = setup();
    let home = tmp.path().join("home");
    let bin = tmp.path().join("bin");
    fs::create_dir_all(&home).expect("home");
    fake_agent(&bin.join("codex"));
    fake_agent(&bin.join("gemini"));
    fs::create_dir_all(home.join(".qwen")).expect("qwen folder");
    let home_arg = home.to_string_lossy().into_owned();
    for harness in ["zcode", "codex", "gemini"] {
        Command::cargo_bin("ovhook")
            .expect("binary")
            .env_clear()
            .args(["install", "--harness", harness, "--home", &home_arg])
            .assert()
            .success();
    }
    let path = bin.display().to_string();
    let (code, out) = doctor(&home, &cwd, &[("PATH", &path)]);
    let line = |title: &str| {
        let prefix = format!(" agent {title}: ");
        out.lines()
            .find(|l| l.contains(&prefix))
            .unwrap_or_else(|| panic!("no line for {title}:\n{out}"))
            .to_owned()
    };
    let gemini = bin.join("gemini");
    assert_eq!(
        line("Gemini CLI"),
        format!(
            "ok agent Gemini CLI: found: {}; ovhook is installed and its hooks will run",
            gemini.display()
        )
    );
    let codex = line("Codex CLI");
    assert!(
        codex.starts_with(&format!(
            "FAIL agent Codex CLI: found: {}; ovhook is installed but its hooks will not run: \
             Codex CLI hook trust: ",
            bin.join("codex").display()
        )),
        "{codex}"
    );
    assert_eq!(
        line("Qwen Code"),
        format!(
            "ok agent Qwen Code: found: {} (not on PATH); ovhook is not installed for it \
             (ovhook install --harness qwen)",
            home.join(".qwen").display()
        )
    );
    assert!(
        line("ZCode").starts_with("ok agent ZCode: found: "),
        "{}",
        line("ZCode")
    );
    for absent in [
        "GitHub Copilot CLI",
        "Claude Code",
        "OpenCode",
        "Kilo Code",
        "Cursor",
    ] {
        assert!(
            !out.contains(&format!(" agent {absent}: ")),
            "{absent} is not on this machine:\n{out}"
        );
    }
    assert_eq!(code, 1, "Codex's untrusted hooks fail the doctor");

    let mut cfg = config(&home);
    cfg["hooks"]["enabled"] = json!(false);
    set_config(&home, &cfg);
    let (_, out) = doctor(&home, &cwd, &[("PATH", &path)]);
    let zcode = out
        .lines()
        .find(|l| l.contains(" agent ZCode: "))
        .expect("a ZCode line");
    assert!(
        zcode.starts_with("FAIL agent ZCode: ")
            && zcode.contains("its hooks will not run: hooks.enabled: "),
        "{zcode}"
    );
}
