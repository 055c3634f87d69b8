//! `ovreplay sessions` over a state root holding every golden journal.

use predicates::prelude::*;

use crate::{copy_journal, golden, ovreplay};

fn state_root() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (name, session) in [
        ("clean", "sess_clean"),
        ("in_doubt", "sess_doubt"),
        ("set_aside", "sess_aside"),
        ("unreachable", "sess_offline"),
        ("no_stop", "sess_open"),
    ] {
        copy_journal(&golden(name), &tmp.path().join("journals").join(session));
    }
    // Not a journal: ignored.
    std::fs::create_dir_all(tmp.path().join("journals/stray")).unwrap();
    tmp
}

#[test]
fn sessions_table() {
    let root = state_root();
    let out = ovreplay()
        .arg("sessions")
        .arg("--state-dir")
        .arg(root.path())
        .assert()
        .success();
    insta::assert_snapshot!(String::from_utf8_lossy(&out.get_output().stdout), @r#"
    session                                      last activity            turns acked pending aside in doubt no stop uncaptured  last problem
    sess_doubt                                   2026-03-02T09:00:05.785Z     2     2       0     0        1       0          0  -
    sess_aside                                   2026-03-02T09:00:05.720Z     2     1       0     2        0       0          1  -
    sess_clean                                   2026-03-02T09:00:05.610Z     2     4       0     0        0       0          0  -
    sess_open                                    2026-03-02T09:00:05.220Z     2     2       0     0        0       1          0  -
    sess_offline                                 2026-03-02T09:00:03.231Z     1     0       2     0        0       0          0  undecodable record at 0:832: unknown codec version 9 (this build reads up to 2)
    5 session(s)
    "#);
}

#[test]
fn sessions_json() {
    let root = state_root();
    let out = ovreplay()
        .env("OVHOOK_STATE_DIR", root.path())
        .args(["sessions", "--json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 5);
    let open = rows
        .iter()
        .find(|r| r["session_id"] == "sess_open")
        .unwrap();
    assert_eq!(open["hooks_missing"], 1);
    assert_eq!(open["uncaptured"], 0);
    assert_eq!(open["turns"], 2);
    let aside = rows
        .iter()
        .find(|r| r["session_id"] == "sess_aside")
        .unwrap();
    assert_eq!(aside["set_aside"], 2);
    assert_eq!(aside["acked"], 1);
    // turn_b2: an empty Stop answer and no rollout read: its answer was never captured.
    assert_eq!(aside["uncaptured"], 1);
}

#[test]
fn no_state_root_is_no_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    ovreplay()
        .arg("sessions")
        .arg("--state-dir")
        .arg(tmp.path().join("missing"))
        .assert()
        .success()
        .stdout(predicate::str::contains("0 session(s)"));
}
