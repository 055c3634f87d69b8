//! Consent: a turn is planned only when one of its own hooks saw it and none refused it, and
//! nothing of a forgotten turn or session is sent. `first_capture`'s view (`candidates`) is
//! unaffected.

use ov_engine::delivery::DeliverySettings;
use ov_engine::event::{Envelope, Event, HookKind, HookReceived};
use ov_engine::plan::plan;
use ov_engine::projector::{MessageStatus, State};
use ov_engine::turn::{TranscriptChunk, TurnFragment};
use ov_engine::turnbook::Consent;
use proptest::prelude::*;

fn env(at_ms: u64, event: Event) -> Envelope {
    Envelope {
        at_ms,
        pid: 1,
        event,
    }
}

fn hook(kind: HookKind, turn: Option<&str>, prompt: Option<&str>, answer: Option<&str>) -> Event {
    Event::HookReceived(HookReceived {
        kind: Some(kind),
        harness: "zcode".into(),
        session_id: Some("s".into()),
        turn_id: turn.map(str::to_owned),
        prompt: prompt.map(str::to_owned),
        response_text: answer.map(str::to_owned),
        ..HookReceived::default()
    })
}

fn frag(id: &str, prompt: &str, answer: &str) -> TurnFragment {
    TurnFragment {
        turn_id: id.to_owned(),
        prompt: Some(prompt.to_owned()),
        final_text: Some(answer.to_owned()),
        last_text: Some(answer.to_owned()),
        finished: true,
        calls: 1,
        ..TurnFragment::default()
    }
}

/// One rollout read holding `fragments`, from offset `start`.
fn read(start: u64, fragments: Vec<TurnFragment>) -> Event {
    let n = fragments.len();
    let mut fragments = fragments;
    for (i, f) in fragments.iter_mut().enumerate() {
        f.superseded = i + 1 < n;
    }
    let end = start + 100;
    Event::RolloutRead {
        path: "/r.jsonl".into(),
        chunk: TranscriptChunk {
            start,
            end,
            file_len: end,
            fragments,
            ..TranscriptChunk::default()
        },
    }
}

fn planned_turns(state: &State) -> Vec<(Option<String>, &'static str)> {
    plan(state, &DeliverySettings::new("zc-s".into()))
        .into_iter()
        .map(|m| (m.turn_id, m.role.as_str()))
        .collect()
}

fn turns(ids: &[&str]) -> Vec<(Option<String>, &'static str)> {
    ids.iter()
        .flat_map(|id| {
            [
                (Some((*id).to_owned()), "user"),
                (Some((*id).to_owned()), "assistant"),
            ]
        })
        .collect()
}

/// The plugin was disabled for t2: the transcript has it, no hook of ours saw it. A drain
/// (open turns closed) plans t1 and t3 only; the view of the transcript still holds t2.
#[test]
fn a_turn_no_hook_saw_is_never_planned() {
    let mut events = vec![
        env(
            1,
            hook(HookKind::PromptSubmit, Some("t1"), Some("one"), None),
        ),
        env(2, hook(HookKind::Stop, Some("t1"), None, Some("a1"))),
        env(
            3,
            hook(HookKind::PromptSubmit, Some("t3"), Some("three"), None),
        ),
        env(4, hook(HookKind::PreToolUse, Some("t3"), None, None)),
        env(5, hook(HookKind::Stop, Some("t3"), None, Some("a3"))),
        env(
            6,
            read(
                0,
                vec![
                    frag("t1", "one", "a1"),
                    frag("t2", "private two", "secret answer"),
                    frag("t3", "three", "a3"),
                ],
            ),
        ),
    ];
    events.push(env(7, Event::OpenTurnsClosed));
    let state = State::fold(&events);
    assert_eq!(planned_turns(&state), turns(&["t1", "t3"]));
    assert_eq!(state.consent_of("t2"), Some(Consent::NoHook));
    assert_eq!(
        Consent::NoHook.why_not().as_deref(),
        Some("no hook of ours saw this turn")
    );
    assert_eq!(state.consent_of("t1"), Some(Consent::Given));
    // What the transcript holds (`ovreplay plan`'s pure view) still shows t2.
    let mut book = ov_engine::turnbook::TurnBook::new();
    if let Event::RolloutRead { chunk, .. } = &events[5].event {
        book.observe_chunk(chunk);
    }
    let view: Vec<_> = ov_engine::plan::plan_at_last_stop(book)
        .into_iter()
        .filter_map(|m| m.turn_id)
        .collect();
    assert!(
        view.iter().any(|t| t == "t2"),
        "the view keeps t2: {view:?}"
    );
}

/// Any one hook of the turn is enough: only its PreToolUse, only its Stop, only its prompt.
#[test]
fn one_hook_of_the_turn_is_enough() {
    let events = vec![
        env(1, hook(HookKind::PreToolUse, Some("t1"), None, None)),
        env(2, hook(HookKind::Stop, Some("t2"), None, Some("a2"))),
        env(
            3,
            hook(HookKind::PromptSubmit, Some("t3"), Some("three"), None),
        ),
        env(
            4,
            read(
                0,
                vec![
                    frag("t1", "one", "a1"),
                    frag("t2", "two", "a2"),
                    frag("t3", "three", "a3"),
                ],
            ),
        ),
        env(5, Event::OpenTurnsClosed),
    ];
    let state = State::fold(&events);
    assert_eq!(planned_turns(&state), turns(&["t1", "t2", "t3"]));
}

/// Copilot: prompts name no turn and carry no words; agentStop names the turn by its user
/// message id. A failed turn (no agentStop) is still sent, as its prompt hook saw it; a turn
/// made while the plugin was disabled is not, even though an unnamed turn is left before it.
#[test]
fn copilot_unnamed_prompts_join_their_transcript_turns_in_order() {
    let copilot = |kind, turn: Option<&str>| {
        Event::HookReceived(HookReceived {
            kind: Some(kind),
            harness: "copilot".into(),
            session_id: Some("s".into()),
            turn_id: turn.map(str::to_owned),
            ..HookReceived::default()
        })
    };
    let events = vec![
        env(1, copilot(HookKind::PromptSubmit, None)),
        env(2, copilot(HookKind::Stop, Some("m1"))),
        // m2: its model call failed, no agentStop.
        env(3, copilot(HookKind::PromptSubmit, None)),
        // m3: made while the plugin was disabled: no hook at all.
        env(4, copilot(HookKind::PromptSubmit, None)),
        env(5, copilot(HookKind::Stop, Some("m4"))),
        env(
            6,
            read(
                0,
                vec![
                    frag("m1", "one", "a1"),
                    TurnFragment {
                        final_text: None,
                        last_text: None,
                        finished: false,
                        interrupted: true,
                        ..frag("m2", "boom", "")
                    },
                    frag("m3", "private", "secret"),
                    frag("m4", "four", "a4"),
                ],
            ),
        ),
    ];
    let state = State::fold(&events);
    let planned = planned_turns(&state);
    assert_eq!(
        planned,
        vec![
            (Some("m1".into()), "user"),
            (Some("m1".into()), "assistant"),
            (Some("m2".into()), "user"),
            (Some("m4".into()), "user"),
            (Some("m4".into()), "assistant"),
        ]
    );
    assert_eq!(state.consent_of("m3"), Some(Consent::NoHook));
}

/// A hook that did not capture (paused) refuses its turn for good: its Stop after resume,
/// a rescanned transcript, a drain: nothing of it is planned. Id-less refusals refuse the
/// turn the hook is in.
#[test]
fn a_refused_turn_stays_refused_after_resume() {
    let refused = |turn: Option<&str>| Event::CaptureRefused {
        turn_id: turn.map(str::to_owned),
        reason: "paused (global)".into(),
    };
    let events = vec![
        env(1, hook(HookKind::PromptSubmit, Some("t1"), None, None)),
        env(2, refused(Some("t1"))),
        // Resumed before t1 ended: its Stop captures.
        env(3, hook(HookKind::Stop, Some("t1"), None, Some("a1"))),
        env(4, hook(HookKind::PromptSubmit, None, Some("two"), None)),
        env(5, refused(None)),
        env(6, hook(HookKind::Stop, None, None, Some("a2"))),
        env(
            7,
            hook(HookKind::PromptSubmit, Some("t3"), Some("three"), None),
        ),
        env(8, hook(HookKind::Stop, Some("t3"), None, Some("a3"))),
        env(
            9,
            read(
                0,
                vec![
                    frag("t1", "one", "a1"),
                    frag("t2", "two", "a2"),
                    frag("t3", "three", "a3"),
                ],
            ),
        ),
        env(10, Event::OpenTurnsClosed),
    ];
    let state = State::fold(&events);
    assert_eq!(planned_turns(&state), turns(&["t3"]));
    assert!(matches!(
        state.consent_of("t1"),
        Some(Consent::Refused(r)) if r == "paused (global)"
    ));
    // A rescan brings t1 back as a new rollout turn: still refused.
    let mut again = state.clone();
    let mut rescan = read(0, vec![frag("t1", "one", "a1")]);
    if let Event::RolloutRead { chunk, .. } = &mut rescan {
        chunk.rescanned = true;
    }
    again.apply(&env(11, rescan));
    again.apply(&env(12, Event::OpenTurnsClosed));
    assert!(plan(&again, &DeliverySettings::new("zc-s".into()))
        .iter()
        .all(|m| m.turn_id.as_deref() == Some("t3")));
}

/// Forgetting a turn sets aside its planned, unsent messages and keeps it from ever being
/// planned; forgetting the session does that for every message and turn.
#[test]
fn forgotten_turns_and_sessions_are_never_sent() {
    let events = vec![
        env(
            1,
            hook(HookKind::PromptSubmit, Some("t1"), Some("one"), None),
        ),
        env(2, hook(HookKind::Stop, Some("t1"), None, Some("a1"))),
        env(
            3,
            hook(HookKind::PromptSubmit, Some("t2"), Some("two"), None),
        ),
        env(4, hook(HookKind::Stop, Some("t2"), None, Some("a2"))),
    ];
    let mut state = State::fold(&events);
    let planned = plan(&state, &DeliverySettings::new("zc-s".into()));
    state.apply(&env(
        5,
        Event::MessagesPlanned {
            messages: planned.clone(),
        },
    ));
    assert_eq!(state.outbox().len(), 4);
    state.apply(&env(
        6,
        Event::Forgotten {
            turn_id: Some("t1".into()),
            note: "t1".into(),
        },
    ));
    let outbox: Vec<_> = state
        .outbox()
        .into_iter()
        .filter_map(|(_, r)| r.turn_id.clone())
        .collect();
    assert_eq!(outbox, ["t2", "t2"]);
    assert!(state
        .messages
        .values()
        .filter(|r| r.turn_id.as_deref() == Some("t1"))
        .all(|r| matches!(&r.status, MessageStatus::SetAside { error, .. } if error.contains("forgotten"))));
    // t1's Stop again (a duplicate delivery): still nothing of t1.
    state.apply(&env(7, hook(HookKind::Stop, Some("t1"), None, Some("a1"))));
    assert!(plan(&state, &DeliverySettings::new("zc-s".into())).is_empty());

    state.apply(&env(
        8,
        Event::Forgotten {
            turn_id: None,
            note: "all".into(),
        },
    ));
    assert!(state.outbox().is_empty() && state.is_settled());
    state.apply(&env(
        9,
        hook(HookKind::PromptSubmit, Some("t3"), Some("three"), None),
    ));
    state.apply(&env(10, hook(HookKind::Stop, Some("t3"), None, Some("a3"))));
    assert!(plan(&state, &DeliverySettings::new("zc-s".into())).is_empty());
}

proptest! {
    /// Whatever turns the hooks saw (any one of prompt, tool use, Stop) and however the
    /// rollout is cut into reads, exactly the seen turns are planned, in order.
    #[test]
    fn exactly_the_turns_a_hook_saw_are_planned(
        seen in proptest::collection::vec(0u8..8, 1..12),
        cut in 0usize..12,
    ) {
        let n = seen.len();
        let ids: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
        let mut events = Vec::new();
        let mut at = 0;
        let mut push = |e: Event, events: &mut Vec<Envelope>| {
            at += 1;
            events.push(env(at, e));
        };
        for (id, mask) in ids.iter().zip(&seen) {
            if mask & 1 != 0 {
                push(hook(HookKind::PromptSubmit, Some(id), Some(&format!("p {id}")), None), &mut events);
            }
            if mask & 2 != 0 {
                push(hook(HookKind::PreToolUse, Some(id), None, None), &mut events);
            }
            if mask & 4 != 0 {
                push(hook(HookKind::Stop, Some(id), None, Some(&format!("a {id}"))), &mut events);
            }
        }
        let frags: Vec<TurnFragment> = ids
            .iter()
            .map(|id| frag(id, &format!("p {id}"), &format!("a {id}")))
            .collect();
        let cut = cut.min(n);
        let (a, b) = frags.split_at(cut);
        if !a.is_empty() {
            push(read(0, a.to_vec()), &mut events);
        }
        if !b.is_empty() {
            push(read(1000, b.to_vec()), &mut events);
        }
        push(Event::OpenTurnsClosed, &mut events);
        let state = State::fold(&events);
        let expected: Vec<&str> = ids
            .iter()
            .zip(&seen)
            .filter(|(_, m)| **m != 0)
            .map(|(id, _)| id.as_str())
            .collect();
        prop_assert_eq!(planned_turns(&state), turns(&expected));
    }
}
