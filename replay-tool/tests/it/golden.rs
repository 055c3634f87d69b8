//! The committed golden journals are exactly what their generator writes.

#[path = "../../../testdata/journal-sessions/scenarios.rs"]
#[expect(dead_code)]
// NOTE: the pid/time constants are for the generator; the test uses only the scenarios.
mod scenarios;

use crate::golden;

#[test]
fn golden_journals_match_their_generator() {
    let tmp = tempfile::tempdir().unwrap();
    for s in scenarios::scenarios() {
        let fresh = tmp.path().join(s.name);
        scenarios::write(&fresh, &s.records).unwrap();
        let committed = golden(s.name);
        let seg = "0000000000000000.ovj";
        let a = std::fs::read(fresh.join(seg)).unwrap();
        let b = std::fs::read(committed.join(seg))
            .unwrap_or_else(|e| panic!("{}: {e} (run the generator)", committed.display()));
        assert!(
            a == b,
            "testdata/journal-sessions/{} differs from its generator: cargo run -p ovreplay --example gen_journals",
            s.name
        );
    }
}

/// The journals version 1 of the event codec wrote (`testdata/journal-sessions/v1/`, kept forever)
/// still decode, record by record, to the events their scenarios journal today.
/// `env` as version 1 could write it: without the times version 3 added.
fn untimed(env: &ov_engine::event::Envelope) -> ov_engine::event::Envelope {
    use ov_engine::event::Event;
    let mut env = env.clone();
    match &mut env.event {
        Event::MessagesPlanned { messages } => {
            for m in messages {
                m.created_at_ms = None;
            }
        }
        Event::RolloutRead { chunk, .. } => {
            for f in &mut chunk.fragments {
                f.prompt_ms = None;
                f.answer_ms = None;
            }
        }
        _ => {}
    }
    env
}

#[test]
fn version_1_journals_decode_to_todays_events() {
    for s in scenarios::scenarios() {
        let dir = golden("v1").join(s.name);
        let reader = ov_journal::Reader::open(&dir, std::time::Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let frames: Vec<_> = reader
            .frames_from(reader.start())
            .map(|f| f.unwrap().payload.to_vec())
            .collect();
        assert_eq!(frames.len(), s.records.len(), "{}", s.name);
        for (bytes, record) in frames.iter().zip(&s.records) {
            match record {
                scenarios::Record::Event(env) => {
                    assert_eq!(
                        bytes.first(),
                        Some(&1),
                        "{}: not a version-1 record",
                        s.name
                    );
                    let decoded = ov_engine::codec::decode_event(bytes)
                        .unwrap_or_else(|e| panic!("{}: {e}", s.name));
                    assert_eq!(decoded, untimed(env), "{}", s.name);
                }
                scenarios::Record::Raw(raw) => assert_eq!(bytes, raw, "{}", s.name),
            }
        }
    }
}
