//! `simulate` on the embedded default (no server): the real ovhook, journal only.

use crate::{fixture, ovhook, simulate};

#[test]
fn embedded_default_counts_complete_turns() {
    for (name, complete, incomplete) in [("five-turns.jsonl", 4, 1), ("partial-tail.jsonl", 2, 1)] {
        let f = fixture(name);
        let (code, r, err) =
            simulate(&[f.to_str().unwrap(), "--ovhook", ovhook().to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(r["expected"], complete, "{name}: {r}");
        assert_eq!(r["delivered"], 0, "{name}: {r}");
        assert_eq!(r["mode"], "embedded");
        assert_eq!(r["incomplete_turns"], incomplete, "{name}: {r}");
        assert_eq!(r["hook_violations"], 0, "{name}: {r} {err}");
        assert!(r["session_id"].as_str().unwrap().starts_with("sess_"));
        assert_ne!(r["session_id"], r["recorded_session_id"]);
    }
}

#[test]
fn keep_leaves_the_rollout_as_recorded_but_for_the_session_id() {
    let f = fixture("partial-tail.jsonl");
    let (code, r, err) = simulate(&[
        f.to_str().unwrap(),
        "--ovhook",
        ovhook().to_str().unwrap(),
        "--keep",
    ]);
    assert_eq!(code, 0, "{err}");
    let kept = std::path::PathBuf::from(r["kept"].as_str().expect("kept path"));
    let sid = r["session_id"].as_str().unwrap();
    let rec = r["recorded_session_id"].as_str().unwrap();
    let played = kept.join(format!("home/.zcode/cli/rollout/model-io-{sid}.jsonl"));
    let played = std::fs::read_to_string(&played).unwrap();
    let recorded = std::fs::read_to_string(&f).unwrap();
    assert_eq!(played.replace(&sid[5..], &rec[5..]), recorded);
    assert!(
        !played.ends_with('\n'),
        "the recorded partial line stays partial"
    );
    assert!(
        kept.join("state/journals").join(sid).is_dir(),
        "ovhook journaled the session"
    );
    std::fs::remove_dir_all(&kept).unwrap();
}
