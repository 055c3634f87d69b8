//! The generator is deterministic and writes the real line shape.
#![expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]

use ov_testdata::{committed, random, write_session, Rng};

fn bytes(spec: &ov_testdata::SessionSpec) -> Vec<u8> {
    let mut v = Vec::new();
    write_session(spec, &mut v).unwrap_or_default();
    v
}

#[test]
fn same_spec_same_bytes_and_different_seeds_differ() {
    let a = random(42, 6);
    assert_eq!(bytes(&a), bytes(&a.clone()));
    assert_ne!(bytes(&a), bytes(&random(43, 6)));
}

#[test]
fn lines_have_the_model_io_fields() -> Result<(), serde_json::Error> {
    let spec = committed()
        .into_iter()
        .find(|s| s.name == "retries_titles")
        .unwrap_or_else(|| random(1, 3));
    let b = bytes(&spec);
    let text = String::from_utf8_lossy(&b);
    let mut sources = std::collections::BTreeSet::new();
    let mut attempts = std::collections::BTreeSet::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        for k in [
            "type",
            "sessionId",
            "turnId",
            "traceId",
            "requestId",
            "attempt",
            "querySource",
            "startedAt",
            "completedAt",
            "durationMs",
            "model",
            "request",
            "response",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
        for k in [
            "body",
            "headers",
            "maxOutputTokens",
            "messages",
            "providerOptions",
            "toolNames",
            "messageCount",
            "messagesKind",
            "messageOffset",
        ] {
            assert!(v["request"].get(k).is_some(), "missing request.{k}");
        }
        assert!(v["sessionId"]
            .as_str()
            .is_some_and(|s| s.starts_with("sess_")));
        assert!(v["turnId"]
            .as_str()
            .is_some_and(|s| s.starts_with("turn_") && s.len() == 41));
        assert!(v["startedAt"]
            .as_str()
            .is_some_and(|s| s.starts_with("2026-07-03T") && s.ends_with('Z')));
        sources.insert(v["querySource"].as_str().unwrap_or("").to_owned());
        attempts.insert(v["attempt"].as_u64().unwrap_or(0));
    }
    assert!(sources.contains("session_title") && sources.contains("main_turn"));
    assert!(attempts.contains(&2));
    Ok(())
}

#[test]
fn partial_last_line_has_no_newline() {
    let spec = committed()
        .into_iter()
        .find(|s| s.name == "partial_last_line")
        .unwrap_or_else(|| random(1, 3));
    let b = bytes(&spec);
    assert_ne!(b.last(), Some(&b'\n'));
}

#[test]
fn rng_uuid_shape() {
    let mut r = Rng::new(7);
    let u = r.uuid();
    assert_eq!(u.len(), 36);
    assert_eq!(u.as_bytes()[14], b'4');
    assert_ne!(u, r.uuid());
}
