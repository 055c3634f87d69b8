//! `ovreplay plan`.

use crate::{fixture, ovreplay, workspace};

fn plan(path: &std::path::Path) -> serde_json::Value {
    let out = ovreplay()
        .arg("plan")
        .arg(path)
        .arg("--json")
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let keys: Vec<&str> = ["turn_id", "role", "content"].into_iter().collect();
    if let Some(first) = text.find('{') {
        // The contract's key order.
        let obj = &text[first..];
        let pos: Vec<usize> = keys
            .iter()
            .map(|k| obj.find(&format!("\"{k}\"")).unwrap())
            .collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "key order: {text}");
    }
    serde_json::from_str(&text).expect("plan prints JSON")
}

#[test]
fn plan_of_the_fixture_is_one_user_and_one_assistant_message_per_complete_turn() {
    let t = |i: u32| format!("turn_00000000-0000-4000-8000-00000000000{i}");
    let want = serde_json::json!([
        {"turn_id": t(0), "role": "user", "content": "Use the Bash tool to compute 2+2 then give me the answer."},
        {"turn_id": t(0), "role": "assistant", "content": "The answer is 4."},
        {"turn_id": t(1), "role": "user", "content": "Which language should I use for a CLI?"},
        {"turn_id": t(1), "role": "assistant", "content": "Rust: fast startup and a single static binary."},
        {"turn_id": t(2), "role": "user", "content": "Read Cargo.toml and tell me the edition."},
        {"turn_id": t(2), "role": "assistant", "content": "The edition is 2021."},
        {"turn_id": t(3), "role": "user", "content": "Thanks! Summarise what we did."},
        {"turn_id": t(3), "role": "assistant", "content": "We computed 2+2, picked Rust, and read the edition."},
    ]);
    assert_eq!(plan(&fixture("five-turns.jsonl")), want);
}

#[test]
fn plan_table_without_json() {
    let out = ovreplay()
        .arg("plan")
        .arg(fixture("five-turns.jsonl"))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("8 message(s)"), "{text}");
    assert!(text.contains("The answer is 4."), "{text}");
}

/// Every committed session in `testdata/sessions/` plans to its `<name>.expected.json`.
#[test]
fn plan_matches_the_committed_sessions() {
    let dir = workspace().join("testdata/sessions");
    let mut checked = 0;
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!("testdata/sessions is not there yet ({e}): it comes from the generator")
    });
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".jsonl") else {
            continue;
        };
        let expected = dir.join(format!("{stem}.expected.json"));
        let want: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&expected)
                .unwrap_or_else(|e| panic!("{}: {e}", expected.display())),
        )
        .unwrap();
        assert_eq!(plan(&path), want, "{name}");
        checked += 1;
    }
    assert!(checked > 0, "no sessions in {}", dir.display());
}
