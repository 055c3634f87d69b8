//! The one place that turns events and snapshots into bytes and back.
//!
//! Format of a journal record payload:
//!
//! ```text
//! // Format: { version:u8 | tag:u8 | body: bincode 2.0.1 (standard config: little-endian varints) }
//! ```
//!
//! * `version` is [`CODEC_VERSION`] for events and [`SNAPSHOT_VERSION`] for
//!   snapshots written by this build. An event of an older version is decoded
//!   through its frozen types (`codec/v1.rs`, `codec/v2.rs`) and converted; a newer version is
//!   refused with [`CodecError::UnknownVersion`], never guessed at. A snapshot of version 4
//!   is today's layout without its last field (decoded with `None` there); one of
//!   version 3 is decoded through its frozen types (`codec/snapshot_v3.rs`) and
//!   converted; an older layout is refused with [`CodecError::OldSnapshot`]: a snapshot
//!   is a cache of the fold, and the store folds from an older snapshot or the events
//!   instead.
//!
//! | event version | change |
//! |---|---|
//! | 1 | first version |
//! | 2 | `HookReceived::response_preview` (Stop's `responsePreview`, kept apart from `responseText`); `TurnFragment::trace_id` (one identity per turn whichever source names it first), `TurnFragment::prompt_at` and `TurnFragment::steering` (what the user typed into a running turn) |
//! | 3 | `PlannedMessage::created_at_ms` (when the message was written, sent as `created_at`); `TurnFragment::prompt_ms` and `TurnFragment::answer_ms` (the transcript's times of the prompt and of the answer) |
//!
//! | snapshot version | change |
//! |---|---|
//! | 1 | first version |
//! | 2 | `State::acks_unverified` appended (a version-1 body plus one 0 byte) |
//! | 3 | the turn book's records and rollout fragments gained the fields of event version 2; versions 1 and 2 are refused ([`CodecError::OldSnapshot`]) |
//! | 4 | the fields of event version 3 in the turn book's fragments, `TurnRecord::{prompt_hook_ms, stop_hook_ms}`, `MessageRecord::created_at_ms`; consent: `TurnRecord::{hook_seen, refused}`, the book's refused turn ids, `State::forgotten_at_ms`; privacy: `State::redactions` (counts of what the privacy rule removed); version 3 is decoded through its frozen types and converted (no times; a hook saw a turn when the version-3 record or the liveness says so), versions 1 and 2 are refused; `State::delivered` (identities of delivered messages, 8 bytes each, whose records are let go), `State::delivered_cursor`, `State::records_let_go` appended (a converted version 3 lets go of its settled records as a fold would) |
//! | 5 | `State::transcript_path` appended (the file a Stop payload named, `Event::TranscriptNamed`), then `State::tool_calls` and `State::planned_tools` (tool calls of turns not yet planned, and of planned messages to be sent): a version-4 body plus three 0 bytes (`None`, two empty collections) |
//! * `tag` is [`TAG_EVENT`] for an [`Envelope`] and [`TAG_SNAPSHOT`] for a
//!   projector [`State`] snapshot.
//!
//! bincode is pinned to `=2.0.1` (3.0.0 is a tombstone); the golden-byte tests
//! below fail if an upgrade changes a single byte.
//!
//! [`crate::event::Event`] is append-only: bincode writes a variant's index, so a
//! new variant goes last (e.g. `CommitTraced`, index 19, after `Problem`; `Redacted`, index
//! 25, after `Forgotten`) and
//! every older journal decodes unchanged without a version bump.

use serde::{de::DeserializeOwned, Serialize};

use crate::event::Envelope;
use crate::projector::State;

mod snapshot_v3;
mod v1;
mod v2;

/// Version byte of event records written by this build.
pub const CODEC_VERSION: u8 = 3;
/// Version byte of snapshots written by this build.
pub const SNAPSHOT_VERSION: u8 = 5;
/// Tag of an event record.
pub const TAG_EVENT: u8 = 1;
/// Tag of a state snapshot record.
pub const TAG_SNAPSHOT: u8 = 2;
/// Largest body the decoder accepts (matches the journal's frame cap).
pub const MAX_BODY: usize = 64 << 20;

/// Why a payload could not be decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// Fewer than the two header bytes.
    #[error("record too short ({len} bytes)")]
    TooShort {
        /// Payload length.
        len: usize,
    },
    /// Written by a newer (or unknown) codec version.
    #[error("unknown codec version {version} (this build reads up to {CODEC_VERSION})")]
    UnknownVersion {
        /// The version byte found.
        version: u8,
    },
    /// The tag is not the one expected here.
    #[error("unexpected record tag {found} (expected {expected})")]
    WrongTag {
        /// Tag found.
        found: u8,
        /// Tag expected.
        expected: u8,
    },
    /// The body does not decode.
    #[error("undecodable body: {0}")]
    Body(String),
    /// Bytes left over after the body.
    #[error("{extra} trailing bytes after the body")]
    Trailing {
        /// How many.
        extra: usize,
    },
    /// A snapshot of an older layout: fold from an older snapshot or the events instead.
    #[error(
        "snapshot of version {version} (this build writes {SNAPSHOT_VERSION}): refold the events"
    )]
    OldSnapshot {
        /// The version byte found.
        version: u8,
    },
    /// Encoding failed (a bug: every event is encodable).
    #[error("could not encode: {0}")]
    Encode(String),
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<MAX_BODY>()
}

fn encode_tagged<T: Serialize>(
    version: u8,
    tag: u8,
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    out.clear();
    out.push(version);
    out.push(tag);
    bincode::serde::encode_into_std_write(value, out, config())
        .map_err(|e| CodecError::Encode(e.to_string()))?;
    Ok(())
}

/// Splits `{ version | tag | body }`, checking the tag; returns the version and the body.
fn split_tagged(tag: u8, bytes: &[u8]) -> Result<(u8, &[u8]), CodecError> {
    let (&version, rest) = bytes
        .split_first()
        .ok_or(CodecError::TooShort { len: bytes.len() })?;
    let (&found, body) = rest
        .split_first()
        .ok_or(CodecError::TooShort { len: bytes.len() })?;
    if found != tag && version != 0 && version <= CODEC_VERSION.max(SNAPSHOT_VERSION) {
        return Err(CodecError::WrongTag {
            found,
            expected: tag,
        });
    }
    Ok((version, body))
}

fn decode_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, CodecError> {
    let (value, used) = bincode::serde::decode_from_slice::<T, _>(body, config())
        .map_err(|e| CodecError::Body(e.to_string()))?;
    if used != body.len() {
        return Err(CodecError::Trailing {
            extra: body.len() - used,
        });
    }
    Ok(value)
}

/// Encodes an event record into `out` (cleared first; reuse it across calls).
pub fn encode_event(envelope: &Envelope, out: &mut Vec<u8>) -> Result<(), CodecError> {
    encode_tagged(CODEC_VERSION, TAG_EVENT, envelope, out)
}

/// Decodes an event record of any version this build knows.
pub fn decode_event(bytes: &[u8]) -> Result<Envelope, CodecError> {
    let (version, body) = split_tagged(TAG_EVENT, bytes)?;
    match version {
        CODEC_VERSION => decode_body(body),
        2 => decode_body::<v2::Envelope>(body).map(Into::into),
        1 => decode_body::<v1::Envelope>(body).map(Into::into),
        version => Err(CodecError::UnknownVersion { version }),
    }
}

/// Encodes a state snapshot ([`SNAPSHOT_VERSION`]).
// Format: { version:u8 (5) | tag:u8 (2) | body: bincode(State) }
pub fn encode_snapshot(state: &State, out: &mut Vec<u8>) -> Result<(), CodecError> {
    encode_tagged(SNAPSHOT_VERSION, TAG_SNAPSHOT, state, out)
}

/// Decodes a state snapshot of this build's version, of version 4 (today's layout but for the
/// fields version 5 appended, `State::transcript_path`, `State::tool_calls` and
/// `State::planned_tools`: its body plus three 0 bytes, `None` and two empty collections) or of
/// version 3 (converted, then its settled records let go as a fold would have); an older one is
/// [`CodecError::OldSnapshot`] (its turn book has another layout).
pub fn decode_snapshot(bytes: &[u8]) -> Result<State, CodecError> {
    let (version, body) = split_tagged(TAG_SNAPSHOT, bytes)?;
    match version {
        SNAPSHOT_VERSION => decode_body(body),
        4 => {
            // Version 5 appended `transcript_path` (an Option), `tool_calls` (a Vec) and
            // `planned_tools` (a map): `None` and each empty one is the varint 0.
            let mut v5 = Vec::with_capacity(body.len() + 3);
            v5.extend_from_slice(body);
            v5.extend_from_slice(&[0, 0, 0]);
            decode_body(&v5)
        }
        3 => decode_body::<snapshot_v3::State>(body).map(|s| State::from(s).upgraded()),
        1 | 2 => Err(CodecError::OldSnapshot { version }),
        version => Err(CodecError::UnknownVersion { version }),
    }
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use crate::event::{Event, HookKind, HookReceived, PlannedMessage};
    use crate::turn::{DedupKey, Role};

    fn sample() -> Vec<Envelope> {
        vec![
            Envelope {
                at_ms: 1_796_212_624_251,
                pid: 4242,
                event: Event::HookReceived(HookReceived {
                    kind: Some(HookKind::PromptSubmit),
                    harness: "zcode".into(),
                    session_id: Some("sess_1".into()),
                    turn_id: Some("turn_a".into()),
                    prompt: Some("hi".into()),
                    raw_len: 99,
                    ..HookReceived::default()
                }),
            },
            Envelope {
                at_ms: 1_796_212_624_300,
                pid: 4243,
                event: Event::MessagesPlanned {
                    messages: vec![PlannedMessage {
                        key: DedupKey::for_turn("turn_a", Role::User),
                        turn_id: Some("turn_a".into()),
                        role: Role::User,
                        content: "hi".into(),
                        raw_len: 2,
                        interrupted: false,
                        created_at_ms: None,
                    }],
                },
            },
            Envelope {
                at_ms: 1_796_212_624_400,
                pid: 4243,
                event: Event::SendFailed {
                    send_id: 7,
                    status: 503,
                    retryable: true,
                    error: "busy".into(),
                    request_sent: true,
                },
            },
            Envelope {
                at_ms: 1_796_212_624_500,
                pid: 4243,
                event: Event::CommitTraced {
                    commit_id: 3,
                    trace_id: "tr-9".into(),
                },
            },
        ]
    }

    /// Events using the fields version 2 added.
    fn sample_v2() -> Vec<Envelope> {
        let stop = Envelope {
            at_ms: 1_796_212_624_450,
            pid: 4242,
            event: Event::HookReceived(HookReceived {
                kind: Some(HookKind::Stop),
                harness: "zcode".into(),
                turn_id: Some("turn_a".into()),
                response_preview: Some("pre".into()),
                ..HookReceived::default()
            }),
        };
        let read = Envelope {
            at_ms: 1_796_212_624_500,
            pid: 4244,
            event: Event::RolloutRead {
                path: "/r".into(),
                chunk: crate::turn::TranscriptChunk {
                    fragments: vec![crate::turn::TurnFragment {
                        turn_id: "turn_a".into(),
                        trace_id: Some("tr".into()),
                        prompt: Some("hi".into()),
                        prompt_at: Some(3),
                        steering: vec![(6, "and tests".into())],
                        calls: 2,
                        ..crate::turn::TurnFragment::default()
                    }],
                    ..crate::turn::TranscriptChunk::default()
                },
            },
        };
        vec![stop, read]
    }

    /// Events using the fields version 3 added.
    fn sample_v3() -> Vec<Envelope> {
        let planned = Envelope {
            at_ms: 1_796_212_624_600,
            pid: 4244,
            event: Event::MessagesPlanned {
                messages: vec![PlannedMessage {
                    key: DedupKey::for_turn("turn_a", Role::Assistant),
                    turn_id: Some("turn_a".into()),
                    role: Role::Assistant,
                    content: "ok".into(),
                    raw_len: 2,
                    interrupted: false,
                    created_at_ms: Some(1_796_212_624_450),
                }],
            },
        };
        let read = Envelope {
            at_ms: 1_796_212_624_700,
            pid: 4244,
            event: Event::RolloutRead {
                path: "/r".into(),
                chunk: crate::turn::TranscriptChunk {
                    fragments: vec![crate::turn::TurnFragment {
                        turn_id: "turn_b".into(),
                        prompt: Some("go".into()),
                        prompt_ms: Some(1_796_212_624_650),
                        answer_ms: Some(1_796_212_624_690),
                        ..crate::turn::TurnFragment::default()
                    }],
                    ..crate::turn::TranscriptChunk::default()
                },
            },
        };
        vec![planned, read]
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Bytes written by version 1 (frozen forever): they decode to today's events,
    /// the fields version 2 added left empty.
    #[test]
    fn version_1_bytes_still_decode() {
        let v1 = [
            "0101fd7b8b9d36a2010000fb9210000101057a636f64650106736573735f31\
             01067475726e5f6100000102686900000000006300",
            "0101fdac8b9d36a2010000fb93100501107475726e3a7475726e5f613a7573\
             657201067475726e5f61000268690200",
            "0101fd108c9d36a2010000fb93100807fbf70101046275737901",
            "0101fd748c9d36a2010000fb931013030474722d39",
        ];
        for (env, bytes) in sample().iter().zip(v1) {
            assert_eq!(&decode_event(&unhex(bytes)).expect("decode v1"), env);
        }
    }

    /// Bytes written by version 2 (frozen forever): they decode to today's events, the
    /// fields version 3 added left empty.
    #[test]
    fn version_2_bytes_still_decode() {
        let expected = [
            "0201fd7b8b9d36a2010000fb9210000101057a636f64650106736573735f3101067475726e5f610000010268690000000000006300",
            "0201fdac8b9d36a2010000fb93100501107475726e3a7475726e5f613a7573657201067475726e5f61000268690200",
            "0201fd108c9d36a2010000fb93100807fbf70101046275737901",
            "0201fd748c9d36a2010000fb931013030474722d39",
            "0201fd428c9d36a2010000fb9210000103057a636f64650001067475726e5f61000000000103707265000000000000",
            "0201fd748c9d36a2010000fb941003022f7200000000000001067475726e5f6101027472010268690103010609616e642074657374730000000002000000",
        ];
        let mut all = sample();
        all.extend(sample_v2());
        assert_eq!(all.len(), expected.len());
        for (env, bytes) in all.iter().zip(expected) {
            assert_eq!(&decode_event(&unhex(bytes)).expect("decode v2"), env);
        }
    }

    /// Golden bytes of version 3. If this fails, the on-disk format changed:
    /// bump CODEC_VERSION and keep a decoder for the old bytes instead.
    #[test]
    fn golden_bytes_v3() {
        let expected = [
            "0301fd7b8b9d36a2010000fb9210000101057a636f64650106736573735f3101067475726e5f610000010268690000000000006300",
            "0301fdac8b9d36a2010000fb93100501107475726e3a7475726e5f613a7573657201067475726e5f6100026869020000",
            "0301fd108c9d36a2010000fb93100807fbf70101046275737901",
            "0301fd748c9d36a2010000fb931013030474722d39",
            "0301fd428c9d36a2010000fb9210000103057a636f64650001067475726e5f61000000000103707265000000000000",
            "0301fd748c9d36a2010000fb941003022f7200000000000001067475726e5f6101027472010268690103010609616e6420746573747300000000020000000000",
            "0301fdd88c9d36a2010000fb94100501157475726e3a7475726e5f613a617373697374616e7401067475726e5f6101026f6b020001fd428c9d36a2010000",
            "0301fd3c8d9d36a2010000fb941003022f7200000000000001067475726e5f62000102676f000000000000000001fd0a8d9d36a201000001fd328d9d36a20100000000",
        ];
        let mut all = sample();
        all.extend(sample_v2());
        all.extend(sample_v3());
        assert_eq!(all.len(), expected.len());
        let mut buf = Vec::new();
        for (env, want) in all.iter().zip(expected) {
            encode_event(env, &mut buf).expect("encode");
            assert_eq!(hex(&buf), want, "golden bytes changed for {env:?}");
            assert_eq!(&decode_event(&buf).expect("decode"), env);
        }
    }

    /// The events added for journal damage, appended to the enum: old variants keep their
    /// bytes; versions 1 and 2 wrote them too (their bytes are the same but for the version
    /// byte).
    #[test]
    fn golden_bytes_of_the_damage_events() {
        let cases = [
            (
                Event::JournalDamaged {
                    segment: 1,
                    offset: 32,
                    len: 7,
                    reason: "x".into(),
                },
                "03010101140120070178",
            ),
            (
                Event::AllReconciled {
                    present: vec![DedupKey::for_turn("t", Role::User)],
                },
                "0301010115010b7475726e3a743a75736572",
            ),
        ];
        let mut buf = Vec::new();
        for (event, want) in cases {
            let env = Envelope {
                at_ms: 1,
                pid: 1,
                event,
            };
            encode_event(&env, &mut buf).expect("encode");
            assert_eq!(hex(&buf), want, "{env:?}");
            assert_eq!(decode_event(&buf).expect("decode"), env);
            for old in [1, 2] {
                let mut bytes = buf.clone();
                bytes[0] = old;
                assert_eq!(decode_event(&bytes).expect("decode old"), env, "v{old}");
            }
        }
    }

    /// `SpillIngested`, appended after `AllReconciled` (versions 2 and 3).
    #[test]
    fn golden_bytes_of_the_spill_event() {
        let env = Envelope {
            at_ms: 1,
            pid: 1,
            event: Event::SpillIngested {
                name: "x".into(),
                events: 1,
            },
        };
        let mut buf = Vec::new();
        encode_event(&env, &mut buf).expect("encode");
        assert_eq!(hex(&buf), "0301010116017801");
        assert_eq!(decode_event(&buf).expect("decode"), env);
        buf[0] = 2;
        assert_eq!(decode_event(&buf).expect("decode v2"), env);
    }

    /// `Redacted`, appended after `Forgotten`: index 25, a turn id, an origin and the
    /// counts as a map of kind names.
    #[test]
    fn golden_bytes_of_the_redacted_event() {
        let mut counts = crate::privacy::Redactions::default();
        counts.add("jwt", 2);
        let env = Envelope {
            at_ms: 1,
            pid: 1,
            event: Event::Redacted {
                turn_id: Some("t".into()),
                origin: "hook".into(),
                counts,
            },
        };
        let mut buf = Vec::new();
        encode_event(&env, &mut buf).expect("encode");
        assert_eq!(hex(&buf), "030101011901017404686f6f6b01036a777402");
        assert_eq!(decode_event(&buf).expect("decode"), env);
    }

    /// `TranscriptNamed`, appended after `Pruned`: index 28 and the path.
    #[test]
    fn golden_bytes_of_the_transcript_named_event() {
        let env = Envelope {
            at_ms: 1,
            pid: 1,
            event: Event::TranscriptNamed { path: "/t".into() },
        };
        let mut buf = Vec::new();
        encode_event(&env, &mut buf).expect("encode");
        assert_eq!(hex(&buf), "030101011c022f74");
        assert_eq!(decode_event(&buf).expect("decode"), env);
    }

    /// A version-4 snapshot is today's body without the fields version 5 appended
    /// (`transcript_path`, `tool_calls`, `planned_tools`): it decodes with `None` and empty
    /// collections there, and only that way (a version-5 body under version 4 is refused).
    #[test]
    fn a_version_4_snapshot_decodes_without_the_fields_of_version_5() {
        let mut state = State::fold(&sample());
        let mut v5 = Vec::new();
        encode_snapshot(&state, &mut v5).expect("encode");
        assert_eq!(
            v5.get(v5.len() - 3..),
            Some(&[0u8, 0, 0][..]),
            "None and two empty collections are three 0 bytes, last"
        );
        let mut v4 = v5[..v5.len() - 3].to_vec();
        v4[0] = 4;
        assert_eq!(decode_snapshot(&v4).expect("decode v4"), state);
        state.transcript_path = Some("/p/s.jsonl".into());
        state.tool_calls = vec![(
            "t1".into(),
            vec![crate::tool::ToolCall {
                name: "Bash".into(),
                ..crate::tool::ToolCall::default()
            }],
        )];
        encode_snapshot(&state, &mut v5).expect("encode");
        assert_eq!(decode_snapshot(&v5).expect("decode v5"), state);
        v5[0] = 4;
        assert!(matches!(
            decode_snapshot(&v5),
            Err(CodecError::Trailing { .. } | CodecError::Body(_))
        ));
    }

    /// Snapshots of older layouts are refused (the store folds the events instead);
    /// today's round-trip.
    #[test]
    fn old_snapshots_are_refused_for_refolding() {
        let mut state = State::fold(&sample());
        state.acks_unverified = true;
        let mut buf = Vec::new();
        encode_snapshot(&state, &mut buf).expect("encode");
        assert_eq!(buf[0], SNAPSHOT_VERSION);
        assert_eq!(decode_snapshot(&buf).expect("decode"), state);
        for old in [1, 2] {
            let mut v = buf.clone();
            v[0] = old;
            assert!(matches!(
                decode_snapshot(&v),
                Err(CodecError::OldSnapshot { version }) if version == old
            ));
        }
        let mut newer = buf.clone();
        newer[0] = SNAPSHOT_VERSION + 1;
        assert!(matches!(
            decode_snapshot(&newer),
            Err(CodecError::UnknownVersion { .. })
        ));
    }

    #[test]
    fn refuses_unknown_version_and_wrong_tag() {
        let mut buf = Vec::new();
        encode_event(&sample()[0], &mut buf).expect("encode");
        let mut newer = buf.clone();
        newer[0] = CODEC_VERSION + 1;
        assert!(matches!(
            decode_event(&newer),
            Err(CodecError::UnknownVersion { .. })
        ));
        assert!(matches!(
            decode_snapshot(&buf),
            Err(CodecError::WrongTag { .. })
        ));
        assert!(matches!(
            decode_event(&[1]),
            Err(CodecError::TooShort { .. })
        ));
        let mut trailing = buf.clone();
        trailing.push(0);
        assert!(matches!(
            decode_event(&trailing),
            Err(CodecError::Trailing { extra: 1 })
        ));
    }

    #[test]
    fn truncated_bodies_never_decode_as_a_different_event() {
        let mut buf = Vec::new();
        for env in sample() {
            encode_event(&env, &mut buf).expect("encode");
            for cut in 0..buf.len() {
                if let Ok(decoded) = decode_event(&buf[..cut]) {
                    panic!("prefix of {cut} bytes decoded as {decoded:?}");
                }
            }
        }
    }
}
