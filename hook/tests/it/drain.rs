//! `ovhook drain` finishes unfinished work and leaves settled sessions untouched.

use std::path::Path;

use assert_cmd::Command;

fn hook(home: &Path, cmd: &str, payload: &str) {
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

fn drain(home: &Path) -> String {
    let out = Command::cargo_bin("ovhook")
        .expect("binary")
        .env_clear()
        .env("HOME", home)
        .env("OPENVIKING_URL", "off")
        .arg("drain")
        .output()
        .expect("drain");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn records(home: &Path, session: &str) -> usize {
    let dir = home.join(".openviking/ovhook/journals").join(session);
    ov_engine::store::SessionStore::open(&dir)
        .expect("open")
        .events()
        .expect("events")
        .len()
}

#[test]
fn drain_closes_open_turns_then_leaves_a_settled_session_alone() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path();
    // A turn whose Stop never came: only a drain (a later session start) captures its prompt.
    hook(
        home,
        "user-prompt-submit",
        r#"{"sessionId":"sess_d","turnId":"turn_open","prompt":"left open"}"#,
    );
    let before = records(home, "sess_d");
    let out = drain(home);
    assert!(
        out.contains("drained 1 session(s): 1 message(s) still pending"),
        "{out}"
    );
    let st = ov_engine::store::SessionStore::open(&home.join(".openviking/ovhook/journals/sess_d"))
        .expect("open")
        .fold()
        .expect("fold")
        .state;
    assert_eq!(st.outbox().len(), 1, "the open turn's prompt is planned");
    let after_first = records(home, "sess_d");
    assert!(after_first > before);
    // Embedded default: nothing more can happen, so a second drain writes nothing.
    drain(home);
    assert_eq!(records(home, "sess_d"), after_first);
}
