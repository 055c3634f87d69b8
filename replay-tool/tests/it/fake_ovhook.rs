//! The playback order and the fault semantics, observed through a fake ovhook that logs every
//! call; and the harness's own checks (output schema, exit codes). No server, no real ovhook.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{fixture, simulate};

/// A fake `ovhook`: logs `cmd|OVHOOK_FAILPOINT|OPENVIKING_URL|stdin` to
/// `$OVHOOK_STATE_DIR/calls.log`; `mode` chooses misbehaviour.
fn fake(dir: &Path, mode: &str) -> PathBuf {
    let path = dir.join("ovhook");
    let body = format!(
        r#"#!/bin/sh
[ "$1" = --harness ] && shift 2
payload=$(cat | tr -d '\n')
printf '%s|%s|%s|%s\n' "$1" "$OVHOOK_FAILPOINT" "$OPENVIKING_URL" "$payload" >> "$OVHOOK_STATE_DIR/calls.log"
case "{mode}:$1" in
  bad-output:user-prompt-submit) echo '{{"hookSpecificOutput":{{"hookEventName":"UserPromptSubmit"}},"decision":"approve"}}' ;;
  bad-output:stop) echo 'captured!' ;;
  good-output:user-prompt-submit) echo '{{"hookSpecificOutput":{{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}}}' ;;
  failing:stop) exit 3 ;;
esac
exit 0
"#
    );
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

struct Call {
    cmd: String,
    failpoint: String,
    url: String,
    payload: Value,
}

/// Runs simulate with the fake and returns (report, calls).
fn run(mode: &str, faults: &str, url: Option<&str>) -> (i32, Value, Vec<Call>) {
    let tmp = tempfile::tempdir().unwrap();
    let bin = fake(tmp.path(), mode);
    let f = fixture("five-turns.jsonl");
    let mut args = vec![
        f.to_str().unwrap(),
        "--ovhook",
        bin.to_str().unwrap(),
        "--keep",
    ];
    if !faults.is_empty() {
        args.extend(["--faults", faults]);
    }
    if let Some(u) = url {
        args.extend(["--url", u]);
    }
    let (code, r, _) = simulate(&args);
    let kept = PathBuf::from(r["kept"].as_str().unwrap());
    let log = std::fs::read_to_string(kept.join("state/calls.log")).unwrap();
    std::fs::remove_dir_all(&kept).unwrap();
    let calls = log
        .lines()
        .map(|l| {
            let mut p = l.splitn(4, '|');
            let mut next = || p.next().unwrap_or_default().to_owned();
            let (cmd, failpoint, url, payload) = (next(), next(), next(), next());
            Call {
                cmd,
                failpoint,
                url,
                payload: serde_json::from_str(&payload).unwrap_or(Value::Null),
            }
        })
        .collect();
    (code, r, calls)
}

/// `S` SessionStart, `U<turn>`, `P<turn>` PreToolUse, `T<turn>` Stop, `D` drain; turns by
/// their index in the fixture.
fn sequence(calls: &[Call]) -> String {
    let turn = |c: &Call| {
        let id = c.payload["turnId"].as_str().unwrap_or_default();
        id.chars().last().unwrap_or('?')
    };
    calls
        .iter()
        .map(|c| match c.cmd.as_str() {
            "session-start" => "S".to_owned(),
            "user-prompt-submit" => format!("U{}", turn(c)),
            "pre-tool-use" => format!("P{}", turn(c)),
            "stop" => format!("T{}", turn(c)),
            "drain" => "D".to_owned(),
            other => format!("?{other}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn zcode_order_without_faults() {
    let (code, r, calls) = run("ok", "", None);
    assert_eq!(code, 0);
    // Turn 4 is interrupted: a prompt, no Stop. Turn 2 has one tool call; turn 0 one.
    assert_eq!(sequence(&calls), "S U0 P0 T0 U1 T1 U2 P2 T2 U3 T3 U4 D");
    assert_eq!(r["expected"], 4);
    let sid = r["session_id"].as_str().unwrap();
    for c in &calls[..calls.len() - 1] {
        let p = &c.payload;
        for k in [
            "cwd",
            "hookEventName",
            "hook_event_name",
            "mode",
            "sessionId",
            "session_id",
            "timestamp",
            "traceId",
            "turnId",
        ] {
            assert!(p.get(k).is_some(), "{} lacks {k}: {p}", c.cmd);
        }
        assert_eq!(p["sessionId"], sid);
        assert_eq!(p["session_id"], sid);
        assert_eq!(p["mode"], "yolo");
        assert_eq!(c.url, "off", "no server: journal only, said explicitly");
    }
    let start = &calls[0].payload;
    assert_eq!(start["source"], "startup");
    let ups: Vec<&Value> = calls
        .iter()
        .filter(|c| c.cmd == "user-prompt-submit")
        .map(|c| &c.payload)
        .collect();
    assert_eq!(ups[1]["prompt"], "Which language should I use for a CLI?");
    assert_eq!(ups[2]["prompt"], "Read Cargo.toml and tell me the edition.");
    let pre = &calls[2].payload;
    assert_eq!(
        (pre["toolName"].as_str(), pre["tool_name"].as_str()),
        (Some("Bash"), Some("Bash"))
    );
    assert_eq!(pre["toolInput"]["command"], "echo 4");
    assert_eq!(pre["toolCallId"], "toolu_1");
    let stops: Vec<&Value> = calls
        .iter()
        .filter(|c| c.cmd == "stop")
        .map(|c| &c.payload)
        .collect();
    assert_eq!(stops[0]["responseText"], "The answer is 4.");
    assert_eq!(stops[0]["responsePreview"], "The answer is 4.");
    assert_eq!(stops[0]["toolCallCount"], 1);
    assert_eq!(stops[2]["responseText"], "The edition is 2021.");
    let tp = stops[0]["transcript_path"].as_str().unwrap();
    assert_eq!(stops[0]["transcriptPath"].as_str(), Some(tp));
    assert!(
        !Path::new(tp).exists(),
        "the transcript is deleted after the hook returns"
    );
}

#[test]
fn stop_faults_bend_the_order() {
    let cases = [
        ("drop-stop@1", "S U0 P0 T0 U1 U2 P2 T2 U3 T3 U4 D"),
        ("dup-stop@1", "S U0 P0 T0 U1 T1 T1 U2 P2 T2 U3 T3 U4 D"),
        ("late-stop@1", "S U0 P0 T0 U1 U2 P2 T2 T1 U3 T3 U4 D"),
        ("late-stop@3", "S U0 P0 T0 U1 T1 U2 P2 T2 U3 U4 T3 D"),
        (
            "race-stop@2",
            "S U0 P0 T0 U1 T1 U2 P2 T2 T2 T2 T2 T2 T2 T2 T2 U3 T3 U4 D",
        ),
        (
            "rotate@2,partial-line@1",
            "S U0 P0 T0 U1 T1 U2 P2 T2 U3 T3 U4 D",
        ),
    ];
    for (faults, want) in cases {
        let (code, r, calls) = run("ok", faults, None);
        assert_eq!(code, 0, "{faults}");
        assert_eq!(sequence(&calls), want, "{faults}");
        assert_eq!(
            r["faults"].as_array().unwrap().len(),
            faults.split(',').count()
        );
    }
}

#[test]
fn kill_sets_the_failpoint_on_that_stop_only() {
    let (_, _, calls) = run("ok", "kill:after-request-sent@2", None);
    for c in &calls {
        let is_t2 = c.cmd == "stop" && c.payload["turnId"].as_str().unwrap().ends_with('2');
        assert_eq!(
            c.failpoint,
            if is_t2 { "after-request-sent" } else { "" },
            "{}",
            c.cmd
        );
    }
}

/// A loopback HTTP server that answers 404 to everything (the session does not exist), so
/// that simulate's read-back finds nothing.
fn not_found_server() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let body = r#"{"status":"error","error":{"code":"NOT_FOUND","message":"no"}}"#;
            let _ = write!(
                conn,
                "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn server_down_points_hooks_at_a_closed_port() {
    let url = not_found_server();
    let url = url.as_str();
    let (code, r, calls) = run("ok", "server-down@1-2", Some(url));
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        (r["delivered"].as_u64(), r["lost"].as_u64()),
        (Some(0), Some(4)),
        "{r}"
    );
    for c in &calls {
        let t = c.payload["turnId"].as_str().unwrap_or_default();
        let down =
            c.cmd != "session-start" && c.cmd != "drain" && (t.ends_with('1') || t.ends_with('2'));
        if down {
            assert!(
                c.url.starts_with("http://127.0.0.1:") && c.url != url,
                "{}: {}",
                c.cmd,
                c.url
            );
        } else {
            assert_eq!(c.url, url, "{} {t}", c.cmd);
        }
    }
}

#[test]
fn output_violations_are_counted() {
    let (code, r, _) = run("bad-output", "", None);
    assert_eq!(code, 0, "violations are findings, not harness errors");
    // 5 UserPromptSubmit with extra keys + 4 Stops that print.
    assert_eq!(r["hook_violations"], 9, "{r}");
    let (_, r, _) = run("good-output", "", None);
    assert_eq!(r["hook_violations"], 0, "{r}");
}

#[test]
fn a_failing_hook_is_a_harness_error() {
    let (code, r, _) = run("failing", "", None);
    assert_eq!(code, 1);
    assert_eq!(r["hook_failures"], 4, "{r}");
}
