//! `ovreplay compact`: a snapshot segment, the same folded state before and after.

use predicates::prelude::*;

use crate::{copy_journal, golden, ovreplay};

fn state_json(dir: &std::path::Path) -> serde_json::Value {
    let out = ovreplay()
        .arg("state")
        .arg(dir)
        .arg("--json")
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    v["state"].clone()
}

#[test]
fn compact_keeps_the_folded_state() {
    for name in ["clean", "in_doubt", "set_aside", "no_stop"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(name);
        copy_journal(&golden(name), &dir);
        let before = state_json(&dir);
        ovreplay()
            .arg("compact")
            .arg(&dir)
            .assert()
            .success()
            .stdout(predicate::str::contains(
                "snapshot at 1:32, 1 old segment(s) removed",
            ))
            .stdout(predicate::str::contains("same state before and after"));
        assert_eq!(state_json(&dir), before, "{name}: state changed by compact");
        assert!(!dir.join("0000000000000000.ovj").exists());
        ovreplay()
            .arg("dump")
            .arg(&dir)
            .assert()
            .success()
            .stdout(predicate::str::starts_with("1:32       -"))
            .stdout(predicate::str::contains("snapshot"));
    }
}

#[test]
fn compacted_journal_keeps_growing_and_folding() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("j");
    copy_journal(&golden("in_doubt"), &dir);
    ovreplay().arg("compact").arg(&dir).assert().success();
    // The in-doubt send of turn_b2 is acknowledged after the compaction.
    let store = ov_engine::store::SessionStore::open(&dir).unwrap();
    store
        .append(
            ov_engine::event::Event::SendAcked { send_id: 2 },
            ov_journal::Durability::Sync,
        )
        .unwrap();
    drop(store);
    let out = ovreplay()
        .arg("why")
        .arg(&dir)
        .arg("turn_b2")
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("the journal was compacted"), "{text}");
    assert!(text.contains("send 2 acknowledged by the server"), "{text}");
    assert!(text.contains("verdict: on the server"), "{text}");
    // Compacting twice is fine.
    ovreplay().arg("compact").arg(&dir).assert().success();
}

#[test]
fn compact_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let not_a_journal = tmp.path().join("empty");
    std::fs::create_dir(&not_a_journal).unwrap();
    ovreplay()
        .arg("compact")
        .arg(&not_a_journal)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is not a journal"));
    assert!(
        std::fs::read_dir(&not_a_journal).unwrap().next().is_none(),
        "compact must not create a journal"
    );
    ovreplay()
        .args(["compact", "/nonexistent/journal"])
        .assert()
        .code(1);
    ovreplay().args(["compact"]).assert().code(2);
}
