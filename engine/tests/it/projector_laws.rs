//! The projector's laws, over random well-formed journals (see
//! `projector_support`): deterministic, incremental (`fold(a ++ b)` equals
//! folding `b` onto `fold(a)`, in memory and through a snapshot), and the
//! exactly-once invariants that must hold after every event.
//!
//! `OV_PROPTEST_CASES=N` raises the case counts.

use crate::projector_support;

use std::collections::{BTreeSet, HashSet};

use ov_engine::codec;
use ov_engine::delivery::DeliverySettings;
use ov_engine::event::{Envelope, Event, HookKind, HookReceived, PlannedMessage};
use ov_engine::projector::{MessageStatus, State};
use ov_engine::turn::{DedupKey, FileIdentity, Role, TranscriptChunk, TurnFragment};
use projector_support::{cases, events, fold_via_snapshot, open_sends, session};
use proptest::prelude::*;
use rstest::rstest;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn snapshot_bytes(s: &State) -> Vec<u8> {
    let mut buf = Vec::new();
    codec::encode_snapshot(s, &mut buf).expect("every state encodes");
    buf
}

fn settled(status: &MessageStatus) -> bool {
    matches!(
        status,
        MessageStatus::Acked | MessageStatus::SetAside { .. }
    )
}

/// Every planned message of `events`, first plan of each key only, in plan order.
fn planned_in_order(events: &[Envelope]) -> Vec<&PlannedMessage> {
    let mut seen = HashSet::new();
    events
        .iter()
        .filter_map(|e| match &e.event {
            Event::MessagesPlanned { messages } => Some(messages),
            _ => None,
        })
        .flatten()
        // The fold drops a message with nothing to send, as the planner does.
        .filter(|m| !ov_engine::plan::nothing_to_send(&m.content) && seen.insert(&m.key))
        .collect()
}

/// The keys planned in `events` that the state holds as delivered.
fn delivered_keys(state: &State, events: &[Envelope]) -> BTreeSet<DedupKey> {
    planned_in_order(events)
        .into_iter()
        .filter(|m| state.is_delivered(&m.key))
        .map(|m| m.key.clone())
        .collect()
}

/// Every invariant that must hold of a state folded from `events`, given the
/// keys acknowledged by some earlier prefix.
fn check_invariants(
    state: &State,
    events: &[Envelope],
    acked_before: &BTreeSet<DedupKey>,
) -> Result<(), TestCaseError> {
    let acked = delivered_keys(state, events);
    // Nothing acknowledged is ever lost, whatever comes later.
    for k in acked_before {
        prop_assert!(acked.contains(k), "acked key {k} became unacked");
    }
    let outbox = state.outbox();
    let mut seen = HashSet::new();
    for (k, r) in &outbox {
        prop_assert!(seen.insert(*k), "key {k} twice in the outbox");
        prop_assert!(!acked.contains(*k), "key {k} both acked and pending");
        prop_assert!(matches!(r.status, MessageStatus::Pending));
        prop_assert!(r.content.is_some(), "pending {k} without content");
    }
    // Tool calls ride only on unsettled assistant messages, and wait only for turns whose
    // answer is not planned.
    for k in state.planned_tools.keys() {
        let r = state.messages.get(k);
        prop_assert!(
            r.is_some_and(|r| r.role == Role::Assistant && !settled(&r.status)),
            "tool parts kept for {k}, settled or not an answer"
        );
    }
    for (turn, calls) in &state.tool_calls {
        let answer = DedupKey::for_turn(turn, Role::Assistant);
        prop_assert!(!state.messages.contains_key(&answer) && !state.is_delivered(&answer));
        prop_assert!(calls.len() <= ov_engine::tool::MAX_CALLS_PER_TURN);
    }
    // Set-aside messages never appear in the outbox.
    for (k, _) in state.set_aside() {
        prop_assert!(!seen.contains(k), "set-aside {k} in the outbox");
    }
    // Order names kept records, each once; a record outside it was let go from it (set
    // aside: acknowledged records leave `messages` too), and nothing unsettled leaves it.
    let ordered: BTreeSet<&DedupKey> = state.order.values().collect();
    prop_assert_eq!(ordered.len(), state.order.len());
    for (order, k) in &state.order {
        prop_assert_eq!(state.messages.get(k).map(|r| r.order), Some(*order));
    }
    for (k, r) in &state.messages {
        if !ordered.contains(k) {
            prop_assert!(
                matches!(r.status, MessageStatus::SetAside { .. }),
                "{k} left the plan order unsettled"
            );
        }
    }
    // A record let go left nothing unsettled before it.
    if let Some((first, _)) = state.order.first_key_value() {
        for r in state.messages.values() {
            prop_assert!(r.order >= *first || settled(&r.status));
        }
    }
    // In-doubt sends are exactly the SendStarted without a settling outcome.
    let in_doubt: BTreeSet<u64> = state.in_doubt().keys().copied().collect();
    prop_assert_eq!(&in_doubt, &open_sends(events));
    // A message in flight belongs to an open send that carries it.
    for (k, r) in &state.messages {
        if let MessageStatus::InFlight { send_id } = r.status {
            let send = state.in_doubt().get(&send_id);
            prop_assert!(
                send.is_some_and(|s| s.keys.contains(k)),
                "{k} in flight for closed send {send_id}"
            );
        }
    }
    // The cursor is advanced over whole turns only, in the order turns were
    // first planned: every planned message of the cursor's turn, and of every
    // turn first planned before it, is settled.
    // Planned messages (kept or let go), in plan order, with whether each is settled.
    let planned_all: Vec<(&PlannedMessage, bool)> = planned_in_order(events)
        .into_iter()
        .filter_map(|m| match state.messages.get(&m.key) {
            Some(r) => Some((m, settled(&r.status))),
            None => state.is_delivered(&m.key).then_some((m, true)),
        })
        .collect();
    if let Some(c) = state.cursor() {
        let mut turn_order: Vec<&str> = Vec::new();
        for (m, _) in &planned_all {
            if let Some(t) = m.turn_id.as_deref() {
                if !turn_order.contains(&t) {
                    turn_order.push(t);
                }
            }
        }
        let pos = turn_order.iter().position(|t| *t == c);
        prop_assert!(pos.is_some(), "cursor {c} names no planned turn");
        let done = &turn_order[..=pos.unwrap_or(0)];
        for (m, ok) in &planned_all {
            if m.turn_id.as_deref().is_some_and(|t| done.contains(&t)) {
                prop_assert!(*ok, "cursor {c} passes unsettled {}", m.key);
            }
        }
    } else {
        // No cursor: the first turn in plan order is not fully settled.
        if let Some(first) = planned_all.iter().find_map(|(m, _)| m.turn_id.as_deref()) {
            prop_assert!(
                planned_all
                    .iter()
                    .any(|(m, ok)| m.turn_id.as_deref() == Some(first) && !ok),
                "no cursor although turn {first} is settled"
            );
        }
    }
    // A key planned once is never planned again.
    let planned = ov_engine::plan::plan(state, &DeliverySettings::new("zc-law".into()));
    let mut plan_keys = HashSet::new();
    for m in &planned {
        prop_assert!(
            !state.messages.contains_key(&m.key) && !state.is_delivered(&m.key),
            "plan re-plans {}",
            m.key
        );
        prop_assert!(plan_keys.insert(&m.key), "plan names {} twice", m.key);
    }
    // The commit never covers more than was acknowledged.
    prop_assert!(state.commit.committed_through <= state.commit.acked_total);
    prop_assert_eq!(state.commit.acked_total, acked.len() as u64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(96)))]

    /// (a) The same events give the same state and the same snapshot bytes.
    #[test]
    fn fold_is_deterministic(ops in session(80)) {
        let evs = events(&ops);
        let one = State::fold(&evs);
        let two = State::fold(&evs);
        prop_assert_eq!(&one, &two);
        prop_assert_eq!(snapshot_bytes(&one), snapshot_bytes(&two));
        // Replaying the interpreter gives the same journal too.
        prop_assert_eq!(events(&ops), evs);
    }

    /// (b) and (c): for every split point, `fold(a ++ b)` equals `b` applied
    /// onto `fold(a)`, and onto `decode(encode(fold(a)))`.
    #[test]
    fn fold_is_incremental_at_every_split(ops in session(60)) {
        let evs = events(&ops);
        let whole = State::fold(&evs);
        let whole_bytes = snapshot_bytes(&whole);
        for split in 0..=evs.len() {
            let (a, b) = evs.split_at(split);
            let mut s = State::fold(a);
            for e in b {
                s.apply(e);
            }
            prop_assert_eq!(&s, &whole, "in memory, split at {}", split);
            let via = fold_via_snapshot(&evs, split).map_err(TestCaseError::fail)?;
            prop_assert_eq!(&via, &whole, "through a snapshot, split at {}", split);
            prop_assert_eq!(snapshot_bytes(&via), whole_bytes.clone());
        }
    }

    /// (e) The exactly-once invariants hold after every event.
    #[test]
    fn invariants_hold_after_every_event(ops in session(100)) {
        let evs = events(&ops);
        let mut state = State::default();
        let mut acked_before = BTreeSet::new();
        for (i, e) in evs.iter().enumerate() {
            state.apply(e);
            check_invariants(&state, &evs[..=i], &acked_before)?;
            acked_before = delivered_keys(&state, &evs[..=i]);
        }
    }
}

fn env(at_ms: u64, event: Event) -> Envelope {
    Envelope {
        at_ms,
        pid: 7,
        event,
    }
}

fn hook(kind: HookKind, turn: &str, text: &str) -> Event {
    let mut h = HookReceived {
        kind: Some(kind),
        harness: "zcode".into(),
        session_id: Some("sess_big".into()),
        turn_id: Some(turn.to_owned()),
        ..HookReceived::default()
    };
    match kind {
        HookKind::PromptSubmit => h.prompt = Some(text.to_owned()),
        HookKind::Stop => h.response_text = Some(text.to_owned()),
        _ => {}
    }
    Event::HookReceived(h)
}

/// Folds `evs` then `more`, keeping the envelopes.
fn apply_all(state: &mut State, log: &mut Vec<Envelope>, more: Vec<Envelope>) {
    for e in more {
        state.apply(&e);
        log.push(e);
    }
}

/// A session of far more turns than the anchor's 1000-key window, fully
/// acknowledged, then a rescan of the whole rollout under a new file identity
/// with the rollout position lost, then a drain: nothing is planned again.
#[test]
fn no_bounded_window_after_3000_turns() -> TestResult {
    const N: usize = 3000;
    let settings = DeliverySettings::new("zc-big".into());
    let mut state = State::default();
    let mut log = Vec::new();
    let mut at = 1_800_000_000_000u64;
    for block in 0..N / 100 {
        let send_id = block as u64;
        let mut evs = Vec::new();
        for i in block * 100..(block + 1) * 100 {
            at += 10;
            let t = format!("turn_{i:05}");
            evs.push(env(
                at,
                hook(HookKind::PromptSubmit, &t, &format!("prompt {i}")),
            ));
            evs.push(env(
                at + 1,
                hook(HookKind::Stop, &t, &format!("answer {i}")),
            ));
        }
        apply_all(&mut state, &mut log, evs);
        let planned = ov_engine::plan::plan(&state, &settings);
        assert_eq!(planned.len(), 200, "block {block}");
        let keys: Vec<DedupKey> = planned.iter().map(|m| m.key.clone()).collect();
        let evs = vec![
            env(at + 2, Event::MessagesPlanned { messages: planned }),
            env(
                at + 3,
                Event::SendStarted {
                    send_id,
                    keys,
                    single: false,
                },
            ),
            env(at + 4, Event::SendAcked { send_id }),
        ];
        apply_all(&mut state, &mut log, evs);
    }
    assert_eq!(state.commit.acked_total, 2 * N as u64);
    assert!(
        state.messages.is_empty(),
        "every delivered record was let go"
    );
    assert!(state.outbox().is_empty());
    assert_eq!(state.cursor(), Some("turn_02999"));

    // The rollout rotated (new inode) and every old turn comes back; the
    // saved position is lost as well.
    state.rollout = None;
    let fragments: Vec<TurnFragment> = (0..N)
        .map(|i| TurnFragment {
            turn_id: format!("turn_{i:05}"),
            prompt: Some(format!("prompt {i} as the rollout has it")),
            final_text: Some(format!("answer {i}")),
            last_text: Some(format!("answer {i}")),
            finished: true,
            interrupted: false,
            calls: 1,
            superseded: i + 1 < N,
            ..TurnFragment::default()
        })
        .collect();
    let rescan = env(
        at + 100,
        Event::RolloutRead {
            path: "/r/model-io-sess_big.jsonl".into(),
            chunk: TranscriptChunk {
                identity: FileIdentity { dev: 9, ino: 99 },
                start: 0,
                end: 1_000_000,
                file_len: 1_000_000,
                rescanned: true,
                fragments,
                skipped_lines: 0,
                bad_lines: 0,
                tools: Vec::new(),
            },
        },
    );
    state.apply(&rescan);
    assert!(ov_engine::plan::plan(&state, &settings).is_empty());
    state.apply(&env(at + 200, Event::OpenTurnsClosed));
    assert!(
        ov_engine::plan::plan(&state, &settings).is_empty(),
        "a drain after the rescan replans nothing"
    );

    // The same through a snapshot of the acknowledged history.
    log.push(rescan);
    let via = fold_via_snapshot(&log, log.len() - 1)?;
    assert!(ov_engine::plan::plan(&via, &settings).is_empty());
    Ok(())
}

/// How each send outcome leaves a batch of two messages.
#[rstest]
#[case::acked(None, "acked", false)]
#[case::retryable_429(Some((429, true, true)), "pending", false)]
#[case::timeout_408_unsent(Some((408, true, false)), "pending", false)]
#[case::unsupported_404(Some((404, false, true)), "pending", true)]
#[case::unsupported_405(Some((405, false, true)), "pending", true)]
#[case::bad_request_batch(Some((400, false, true)), "pending-single", false)]
#[case::server_error_sent(Some((503, true, true)), "in-doubt", false)]
#[case::server_error_unsent(Some((500, true, false)), "pending", false)]
#[case::network_sent(Some((0, true, true)), "in-doubt", false)]
#[case::network_unsent(Some((0, true, false)), "pending", false)]
fn batch_outcome_table(
    #[case] failure: Option<(u16, bool, bool)>,
    #[case] expect: &str,
    #[case] batch_unsupported: bool,
) -> TestResult {
    let msgs: Vec<PlannedMessage> = ["a", "b"]
        .iter()
        .map(|t| PlannedMessage {
            key: DedupKey::for_turn(t, Role::User),
            turn_id: Some((*t).to_owned()),
            role: Role::User,
            content: format!("prompt {t}"),
            raw_len: 8,
            interrupted: false,
            created_at_ms: None,
        })
        .collect();
    let keys: Vec<DedupKey> = msgs.iter().map(|m| m.key.clone()).collect();
    let mut evs = vec![
        env(1, Event::MessagesPlanned { messages: msgs }),
        env(
            2,
            Event::SendStarted {
                send_id: 0,
                keys: keys.clone(),
                single: false,
            },
        ),
    ];
    evs.push(env(
        3,
        match failure {
            None => Event::SendAcked { send_id: 0 },
            Some((status, retryable, request_sent)) => Event::SendFailed {
                send_id: 0,
                status,
                retryable,
                error: "e".into(),
                request_sent,
            },
        },
    ));
    let s = State::fold(&evs);
    assert_eq!(s.batch_unsupported, batch_unsupported);
    for k in &keys {
        let Some(r) = s.messages.get(k) else {
            assert!(s.is_delivered(k), "{k}: no record and not delivered");
            assert_eq!("acked", expect, "{k}");
            continue;
        };
        let got = match (&r.status, r.needs_single) {
            (MessageStatus::Acked, _) => "acked",
            (MessageStatus::Pending, false) => "pending",
            (MessageStatus::Pending, true) => "pending-single",
            (MessageStatus::InFlight { .. }, _) => "in-doubt",
            (MessageStatus::SetAside { .. }, _) => "set-aside",
        };
        assert_eq!(got, expect, "{k}");
    }
    assert_eq!(s.in_doubt().contains_key(&0), expect == "in-doubt");
    Ok(())
}

fn planned(turn: &str, role: Role, content: &str) -> PlannedMessage {
    PlannedMessage {
        key: DedupKey::for_turn(turn, role),
        turn_id: Some(turn.to_owned()),
        role,
        content: content.to_owned(),
        raw_len: content.len() as u64,
        interrupted: false,
        created_at_ms: None,
    }
}

/// Regression (found by `invariants_hold_after_every_event`): a turn whose
/// answer was planned before its prompt (a tail-only rollout window, then a
/// late prompt) must not be passed by the cursor while the prompt is pending.
#[test]
fn cursor_waits_for_a_turns_message_planned_later() -> TestResult {
    let a = planned("ta", Role::Assistant, "answer a");
    let b = planned("tb", Role::User, "prompt b");
    let a_user = planned("ta", Role::User, "prompt a");
    let mut s = State::fold(&[
        env(
            1,
            Event::MessagesPlanned {
                messages: vec![a.clone(), b],
            },
        ),
        env(
            2,
            Event::SendStarted {
                send_id: 0,
                keys: vec![a.key.clone()],
                single: true,
            },
        ),
        env(3, Event::SendAcked { send_id: 0 }),
    ]);
    assert_eq!(s.cursor(), Some("ta"));
    s.apply(&env(
        4,
        Event::MessagesPlanned {
            messages: vec![a_user.clone()],
        },
    ));
    assert_eq!(s.cursor(), None, "ta has a pending prompt");
    s.apply(&env(
        5,
        Event::SendStarted {
            send_id: 1,
            keys: vec![a_user.key.clone()],
            single: true,
        },
    ));
    s.apply(&env(6, Event::SendAcked { send_id: 1 }));
    assert_eq!(s.cursor(), Some("ta"), "tb is still pending");
    Ok(())
}

/// A message left empty by removing `<private>` spans is dropped by the planner and by the
/// projector alike: never planned, never set aside, and its turn leaves the book once the rest
/// of it is planned. An empty message planned by an older build folds the same way.
#[test]
fn a_message_with_nothing_to_send_is_dropped_by_planner_and_projector() {
    let fragment = |id: &str, answer: &str, superseded: bool| TurnFragment {
        turn_id: id.into(),
        prompt: Some(format!("prompt {id}")),
        final_text: Some(answer.into()),
        last_text: Some(answer.into()),
        finished: true,
        interrupted: false,
        calls: 1,
        superseded,
        ..TurnFragment::default()
    };
    let mut state = State::default();
    for t in ["t1", "t2"] {
        state.apply(&env(
            0,
            Event::HookReceived(HookReceived {
                kind: Some(HookKind::PreToolUse),
                turn_id: Some(t.into()),
                ..HookReceived::default()
            }),
        ));
    }
    state.apply(&env(
        1,
        Event::RolloutRead {
            path: "/r/model-io-s.jsonl".into(),
            chunk: TranscriptChunk {
                identity: FileIdentity { dev: 1, ino: 1 },
                start: 0,
                end: 10,
                file_len: 10,
                rescanned: false,
                fragments: vec![
                    fragment("t1", " <private>only this</private> ", true),
                    fragment("t2", "answer t2", false),
                ],
                skipped_lines: 0,
                tools: Vec::new(),
                bad_lines: 0,
            },
        },
    ));
    let settings = DeliverySettings::new("zc-law".into());
    let plan = ov_engine::plan::plan(&state, &settings);
    let keys: Vec<String> = plan.iter().map(|m| m.key.to_string()).collect();
    assert!(keys.contains(&"turn:t1:user".to_string()), "{keys:?}");
    assert!(!keys.contains(&"turn:t1:assistant".to_string()), "{keys:?}");
    assert!(
        ov_engine::plan::plan_at_last_stop(state.book.clone())
            .iter()
            .all(|m| m.key != DedupKey::for_turn("t1", Role::Assistant)),
        "the first-capture plan drops it too"
    );
    // An older build planned it with empty content: the fold drops it as well.
    let mut messages = plan;
    messages.push(planned("t1", Role::Assistant, ""));
    state.apply(&env(2, Event::MessagesPlanned { messages }));
    assert!(!state
        .messages
        .contains_key(&DedupKey::for_turn("t1", Role::Assistant)));
    assert!(state.set_aside().is_empty());
    assert!(ov_engine::plan::plan(&state, &settings).is_empty());
    assert!(
        state
            .book
            .turns()
            .iter()
            .all(|t| t.turn_id.as_deref() != Some("t1")),
        "the turn left the book"
    );
}

/// A turn the hooks name by its `traceId` (no `turnId`) and the rollout names by its
/// `turnId` in the same worker pass: planned under the rollout's turn id. A journal in
/// which that turn was planned and acknowledged under the `traceId` (an older build) folds
/// to nothing left to plan: a replay never gives a turn a second set of keys.
#[test]
fn a_turn_keeps_the_identity_it_was_planned_under() {
    let settings = DeliverySettings::new("zc-law".into());
    let named_by_trace = |kind, text: &str| {
        let Event::HookReceived(mut h) = hook(kind, "trace-9", text) else {
            unreachable!("hook() makes a HookReceived")
        };
        h.trace_id = h.turn_id.take();
        Event::HookReceived(h)
    };
    let mut frag = TurnFragment {
        turn_id: "turn_9".into(),
        trace_id: Some("trace-9".into()),
        prompt: Some("the prompt".into()),
        final_text: Some("the answer".into()),
        last_text: Some("the answer".into()),
        finished: true,
        calls: 1,
        ..TurnFragment::default()
    };
    frag.interrupted = false;
    let read = Event::RolloutRead {
        path: "/r.jsonl".into(),
        chunk: TranscriptChunk {
            start: 0,
            end: 10,
            file_len: 10,
            fragments: vec![frag],
            ..TranscriptChunk::default()
        },
    };
    let before_plan = [
        env(1, named_by_trace(HookKind::PromptSubmit, "the prompt")),
        env(2, named_by_trace(HookKind::Stop, "the answer")),
        env(3, read),
    ];
    let s = State::fold(&before_plan);
    let keys: Vec<String> = ov_engine::plan::plan(&s, &settings)
        .into_iter()
        .map(|m| m.key.0)
        .collect();
    assert_eq!(keys, ["turn:turn_9:user", "turn:turn_9:assistant"]);
    // The hooks' turn (by its traceId) and the rollout's are one turn: not "uncaptured".
    let mut worked = s.clone();
    worked.apply(&env(
        4,
        Event::WorkerStarted {
            reason: ov_engine::event::WorkerReason::Stop,
        },
    ));
    worked.apply(&env(
        5,
        Event::MessagesPlanned {
            messages: ov_engine::plan::plan(&s, &settings),
        },
    ));
    assert!(
        worked.turns_uncaptured().is_empty(),
        "{:?}",
        worked.turns_uncaptured()
    );

    let old = [
        planned("trace-9", Role::User, "the prompt"),
        planned("trace-9", Role::Assistant, "the answer"),
    ];
    let mut log = before_plan.to_vec();
    log.extend([
        env(
            4,
            Event::MessagesPlanned {
                messages: old.to_vec(),
            },
        ),
        env(
            5,
            Event::SendStarted {
                send_id: 0,
                keys: old.iter().map(|m| m.key.clone()).collect(),
                single: false,
            },
        ),
        env(6, Event::SendAcked { send_id: 0 }),
    ]);
    for s in [
        State::fold(&log),
        fold_via_snapshot(&log, 3).expect("snapshot"),
    ] {
        assert!(ov_engine::plan::plan(&s, &settings).is_empty());
        assert!(old.iter().all(|m| s.is_delivered(&m.key)));
    }
}
