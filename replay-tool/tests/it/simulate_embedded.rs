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

/// Every count that is not as it should be names its turns, with the reason in a sentence, in
/// `--json` (`why`) and in the text report; a turn count names exactly that many turns.
#[test]
fn every_count_that_is_not_zero_names_its_turns_and_why() {
    for name in ["five-turns.jsonl", "partial-tail.jsonl"] {
        let f = fixture(name);
        let (code, r, err) =
            simulate(&[f.to_str().unwrap(), "--ovhook", ovhook().to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {err}");
        let why = r["why"].as_array().expect("why");
        let named = |count: &str| -> Vec<String> {
            why.iter()
                .filter(|w| w["count"] == count)
                .flat_map(|w| {
                    assert!(
                        w["text"].as_str().is_some_and(|t| t.len() > 20),
                        "{name}: a sentence: {w}"
                    );
                    w["turns"].as_array().expect("turns").clone()
                })
                .map(|t| t.as_str().expect("turn").to_owned())
                .collect()
        };
        for count in ["lost", "unexpected_turns", "incomplete_turns"] {
            assert_eq!(
                named(count).len() as u64,
                r[count].as_u64().expect("count"),
                "{name} {count}: {r}"
            );
        }
        for count in ["duplicates", "content_mismatches", "secrets_leaked"] {
            assert_eq!(
                r[count] == 0,
                named(count).is_empty(),
                "{name} {count}: {r}"
            );
        }
        let incomplete = named("incomplete_turns");
        assert_eq!(incomplete.len(), 1, "{name}: {r}");
        let reason = why
            .iter()
            .find(|w| w["count"] == "incomplete_turns")
            .and_then(|w| w["text"].as_str())
            .expect("reason");
        assert!(
            reason.contains("never ended the turn") || reason.contains("cut off"),
            "{name}: {reason}"
        );
        assert!(reason.contains("why: "), "why's verdict: {reason}");
    }

    // A damaged journal names its damaged ranges and what the engine recorded.
    let f = fixture("five-turns.jsonl");
    let (code, r, err) = simulate(&[
        f.to_str().unwrap(),
        "--ovhook",
        ovhook().to_str().unwrap(),
        "--faults",
        "forge-frame@1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(r["journal_damage"].as_u64().unwrap() > 0, "{r}");
    let damage: Vec<&serde_json::Value> = r["why"]
        .as_array()
        .expect("why")
        .iter()
        .filter(|w| w["count"] == "journal_damage")
        .collect();
    assert_eq!(damage.len(), 1, "{r}");
    let ranges = damage[0]["turns"].as_array().expect("ranges");
    assert!(
        ranges
            .iter()
            .any(|d| d.as_str().unwrap().starts_with("segment ")),
        "{r}"
    );

    // The text report says the same, one line per reason under the counts.
    let f = fixture("five-turns.jsonl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ovreplay"))
        .args(["simulate", f.to_str().unwrap(), "--ovhook"])
        .arg(ovhook())
        .env("OPENVIKING_URL", "off")
        .output()
        .expect("simulate");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("  incomplete turns: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(" (turn 4) — "), "{line}");
}
