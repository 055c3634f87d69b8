//! `ovreplay follow`: events appended while it runs are printed.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ov_engine::event::Event;
use ov_engine::store::SessionStore;
use predicates::prelude::*;

use crate::{copy_journal, golden, ovreplay};

/// A running `ovreplay follow`, killed on drop; its stdout lines arrive on a channel.
struct Follow {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Follow {
    fn spawn(args: &[&std::ffi::OsStr]) -> Follow {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("ovreplay"))
            .arg("follow")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("follow starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Follow { child, lines }
    }

    /// Appends a problem event to `dir` every 300 ms (follow may not have read the journal's end
    /// yet when the first lands) until a line containing `marker` comes out; returns it.
    fn until(&self, dir: &Path, marker: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        let store = SessionStore::open(dir).expect("open the journal");
        while Instant::now() < deadline {
            store
                .append(
                    Event::Problem {
                        context: "test".into(),
                        message: marker.into(),
                    },
                    ov_journal::Durability::Sync,
                )
                .expect("append");
            match self.lines.recv_timeout(Duration::from_millis(300)) {
                Ok(line) if line.contains(marker) => return line,
                Ok(line) => panic!("follow printed an old or foreign event: {line}"),
                Err(_) => {}
            }
        }
        panic!("follow printed nothing for {marker} within 20 s");
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn follow_one_journal_prints_only_new_events() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sess_clean");
    copy_journal(&golden("clean"), &dir);
    let f = Follow::spawn(&[dir.as_os_str()]);
    let line = f.until(&dir, "hello from the test");
    assert!(line.contains(" problem "), "{line}");
    assert!(line.contains(r#"test: "hello from the test""#), "{line}");
}

#[test]
fn follow_a_folder_json_includes_new_journals() {
    let tmp = tempfile::tempdir().unwrap();
    let journals = tmp.path().join("journals");
    copy_journal(&golden("no_stop"), &journals.join("sess_open"));
    let f = Follow::spawn(&[
        "--json".as_ref(),
        "--state-dir".as_ref(),
        tmp.path().as_os_str(),
    ]);
    let old = journals.join("sess_open");
    let line = f.until(&old, "on an old journal");
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["journal"], "sess_open");
    assert_eq!(v["kind"], "problem");
    assert_eq!(v["event"]["Problem"]["message"], "on an old journal");
    // A session that starts while follow runs is printed from its first event.
    let new = journals.join("sess_new");
    let line = f.until(&new, "on a new journal");
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["journal"], "sess_new");
    assert_eq!(v["position"], "0:32");
}

#[test]
fn follow_exit_codes() {
    ovreplay()
        .args(["follow", "/nonexistent/journal"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is not a journal"));
    let tmp = tempfile::tempdir().unwrap();
    ovreplay()
        .args(["follow", "--state-dir"])
        .arg(tmp.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no journals folder"));
}
