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
    session                                      last activity            turns acked pending aside in doubt no stop uncaptured withheld damaged redacted  last problem
    sess_doubt                                   2026-03-02T09:00:05.785Z     2     2       0     0        1       0          0        0       0        0  -
    sess_aside                                   2026-03-02T09:00:05.720Z     2     1       0     2        0       0          1        0       0        0  -
    sess_clean                                   2026-03-02T09:00:05.610Z     2     4       0     0        0       0          0        0       0        0  -
    sess_open                                    2026-03-02T09:00:05.220Z     2     2       0     0        0       1          0        0       0        0  -
    sess_offline                                 2026-03-02T09:00:03.231Z     1     0       2     0        0       0          0        0       0        0  undecodable record at 0:854: unknown codec version 9 (this build reads up to 3)
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
    assert_eq!(
        open["withheld"], 0,
        "every turn of the golden journals was seen by a hook"
    );
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

/// Claude Code's transcript at `path` read by the real reader (its line limit included).
struct Transcript(std::path::PathBuf);

impl ov_engine::delivery::TranscriptSource for Transcript {
    fn read(
        &self,
        resume: Option<(ov_engine::turn::FileIdentity, u64)>,
    ) -> std::io::Result<Option<ov_engine::turn::TranscriptChunk>> {
        self.read_after(resume, None)
    }
    fn read_after(
        &self,
        resume: Option<(ov_engine::turn::FileIdentity, u64)>,
        last_turn: Option<&str>,
    ) -> std::io::Result<Option<ov_engine::turn::TranscriptChunk>> {
        ov_engine::transcript::claude_code::read_chunk(&self.0, resume, last_turn)
    }
    fn path(&self) -> String {
        self.0.display().to_string()
    }
}

/// An answer line of 120 MB is over the transcript line limit (64 MiB): it is skipped, and
/// `sessions` shows it as the session's problem, naming the turn that ended without its
/// answer; `why` of that turn says a line of its range was skipped.
#[test]
fn an_answer_line_over_the_line_limit_is_a_problem() {
    use std::io::Write;

    use ov_engine::event::{Event, HookKind, HookReceived};
    use ov_journal::Durability;

    let root = tempfile::tempdir().unwrap();
    let transcript = root.path().join("t.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&transcript).unwrap());
    let user = |id: &str, text: &str| {
        serde_json::json!({"type": "user", "promptId": id, "message": {"role": "user", "content": text}})
            .to_string()
    };
    writeln!(f, "{}", user("p1", "write the whole report")).unwrap();
    // The answer, written as it streams: 120 MB of text in one line.
    f.write_all(br#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":""#)
        .unwrap();
    let block = [b'x'; 1 << 20];
    for _ in 0..120 {
        f.write_all(&block).unwrap();
    }
    f.write_all(b"\"}]}}\n").unwrap();
    writeln!(f, "{}", user("p2", "thanks")).unwrap();
    f.into_inner().unwrap().sync_all().unwrap();
    assert!(
        std::fs::metadata(&transcript).unwrap().len()
            > ov_engine::transcript::tail::MAX_LINE_BYTES as u64
    );

    let store =
        ov_engine::store::SessionStore::open(&root.path().join("journals/sess_big")).unwrap();
    for (kind, turn) in [(HookKind::PromptSubmit, "p1"), (HookKind::Stop, "p1")] {
        let h = HookReceived {
            kind: Some(kind),
            harness: "claude-code".into(),
            session_id: Some("sess_big".into()),
            turn_id: Some(turn.into()),
            ..HookReceived::default()
        };
        store
            .append(Event::HookReceived(h), Durability::Buffered)
            .unwrap();
    }
    let settings = ov_engine::delivery::DeliverySettings::new("cc-sess_big".into());
    ov_engine::delivery::deliver(&store, Some(&Transcript(transcript)), None, &settings).unwrap();
    drop(store);

    let out = ovreplay()
        .args(["sessions", "--json", "--state-dir"])
        .arg(root.path())
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let problem = v[0]["last_problem"].as_str().unwrap_or_default();
    assert!(
        problem.contains("1 line(s)")
            && problem.contains("64 MiB")
            && problem.contains("without an answer: turn p1"),
        "{problem}"
    );
    let out = ovreplay()
        .args(["why"])
        .arg(root.path().join("journals/sess_big"))
        .arg("p1")
        .assert()
        .success();
    let story = String::from_utf8_lossy(&out.get_output().stdout);
    assert!(story.contains("1 line(s) of that range skipped"), "{story}");
}

/// A damaged range in a session's journal is counted in its row and named as its last problem.
#[test]
fn damage_is_reported_per_session() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("journals").join("sess_clean");
    copy_journal(&golden("clean"), &dir);
    let seg = dir.join("0000000000000000.ovj");
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x10;
    std::fs::write(&seg, &bytes).unwrap();
    let out = ovreplay()
        .arg("sessions")
        .arg("--state-dir")
        .arg(tmp.path())
        .arg("--json")
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let row = &v.as_array().unwrap()[0];
    assert_eq!(row["damaged"], 1, "{row}");
    assert!(
        row["last_problem"]
            .as_str()
            .unwrap()
            .starts_with("damaged at 0:"),
        "{row}"
    );
}
