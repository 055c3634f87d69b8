//! The tool calls a transcript read finds, into the journal (`capture.tools` on).
//!
//! | rule | why |
//! |---|---|
//! | only turns whose consent is given ([`crate::turnbook::Consent::Given`]), before or after the range is folded | a refused or unseen turn is never sent, nor anything of it; a turn the range completes with nothing to send leaves the book, and what is journaled must not depend on where a range was cut |
//! | only turns whose answer is not planned or delivered ([`State::takes_tool_calls`]) | the tool parts go with the answer's one request |
//! | every call through [`ToolCall::capture`] | the one entry rule: privacy, then bounds |
//! | a call journaled only when it adds to what the turn keeps | re-reading a transcript (a rescan) journals nothing again |
//! | a result whose call was in an earlier range takes the name the turn keeps for its id; one the reader could not place in a turn goes to the turn that keeps its call | a range may end between a call and its result |

use crate::event::Event;
use crate::privacy::{Policy, Redactions};
use crate::projector::State;
use crate::tool::{ToolCall, TurnTools};

/// The turns of `tools` whose consent `state` gives: read before the range is folded and
/// passed to [`transcript_tool_events`].
pub(super) fn consented_before(state: &State, tools: &[TurnTools]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t.turn_id.as_str())
        .filter(|id| !id.is_empty() && given(state, id))
        .map(str::to_owned)
        .collect()
}

fn given(state: &State, turn_id: &str) -> bool {
    state.book.consent_of(turn_id).is_some_and(|c| c.is_given())
}

/// The events that journal `tools` (the raw calls of one read) under `state`, for turns
/// consented now or in `consented_before` (see [`consented_before`]): per turn a
/// [`Event::ToolCalls`] (origin `transcript`) with what is new, and an [`Event::Redacted`]
/// (origin `tool`) when the privacy rule removed something of it.
pub(super) fn transcript_tool_events(
    state: &State,
    tools: &[TurnTools],
    consented_before: &[String],
    policy: &Policy,
) -> Vec<Event> {
    let mut events = Vec::new();
    for turn in tools.iter().flat_map(|t| placed(state, t)) {
        let turn = &turn;
        let id = turn.turn_id.as_str();
        let consented = given(state, id) || consented_before.iter().any(|c| c == id);
        if !consented || !state.takes_tool_calls(id) {
            continue;
        }
        let kept = state.kept_tool_calls(id);
        let mut counts = Redactions::default();
        let calls: Vec<ToolCall> = turn
            .calls
            .iter()
            .filter_map(|raw| {
                let known = kept
                    .iter()
                    .find(|k| k.id.is_some() && k.id == raw.id)
                    .map_or("", |k| k.name.as_str());
                ToolCall::capture(policy, raw.raw(known), &mut counts)
            })
            .filter(|c| adds_to(kept, c))
            .collect();
        if calls.is_empty() {
            continue;
        }
        events.push(Event::ToolCalls {
            turn_id: id.to_owned(),
            origin: "transcript".into(),
            calls,
        });
        if !counts.is_empty() {
            events.push(Event::Redacted {
                turn_id: Some(id.to_owned()),
                origin: "tool".into(),
                counts,
            });
        }
    }
    events
}

/// `turn` as journaled: itself, or, for results of calls requested before the range (no turn
/// id), one per turn that keeps a call of their id (a result no turn keeps is dropped).
fn placed(state: &State, turn: &TurnTools) -> Vec<TurnTools> {
    if !turn.turn_id.is_empty() {
        return vec![turn.clone()];
    }
    let mut out: Vec<TurnTools> = Vec::new();
    for call in &turn.calls {
        let Some((turn_id, _)) = state
            .tool_calls
            .iter()
            .find(|(_, kept)| kept.iter().any(|k| k.id.is_some() && k.id == call.id))
        else {
            continue;
        };
        match out.iter_mut().find(|t| t.turn_id == *turn_id) {
            Some(t) => t.calls.push(call.clone()),
            None => out.push(TurnTools {
                turn_id: turn_id.clone(),
                calls: vec![call.clone()],
            }),
        }
    }
    out
}

/// Whether `call` changes what `kept` holds: a new call, or a sighting that adds to one.
fn adds_to(kept: &[ToolCall], call: &ToolCall) -> bool {
    match kept.iter().find(|k| k.same_call(call)) {
        None => true,
        Some(k) => {
            let mut merged = k.clone();
            merged.merge(call);
            merged != *k
        }
    }
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::event::{Envelope, HookKind, HookReceived};
    use crate::tool::TranscriptToolCall;

    const SECRET: &str = "ghp_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78";

    fn at(event: Event) -> Envelope {
        Envelope {
            at_ms: 1,
            pid: 1,
            event,
        }
    }

    fn prompted(turn: &str) -> State {
        State::fold(&[at(Event::HookReceived(HookReceived {
            kind: Some(HookKind::PromptSubmit),
            turn_id: Some(turn.into()),
            prompt: Some("read my notes".into()),
            ..HookReceived::default()
        }))])
    }

    fn turn(turn_id: &str, calls: Vec<TranscriptToolCall>) -> TurnTools {
        TurnTools {
            turn_id: turn_id.into(),
            calls,
        }
    }

    fn read_call(output: Option<&str>) -> TranscriptToolCall {
        TranscriptToolCall {
            id: Some("toolu_1".into()),
            name: "Read".into(),
            input: Some(json!({"file_path": format!("notes.md {SECRET}")})),
            output: output.map(|o| json!(o)),
            failed: false,
        }
    }

    #[test]
    fn a_call_is_journaled_once_with_its_secrets_gone() {
        let mut state = prompted("t1");
        let tools = [turn(
            "t1",
            vec![read_call(Some(&format!("NOTE-42 {SECRET}")))],
        )];
        let events = transcript_tool_events(&state, &tools, &[], &Policy::builtin());
        assert_eq!(events.len(), 2, "{events:?}");
        let Event::ToolCalls {
            turn_id,
            calls,
            origin,
        } = &events[0]
        else {
            panic!("tool calls first: {events:?}")
        };
        assert_eq!((turn_id.as_str(), origin.as_str()), ("t1", "transcript"));
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "Read");
        assert!(calls[0]
            .output
            .as_deref()
            .is_some_and(|o| o.starts_with("NOTE-42")));
        assert!(matches!(&events[1], Event::Redacted { origin, .. } if origin == "tool"));
        let journaled = serde_json::to_string(&events).expect("json");
        assert!(!journaled.contains(SECRET), "{journaled}");
        for e in events {
            state.apply(&at(e));
        }
        // The same range read again (a rescan) adds nothing.
        assert!(transcript_tool_events(&state, &tools, &[], &Policy::builtin()).is_empty());
    }

    #[test]
    fn a_result_read_after_its_call_completes_the_kept_call() {
        let mut state = prompted("t1");
        let first = [turn("t1", vec![read_call(None)])];
        for e in transcript_tool_events(&state, &first, &[], &Policy::builtin()) {
            state.apply(&at(e));
        }
        assert_eq!(state.kept_tool_calls("t1")[0].output, None);
        let result = TranscriptToolCall {
            id: Some("toolu_1".into()),
            output: Some(json!("NOTE-42")),
            ..TranscriptToolCall::default()
        };
        let events =
            transcript_tool_events(&state, &[turn("t1", vec![result])], &[], &Policy::builtin());
        let [Event::ToolCalls { calls, .. }] = events.as_slice() else {
            panic!("one event: {events:?}")
        };
        assert_eq!(calls[0].name, "Read", "named by the kept call");
        for e in events {
            state.apply(&at(e));
        }
        let kept = state.kept_tool_calls("t1");
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].output.as_deref(), Some("NOTE-42"));
    }

    #[test]
    fn a_result_without_its_turn_goes_to_the_turn_that_keeps_its_call() {
        let mut state = prompted("t1");
        for e in transcript_tool_events(
            &state,
            &[turn("t1", vec![read_call(None)])],
            &[],
            &Policy::builtin(),
        ) {
            state.apply(&at(e));
        }
        let result = TranscriptToolCall {
            id: Some("toolu_1".into()),
            output: Some(json!("NOTE-42")),
            ..TranscriptToolCall::default()
        };
        let stray = TranscriptToolCall {
            id: Some("toolu_9".into()),
            ..result.clone()
        };
        let events = transcript_tool_events(
            &state,
            &[turn("", vec![result, stray])],
            &[],
            &Policy::builtin(),
        );
        let [Event::ToolCalls { turn_id, calls, .. }] = events.as_slice() else {
            panic!("one event: {events:?}")
        };
        assert_eq!(turn_id, "t1");
        assert_eq!(calls.len(), 1, "the result no turn keeps is dropped");
        assert_eq!(calls[0].output.as_deref(), Some("NOTE-42"));
    }

    #[test]
    fn a_turn_consented_before_the_range_keeps_its_calls_when_the_range_completes_it() {
        // The range completed t1 with nothing to send: the fold let it go from the book.
        let after = State::default();
        let tools = [turn("t1", vec![read_call(Some("NOTE-42"))])];
        assert!(transcript_tool_events(&after, &tools, &[], &Policy::builtin()).is_empty());
        let before = consented_before(&prompted("t1"), &tools);
        assert_eq!(before, ["t1"]);
        let events = transcript_tool_events(&after, &tools, &before, &Policy::builtin());
        assert!(
            matches!(events.first(), Some(Event::ToolCalls { turn_id, .. }) if turn_id == "t1"),
            "{events:?}"
        );
    }

    #[test]
    fn a_turn_without_consent_journals_nothing() {
        let state = prompted("t1");
        let tools = [turn("t2", vec![read_call(Some("x"))])];
        assert!(transcript_tool_events(&state, &tools, &[], &Policy::builtin()).is_empty());
        let mut refused = prompted("t2");
        refused.apply(&at(Event::CaptureRefused {
            turn_id: Some("t2".into()),
            reason: "paused (project)".into(),
        }));
        assert!(transcript_tool_events(&refused, &tools, &[], &Policy::builtin()).is_empty());
    }
}
