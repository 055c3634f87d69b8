//! The one place that turns events and snapshots into bytes and back.
//!
//! Format of a journal record payload:
//!
//! ```text
//! // Format: { version:u8 | tag:u8 | body: bincode 2.0.1 (standard config: little-endian varints) }
//! ```
//!
//! * `version` is [`CODEC_VERSION`] for everything written by this build. A
//!   payload of an older version is decoded through its frozen types; a newer
//!   version is refused with [`CodecError::UnknownVersion`], never guessed at.
//! * `tag` is [`TAG_EVENT`] for an [`Envelope`] and [`TAG_SNAPSHOT`] for a
//!   projector [`State`] snapshot.
//!
//! bincode is pinned to `=2.0.1` (3.0.0 is a tombstone); the golden-byte tests
//! below fail if an upgrade changes a single byte.
//!
//! [`crate::event::Event`] is append-only: bincode writes a variant's index, so a
//! new variant goes last (e.g. `CommitTraced`, index 19, after `Problem`) and
//! every older journal decodes unchanged without a version bump.

use serde::{de::DeserializeOwned, Serialize};

use crate::event::Envelope;
use crate::projector::State;

/// Version byte of event records written by this build.
pub const CODEC_VERSION: u8 = 1;
/// Version byte of snapshots written by this build. Version 1 is the same layout without the
/// last field of [`State`] (`acks_unverified`, decoded as `false`).
pub const SNAPSHOT_VERSION: u8 = 2;
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
    if found != tag && matches!(version, CODEC_VERSION | SNAPSHOT_VERSION) {
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

fn decode_tagged<T: DeserializeOwned>(tag: u8, bytes: &[u8]) -> Result<T, CodecError> {
    let (version, body) = split_tagged(tag, bytes)?;
    if version != CODEC_VERSION {
        return Err(CodecError::UnknownVersion { version });
    }
    decode_body(body)
}

/// Encodes an event record into `out` (cleared first; reuse it across calls).
pub fn encode_event(envelope: &Envelope, out: &mut Vec<u8>) -> Result<(), CodecError> {
    encode_tagged(CODEC_VERSION, TAG_EVENT, envelope, out)
}

/// Decodes an event record.
pub fn decode_event(bytes: &[u8]) -> Result<Envelope, CodecError> {
    decode_tagged(TAG_EVENT, bytes)
}

/// Encodes a state snapshot ([`SNAPSHOT_VERSION`]).
// Format: { version:u8 (2) | tag:u8 (2) | body: bincode(State) }
pub fn encode_snapshot(state: &State, out: &mut Vec<u8>) -> Result<(), CodecError> {
    encode_tagged(SNAPSHOT_VERSION, TAG_SNAPSHOT, state, out)
}

/// Decodes a state snapshot of version 1 or 2.
// Format v1: { version:u8 (1) | tag:u8 (2) | body: bincode(State without `acks_unverified`) }
//   bincode writes fields in order and `acks_unverified` is the last one, so a v1 body followed
//   by the encoding of `false` (one 0 byte) is the v2 body of the same state.
pub fn decode_snapshot(bytes: &[u8]) -> Result<State, CodecError> {
    let (version, body) = split_tagged(TAG_SNAPSHOT, bytes)?;
    match version {
        SNAPSHOT_VERSION => decode_body(body),
        1 => {
            let mut v2 = Vec::with_capacity(body.len() + 1);
            v2.extend_from_slice(body);
            v2.push(0);
            decode_body(&v2)
        }
        version => Err(CodecError::UnknownVersion { version }),
    }
}

#[cfg(test)]
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

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Golden bytes of version 1. If this fails, the on-disk format changed:
    /// bump CODEC_VERSION and keep a decoder for the old bytes instead.
    #[test]
    fn golden_bytes_v1() {
        let expected = [
            "0101fd7b8b9d36a2010000fb9210000101057a636f64650106736573735f31\
             01067475726e5f6100000102686900000000006300",
            "0101fdac8b9d36a2010000fb93100501107475726e3a7475726e5f613a7573\
             657201067475726e5f61000268690200",
            "0101fd108c9d36a2010000fb93100807fbf70101046275737901",
            "0101fd748c9d36a2010000fb931013030474722d39",
        ];
        let mut buf = Vec::new();
        for (env, want) in sample().iter().zip(expected) {
            encode_event(env, &mut buf).expect("encode");
            assert_eq!(hex(&buf), want, "golden bytes changed for {env:?}");
            assert_eq!(&decode_event(&buf).expect("decode"), env);
        }
    }

    /// The events appended to the enum (journal damage, spill files): old variants keep their
    /// bytes.
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
                "01010101140120070178",
            ),
            (
                Event::AllReconciled {
                    present: vec![DedupKey::for_turn("t", Role::User)],
                },
                "0101010115010b7475726e3a743a75736572",
            ),
            (
                Event::SpillIngested {
                    name: "x".into(),
                    events: 1,
                },
                "0101010116017801",
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
        }
    }

    /// A version-1 snapshot (written before `acks_unverified` existed) still decodes.
    #[test]
    fn version_1_snapshots_decode_with_acks_verified() {
        let mut state = State::fold(&sample());
        let mut buf = Vec::new();
        encode_snapshot(&state, &mut buf).expect("encode");
        assert_eq!(buf[0], SNAPSHOT_VERSION);
        assert_eq!(
            buf.last(),
            Some(&0),
            "acks_unverified=false is the last byte"
        );
        let mut v1 = buf[..buf.len() - 1].to_vec();
        v1[0] = 1;
        assert_eq!(decode_snapshot(&v1).expect("v1"), state);
        state.acks_unverified = true;
        encode_snapshot(&state, &mut buf).expect("encode");
        assert_eq!(decode_snapshot(&buf).expect("v2"), state);
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
