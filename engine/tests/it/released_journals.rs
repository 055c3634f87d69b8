//! Every released journal format stays readable: `testdata/journal-sessions/released/` keeps one journal
//! per released (journal format, codec) version pair, never regenerated and never edited. This
//! build must open each, fold it to the recorded state and leave its segment files untouched.
//!
//! A format or codec version bump adds a directory `journal-v<J>-codec-v<C>/` (a test below
//! fails until it exists) and keeps every older one.

use std::fs;
use std::path::{Path, PathBuf};

use ov_engine::store::SessionStore;
use serde_json::Value;

fn released_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/journal-sessions/released")
}

fn released() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(released_dir())
        .expect("testdata/journal-sessions/released")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn segments(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "ovj"))
        .map(|p| {
            (
                p.file_name().expect("name").to_string_lossy().into_owned(),
                fs::read(&p).expect("read"),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_current_versions_have_a_released_golden_journal() {
    let name = format!(
        "journal-v{}-codec-v{}",
        ov_journal::FORMAT_VERSION,
        ov_engine::codec::CODEC_VERSION
    );
    assert!(
        released_dir().join(&name).is_dir(),
        "no released golden journal {name}: add one (a copy of a generated journal) and keep \
         every older directory"
    );
    // Snapshots have their own version; the first one had no golden journal of its own.
    let snapshot = ov_engine::codec::SNAPSHOT_VERSION;
    if snapshot > 1 {
        let name = format!("{name}-snapshot-v{snapshot}");
        let dir = released_dir().join(&name);
        assert!(
            dir.is_dir(),
            "no released golden journal {name}: add a compacted journal written by this build"
        );
        let reader = ov_journal::Reader::open(&dir, std::time::Duration::from_secs(5))
            .expect("open the golden");
        let written = reader
            .latest_snapshot()
            .and_then(|f| f.payload.first().copied());
        assert_eq!(
            written,
            Some(snapshot),
            "{name} holds a snapshot of this version"
        );
    }
}

#[test]
fn every_released_journal_opens_folds_and_is_never_rewritten() {
    let dirs = released();
    assert!(!dirs.is_empty());
    for dir in dirs {
        let expected: Value =
            serde_json::from_slice(&fs::read(dir.join("expected.json")).expect("expected.json"))
                .expect("json");
        let tmp = tempfile::tempdir().expect("tmp");
        let copy = tmp.path().join("journal");
        fs::create_dir_all(&copy).expect("mkdir");
        for (name, bytes) in segments(&dir) {
            fs::write(copy.join(name), bytes).expect("copy");
        }
        let before = segments(&copy);
        let store = SessionStore::open(&copy).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let folded = store.fold().expect("fold");
        assert!(
            folded.skipped.is_empty(),
            "{}: {:?}",
            dir.display(),
            folded.skipped
        );
        let st = &folded.state;
        let got = serde_json::json!({
            "session_id": st.session_id,
            "events": st.events,
            "acked": st.commit.acked_total,
            "outbox": st.outbox().len(),
        });
        assert_eq!(got, expected, "{}", dir.display());
        drop(store);
        assert_eq!(
            segments(&copy),
            before,
            "{}: a segment was rewritten",
            dir.display()
        );
    }
}

/// Journals of an older journal format version migrate on their first append: the older
/// segments stay byte for byte as they are (read with their own version's rules), the event
/// goes to a new segment of the current format version, and the fold sees everything.
#[test]
fn released_journals_of_an_older_format_migrate_on_the_first_append() {
    let mut migrated = 0;
    for dir in released() {
        let before = segments(&dir);
        let old = before
            .iter()
            .all(|(_, b)| b.get(8..12) != Some(&ov_journal::FORMAT_VERSION.to_le_bytes()[..]));
        if !old {
            continue;
        }
        let tmp = tempfile::tempdir().expect("tmp");
        let copy = tmp.path().join("journal");
        fs::create_dir_all(&copy).expect("mkdir");
        for (name, bytes) in &before {
            fs::write(copy.join(name), bytes).expect("copy");
        }
        let store = SessionStore::open(&copy).expect("open");
        let events = store.fold().expect("fold").state.events;
        let env = store
            .append(
                ov_engine::event::Event::Problem {
                    context: "test".into(),
                    message: "after migration".into(),
                },
                ov_journal::Durability::Sync,
            )
            .expect("append");
        drop(env);
        let after = segments(&copy);
        assert_eq!(after.len(), before.len() + 1, "{}", dir.display());
        assert_eq!(&after[..before.len()], &before[..], "{}", dir.display());
        let (_, new) = after.last().expect("the new segment");
        assert_eq!(
            new.get(8..12),
            Some(&ov_journal::FORMAT_VERSION.to_le_bytes()[..]),
            "{}",
            dir.display()
        );
        let folded = store.fold().expect("fold");
        assert!(folded.skipped.is_empty(), "{}", dir.display());
        assert_eq!(folded.state.events, events + 1, "{}", dir.display());
        assert!(!folded.lost, "{}", dir.display());
        migrated += 1;
    }
    assert!(migrated >= 3, "the released version 1 journals");
}

/// A version-3 snapshot is converted and brought to what today's fold keeps: what today's
/// fold of the events it was made of delivers (delivered records let go, identities kept).
#[test]
fn a_version_3_snapshot_reads_as_the_fold_of_its_events() {
    let fold = |name: &str| {
        let tmp = tempfile::tempdir().expect("tmp");
        for (file, bytes) in segments(&released_dir().join(name)) {
            fs::write(tmp.path().join(file), bytes).expect("copy");
        }
        let store = SessionStore::open(tmp.path()).expect("open");
        store.fold().expect("fold")
    };
    let snapshot = fold("journal-v2-codec-v2-snapshot-v3");
    let events = fold("journal-v2-codec-v2");
    assert!(snapshot.from_snapshot && !events.from_snapshot);
    // (A version-3 snapshot has no hook times: its turn book differs in those only.)
    let (a, b) = (&snapshot.state, &events.state);
    assert_eq!(a.delivered, b.delivered);
    assert_eq!(a.messages, b.messages);
    assert_eq!(
        (a.records_let_go, a.cursor(), &a.commit, &a.turns),
        (b.records_let_go, b.cursor(), &b.commit, &b.turns)
    );
    assert!(
        snapshot.state.messages.is_empty(),
        "delivered records are let go"
    );
    assert_eq!(snapshot.state.delivered.len(), 4);
}
