//! What the privacy rule removed is visible, as counts per kind and never the text:
//! `ovreplay sessions` (table and JSON) and `ovreplay why` on a journal holding `Redacted`.

use ov_engine::event::{Event, HookKind, HookReceived};
use ov_engine::privacy::Redactions;
use ov_engine::store::SessionStore;
use ov_journal::Durability;

use crate::ovreplay;

fn journal(root: &std::path::Path) -> std::path::PathBuf {
    let dir = root.join("journals").join("sess_private");
    let store = SessionStore::open(&dir).unwrap();
    let mut hook = Redactions::default();
    hook.add("private", 1);
    hook.add("openai-key", 2);
    let mut transcript = Redactions::default();
    transcript.add("jwt", 1);
    store
        .append_all(
            vec![
                Event::HookReceived(HookReceived {
                    kind: Some(HookKind::PromptSubmit),
                    harness: "zcode".into(),
                    session_id: Some("sess_private".into()),
                    turn_id: Some("turn_p".into()),
                    prompt: Some("deploy with [REDACTED:openai-key] now".into()),
                    ..HookReceived::default()
                }),
                Event::Redacted {
                    turn_id: Some("turn_p".into()),
                    origin: "hook".into(),
                    counts: hook,
                },
                Event::Redacted {
                    turn_id: Some("turn_p".into()),
                    origin: "transcript".into(),
                    counts: transcript,
                },
            ],
            Durability::Sync,
        )
        .unwrap();
    dir
}

#[test]
fn sessions_and_why_show_the_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = journal(tmp.path());
    let out = ovreplay()
        .args(["sessions", "--json", "--state-dir"])
        .arg(tmp.path())
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        v[0]["redacted"],
        serde_json::json!({"jwt": 1, "openai-key": 2, "private": 1})
    );
    let table = ovreplay()
        .args(["sessions", "--state-dir"])
        .arg(tmp.path())
        .assert()
        .success();
    let table = String::from_utf8_lossy(&table.get_output().stdout).into_owned();
    let row = table
        .lines()
        .find(|l| l.starts_with("sess_private"))
        .unwrap();
    assert!(row.split_whitespace().any(|c| c == "4"), "{table}");
    let why = ovreplay()
        .arg("why")
        .arg(&dir)
        .arg("turn_p")
        .assert()
        .success();
    let why = String::from_utf8_lossy(&why.get_output().stdout).into_owned();
    assert!(
        why.contains("redacted before it was journaled (hook): 2 openai-key, 1 private"),
        "{why}"
    );
    assert!(
        why.contains("redacted before it was journaled (transcript): 1 jwt"),
        "{why}"
    );
}
