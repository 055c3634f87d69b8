//! The fold through the real store (journal frames, snapshots from
//! `compact`), and the codec: round trips of random events and states, and
//! decoders that never panic on random bytes.
//!
//! `OV_PROPTEST_CASES=N` raises the case counts.

use crate::projector_support;

use ov_engine::codec;
use ov_engine::event::{Envelope, Event, HookKind, HookReceived, PlannedMessage};
use ov_engine::projector::State;
use ov_engine::store::SessionStore;
use ov_engine::turn::{DedupKey, FileIdentity, Role, TranscriptChunk, TurnFragment};
use ov_journal::Durability;
use projector_support::{cases, events, session};
use proptest::prelude::*;

fn append_raw(store: &SessionStore, env: &Envelope) -> Result<(), TestCaseError> {
    let mut buf = Vec::new();
    codec::encode_event(env, &mut buf).map_err(|e| TestCaseError::fail(e.to_string()))?;
    store
        .journal()
        .append(&buf, Durability::Buffered)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    Ok(())
}

fn fail(e: impl std::fmt::Display) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(24)))]

    /// (d) Append a journal's events with `compact()` at random points: the
    /// store's fold (from the latest snapshot) equals the in-memory fold, and
    /// stays equal after reopening.
    #[test]
    fn store_fold_with_compactions_equals_memory_fold(
        ops in session(60),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
    ) {
        let evs = events(&ops);
        let mut cut_at: Vec<usize> = cuts.iter().map(|c| c.index(evs.len() + 1)).collect();
        cut_at.sort_unstable();
        let dir = tempfile::tempdir().map_err(fail)?;
        let jdir = dir.path().join("journals").join("s");
        let store = SessionStore::open(&jdir).map_err(fail)?;
        let mut cuts = cut_at.iter().peekable();
        for (i, e) in evs.iter().enumerate() {
            while cuts.next_if(|c| **c == i).is_some() {
                store.compact().map_err(fail)?;
            }
            append_raw(&store, e)?;
        }
        while cuts.next().is_some() {
            store.compact().map_err(fail)?;
        }
        let want = State::fold(&evs);
        let got = store.fold().map_err(fail)?;
        prop_assert!(got.skipped.is_empty(), "skipped {:?}", got.skipped);
        prop_assert_eq!(got.from_snapshot, !cut_at.is_empty());
        prop_assert_eq!(&got.state, &want);
        drop(store);
        let reopened = SessionStore::open(&jdir).map_err(fail)?;
        prop_assert_eq!(&reopened.fold().map_err(fail)?.state, &want);
    }

    /// (d) The store's own stamping: `append` for a, `compact`, `append_all`
    /// for b; the fold equals the in-memory fold of the envelopes returned.
    #[test]
    fn store_append_then_compact_then_append_all(ops in session(40), split in any::<prop::sample::Index>()) {
        let evs = events(&ops);
        let split = split.index(evs.len() + 1);
        let dir = tempfile::tempdir().map_err(fail)?;
        let store = SessionStore::open(&dir.path().join("j").join("s")).map_err(fail)?;
        let mut written = Vec::new();
        for e in &evs[..split] {
            written.push(store.append(e.event.clone(), Durability::Buffered).map_err(fail)?);
        }
        store.compact().map_err(fail)?;
        let rest: Vec<Event> = evs[split..].iter().map(|e| e.event.clone()).collect();
        written.extend(store.append_all(rest, Durability::Buffered).map_err(fail)?);
        let got = store.fold().map_err(fail)?;
        prop_assert!(got.from_snapshot);
        prop_assert_eq!(got.state, State::fold(&written));
        // `events()` lists what was appended after the snapshot, in order.
        let listed: Vec<Envelope> = store
            .events()
            .map_err(fail)?
            .into_iter()
            .map(|(_, r)| r.map_err(fail))
            .collect::<Result<_, _>>()?;
        prop_assert!(written.ends_with(&listed));
    }
}

fn opt_string() -> impl Strategy<Value = Option<String>> {
    prop::option::of(".{0,12}")
}

fn key() -> impl Strategy<Value = DedupKey> {
    ".{0,16}".prop_map(DedupKey)
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![Just(Role::User), Just(Role::Assistant)]
}

/// Events with arbitrary field values (the generator's are realistic, these
/// are extreme: any string, any number).
fn wild_event() -> impl Strategy<Value = Event> {
    let hook = (
        prop::option::of(prop_oneof![
            Just(HookKind::SessionStart),
            Just(HookKind::PromptSubmit),
            Just(HookKind::PreToolUse),
            Just(HookKind::Stop)
        ]),
        ".{0,8}",
        (opt_string(), opt_string(), opt_string(), opt_string()),
        (opt_string(), opt_string(), opt_string(), opt_string()),
        (prop::option::of(any::<u64>()), any::<u64>(), opt_string()),
    )
        .prop_map(
            |(kind, harness, (a, b, c, d), (e, f, g, h), (n, raw_len, m))| {
                Event::HookReceived(HookReceived {
                    kind,
                    harness,
                    session_id: a,
                    turn_id: b,
                    trace_id: c,
                    cwd: d,
                    prompt: e,
                    response_text: f.clone(),
                    response_preview: f,
                    source: g,
                    tool_name: h.clone(),
                    denied_uri: h,
                    tool_call_count: n,
                    raw_len,
                    malformed: m,
                })
            },
        );
    let frag = (
        ".{0,8}",
        (opt_string(), opt_string(), opt_string()),
        (any::<bool>(), any::<bool>(), any::<u32>(), any::<bool>()),
        (any::<Option<u64>>(), any::<Option<u64>>()),
    )
        .prop_map(
            |(
                turn_id,
                (prompt, final_text, last_text),
                (finished, interrupted, calls, superseded),
                (prompt_ms, answer_ms),
            )| {
                TurnFragment {
                    trace_id: final_text.clone(),
                    turn_id,
                    prompt_at: Some(u64::from(calls)),
                    steering: last_text
                        .clone()
                        .map(|t| vec![(u64::from(calls) + 1, t)])
                        .unwrap_or_default(),
                    prompt,
                    final_text,
                    last_text,
                    finished,
                    interrupted,
                    calls,
                    superseded,
                    prompt_ms,
                    answer_ms,
                }
            },
        );
    let rollout = (
        ".{0,8}",
        (
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
        ),
        any::<bool>(),
        prop::collection::vec(frag, 0..3),
        (any::<u32>(), any::<u32>()),
    )
        .prop_map(
            |(
                path,
                (dev, ino, start, end, file_len),
                rescanned,
                fragments,
                (skipped_lines, bad_lines),
            )| {
                Event::RolloutRead {
                    path,
                    chunk: TranscriptChunk {
                        identity: FileIdentity { dev, ino },
                        start,
                        end,
                        file_len,
                        rescanned,
                        fragments,
                        skipped_lines,
                        bad_lines,
                        tools: Vec::new(),
                    },
                }
            },
        );
    let planned = prop::collection::vec(
        (
            key(),
            opt_string(),
            role(),
            ".{0,20}",
            any::<u64>(),
            any::<bool>(),
            any::<Option<u64>>(),
        )
            .prop_map(
                |(key, turn_id, role, content, raw_len, interrupted, created_at_ms)| {
                    PlannedMessage {
                        key,
                        turn_id,
                        role,
                        content,
                        raw_len,
                        interrupted,
                        created_at_ms,
                    }
                },
            ),
        0..3,
    )
    .prop_map(|messages| Event::MessagesPlanned { messages });
    let failed = (
        any::<u64>(),
        any::<u16>(),
        any::<bool>(),
        ".{0,10}",
        any::<bool>(),
    )
        .prop_map(
            |(send_id, status, retryable, error, request_sent)| Event::SendFailed {
                send_id,
                status,
                retryable,
                error,
                request_sent,
            },
        );
    let reconciled = (
        prop::collection::vec(any::<u64>(), 0..3),
        prop::collection::vec(key(), 0..3),
        prop::collection::vec(key(), 0..3),
    )
        .prop_map(|(send_ids, present, absent)| Event::Reconciled {
            send_ids,
            present,
            absent,
        });
    let misc = (
        any::<u64>(),
        prop::option::of(any::<u64>()),
        opt_string(),
        any::<u8>(),
        any::<bool>(),
    )
        .prop_flat_map(|(id, before, s, tier, flag)| {
            prop_oneof![
                Just(Event::CommitStarted {
                    commit_id: id,
                    commit_count_before: before
                }),
                Just(Event::CommitAcked {
                    commit_id: id,
                    task_id: s.clone(),
                    archive_uri: s.clone()
                }),
                Just(Event::CommitReconciled {
                    commit_id: id,
                    applied: flag
                }),
                Just(Event::CommitTraced {
                    commit_id: id,
                    trace_id: s.clone().unwrap_or_default()
                }),
                Just(Event::RecallServed {
                    turn_id: s.clone(),
                    prompt_hash: id,
                    tier,
                    block: s.clone(),
                    context_face_unsupported: flag,
                    cached: !flag,
                }),
                Just(Event::ServerUnreachable {
                    error: s.clone().unwrap_or_default(),
                    retry_after_ms: id
                }),
                Just(Event::SendStarted {
                    send_id: id,
                    keys: vec![DedupKey(s.clone().unwrap_or_default())],
                    single: flag
                }),
                Just(Event::SendAcked { send_id: id }),
                Just(Event::ProfileServed { bytes: id }),
                Just(Event::ServerReachable),
                Just(Event::OpenTurnsClosed),
            ]
        });
    prop_oneof![hook, rollout, planned, failed, reconciled, misc]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    /// Every envelope survives `encode_event` / `decode_event` unchanged.
    #[test]
    fn event_codec_round_trips(at_ms in any::<u64>(), pid in any::<u32>(), event in wild_event()) {
        let env = Envelope { at_ms, pid, event };
        let mut buf = Vec::new();
        codec::encode_event(&env, &mut buf).map_err(fail)?;
        prop_assert_eq!(codec::decode_event(&buf).map_err(fail)?, env);
        // A snapshot decoder never takes an event record for a state.
        prop_assert!(codec::decode_snapshot(&buf).is_err());
    }

    /// Random bytes, bare or behind a valid header, never panic a decoder.
    #[test]
    fn decoders_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256), tag in 0..4u8) {
        let mut framed = vec![codec::CODEC_VERSION, tag];
        framed.extend_from_slice(&bytes);
        for b in [&bytes, &framed] {
            let _ = codec::decode_event(b);
            let _ = codec::decode_snapshot(b);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(64)))]

    /// Generated journals: every event round-trips, the folded state
    /// round-trips through the snapshot codec (and re-encodes to the same
    /// bytes), and any one flipped byte of a record never panics the decoder.
    #[test]
    fn journal_and_state_codec_round_trip(ops in session(60), flip in any::<(prop::sample::Index, u8)>()) {
        let evs = events(&ops);
        let mut buf = Vec::new();
        for e in &evs {
            codec::encode_event(e, &mut buf).map_err(fail)?;
            prop_assert_eq!(&codec::decode_event(&buf).map_err(fail)?, e);
            let i = flip.0.index(buf.len());
            buf[i] ^= flip.1 | 1;
            let _ = codec::decode_event(&buf);
        }
        let state = State::fold(&evs);
        codec::encode_snapshot(&state, &mut buf).map_err(fail)?;
        let back = codec::decode_snapshot(&buf).map_err(fail)?;
        prop_assert_eq!(&back, &state);
        let mut again = Vec::new();
        codec::encode_snapshot(&back, &mut again).map_err(fail)?;
        prop_assert_eq!(&again, &buf);
        for cut in [0, 1, 2, buf.len() / 2, buf.len().saturating_sub(1)] {
            prop_assert!(codec::decode_snapshot(&buf[..cut]).is_err(), "prefix {} decoded", cut);
        }
        let i = flip.0.index(buf.len());
        buf[i] ^= flip.1 | 1;
        let _ = codec::decode_snapshot(&buf);
    }
}
