//! The turn book: completion and content rules, hook-only turns, bounded memory.

use std::collections::HashSet;

use ov_engine::turn::{Candidate, DedupKey, Role, RolloutChunk, TurnFragment};
use ov_engine::turnbook::TurnBook;
use proptest::prelude::*;

fn frag(
    id: &str,
    prompt: Option<&str>,
    final_text: Option<&str>,
    last: Option<&str>,
) -> TurnFragment {
    TurnFragment {
        turn_id: id.to_owned(),
        prompt: prompt.map(str::to_owned),
        final_text: final_text.map(str::to_owned),
        last_text: last.or(final_text).map(str::to_owned),
        finished: final_text.is_some(),
        interrupted: final_text.is_none(),
        calls: 1,
        superseded: false,
    }
}

fn chunk(start: u64, end: u64, mut fragments: Vec<TurnFragment>) -> RolloutChunk {
    let n = fragments.len();
    for (i, f) in fragments.iter_mut().enumerate() {
        f.superseded = i + 1 < n;
    }
    RolloutChunk {
        start,
        end,
        file_len: end,
        fragments,
        ..RolloutChunk::default()
    }
}

fn summary(c: &[Candidate]) -> Vec<(String, &'static str, String, bool)> {
    c.iter()
        .map(|c| {
            (
                c.key.0.clone(),
                c.role.as_str(),
                c.content.clone(),
                c.interrupted,
            )
        })
        .collect()
}

fn s(
    key: &str,
    role: &'static str,
    content: &str,
    interrupted: bool,
) -> (String, &'static str, String, bool) {
    (key.to_owned(), role, content.to_owned(), interrupted)
}

#[test]
fn hook_payloads_alone_make_a_turn() {
    let mut b = TurnBook::new();
    b.observe_prompt(
        Some("turn_1"),
        "<system-reminder>r</system-reminder>What is 2+2?",
    );
    assert!(b.candidates().is_empty(), "open turn: nothing yet");
    b.observe_stop(Some("turn_1"), Some("4"));
    assert_eq!(
        summary(&b.candidates()),
        [
            s("turn:turn_1:user", "user", "What is 2+2?", false),
            s("turn:turn_1:assistant", "assistant", "4", false)
        ]
    );
}

#[test]
fn a_lagging_rollout_adds_nothing_new_and_stop_text_wins() {
    let mut b = TurnBook::new();
    b.observe_prompt(Some("t1"), "hook prompt");
    b.observe_stop(Some("t1"), Some("stop answer"));
    let before = b.candidates();
    b.observe_chunk(&chunk(
        0,
        10,
        vec![frag(
            "t1",
            Some("rollout prompt"),
            Some("rollout answer"),
            None,
        )],
    ));
    assert_eq!(b.candidates(), before);
}

#[test]
fn tail_window_prompt_comes_from_the_hook_and_empty_stop_uses_rollout_final() {
    let mut b = TurnBook::new();
    b.observe_chunk(&chunk(0, 10, vec![frag("t1", None, Some("final"), None)]));
    b.observe_prompt(Some("t1"), "the prompt");
    b.observe_stop(Some("t1"), Some("  "));
    assert_eq!(
        summary(&b.candidates()),
        [
            s("turn:t1:user", "user", "the prompt", false),
            s("turn:t1:assistant", "assistant", "final", false)
        ]
    );
}

#[test]
fn a_new_prompt_ends_the_open_turn_with_its_last_text_interrupted() {
    let mut b = TurnBook::new();
    b.observe_prompt(Some("t1"), "first");
    b.observe_chunk(&chunk(
        0,
        10,
        vec![frag("t1", Some("first"), None, Some("half an answer"))],
    ));
    assert!(b.candidates().is_empty());
    b.observe_prompt(Some("t2"), "second");
    assert_eq!(
        summary(&b.candidates()),
        [
            s("turn:t1:user", "user", "first", false),
            s("turn:t1:assistant", "assistant", "half an answer", true)
        ]
    );
}

#[test]
fn a_chunk_starting_with_another_turn_supersedes_the_last_open_one() {
    let mut b = TurnBook::new();
    b.observe_chunk(&chunk(
        0,
        10,
        vec![frag("t1", Some("p1"), None, Some("narration"))],
    ));
    assert!(b.candidates().is_empty());
    b.observe_chunk(&chunk(
        10,
        20,
        vec![frag("t1", None, Some("answer 1"), None)],
    ));
    assert!(b.candidates().is_empty(), "same turn continues: still open");
    b.observe_chunk(&chunk(20, 30, vec![frag("t2", Some("p2"), None, None)]));
    assert_eq!(
        summary(&b.candidates()),
        [
            s("turn:t1:user", "user", "p1", false),
            s("turn:t1:assistant", "assistant", "answer 1", false)
        ]
    );
    // A rescan from 0 does not supersede by position.
    let mut r = chunk(0, 30, vec![frag("t2", Some("p2"), None, None)]);
    r.rescanned = true;
    b.observe_chunk(&chunk(30, 40, vec![frag("t2", None, None, Some("x"))]));
    b.observe_chunk(&r);
    assert_eq!(b.candidates().len(), 2, "t2 is still open");
}

#[test]
fn force_complete_yields_only_the_prompt_of_an_interrupted_turn() {
    let mut b = TurnBook::new();
    b.observe_prompt(Some("t1"), "p1");
    b.observe_chunk(&chunk(
        0,
        10,
        vec![frag("t1", Some("p1"), None, Some("partial"))],
    ));
    b.force_complete();
    assert_eq!(
        summary(&b.candidates()),
        [s("turn:t1:user", "user", "p1", false)]
    );
    // Superseded after being forced: still no partial text.
    b.observe_prompt(Some("t2"), "p2");
    assert_eq!(b.candidates().len(), 1);
    // A finished turn that is forced gives its final answer.
    let mut f = TurnBook::new();
    f.observe_chunk(&chunk(
        0,
        10,
        vec![frag("t1", Some("p1"), Some("done"), None)],
    ));
    f.force_complete();
    assert_eq!(f.candidates().len(), 2);
}

#[test]
fn id_less_stop_pairs_with_the_latest_id_less_prompt() {
    let mut b = TurnBook::new();
    b.observe_prompt(None, "first");
    b.observe_stop(None, Some("answer 1"));
    b.observe_prompt(None, "second");
    b.observe_stop(None, Some("answer 2"));
    let c = b.candidates();
    let got: Vec<(Role, &str)> = c.iter().map(|c| (c.role, c.content.as_str())).collect();
    assert_eq!(
        got,
        [
            (Role::User, "first"),
            (Role::Assistant, "answer 1"),
            (Role::User, "second"),
            (Role::Assistant, "answer 2")
        ]
    );
    assert_eq!(c[0].key, DedupKey::for_content(Role::User, "first"));
    assert!(c.iter().all(|c| c.turn_id.is_none()));
}

#[test]
fn repeated_prompts_on_two_turns_are_two_messages() {
    let mut b = TurnBook::new();
    for (t, a) in [("t1", "a1"), ("t2", "a2")] {
        b.observe_prompt(Some(t), "continue");
        b.observe_stop(Some(t), Some(a));
    }
    let users: Vec<_> = b
        .candidates()
        .into_iter()
        .filter(|c| c.role == Role::User)
        .collect();
    assert_eq!(users.len(), 2);
    assert_ne!(users[0].key, users[1].key);
}

#[test]
fn late_and_duplicate_stops() {
    let mut b = TurnBook::new();
    b.observe_prompt(Some("t1"), "p1");
    b.observe_prompt(Some("t2"), "p2");
    b.observe_stop(Some("t2"), Some("a2"));
    b.observe_stop(Some("t1"), Some("a1"));
    b.observe_stop(Some("t1"), Some("a1"));
    let got: Vec<String> = b.candidates().iter().map(|c| c.content.clone()).collect();
    assert_eq!(got, ["p1", "a1", "p2", "a2"]);
}

#[test]
fn retain_unplanned_bounds_memory_and_keeps_open_work() {
    let mut b = TurnBook::new();
    let mut planned: HashSet<DedupKey> = HashSet::new();
    for i in 0..50 {
        let id = format!("t{i}");
        b.observe_prompt(Some(&id), &format!("p{i}"));
        b.observe_stop(Some(&id), Some(&format!("a{i}")));
        for c in b.candidates() {
            planned.insert(c.key);
        }
        b.retain_unplanned(|c| planned.contains(&c.key));
    }
    assert!(b.turns().len() <= 1, "kept {} turns", b.turns().len());
    // An open turn and a stopped turn without any answer yet are kept.
    b.observe_prompt(Some("open"), "p");
    b.retain_unplanned(|_| true);
    assert!(b
        .turns()
        .iter()
        .any(|t| t.turn_id.as_deref() == Some("open")));
    b.observe_stop(Some("open"), None);
    for c in b.candidates() {
        planned.insert(c.key);
    }
    b.retain_unplanned(|c| planned.contains(&c.key));
    assert!(b
        .turns()
        .iter()
        .any(|t| t.turn_id.as_deref() == Some("open")));
    // The lagging rollout then brings the answer.
    b.observe_chunk(&chunk(
        0,
        10,
        vec![frag("open", Some("p"), Some("late answer"), None)],
    ));
    let new: Vec<_> = b
        .candidates()
        .into_iter()
        .filter(|c| !planned.contains(&c.key))
        .collect();
    assert_eq!(
        summary(&new),
        [s("turn:open:assistant", "assistant", "late answer", false)]
    );
}

#[test]
fn serde_round_trip_is_equal() -> Result<(), serde_json::Error> {
    let mut b = TurnBook::new();
    b.observe_prompt(Some("t1"), "p1");
    b.observe_chunk(&chunk(
        0,
        10,
        vec![
            frag("t1", Some("p1"), None, Some("x")),
            frag("t2", None, None, None),
        ],
    ));
    b.observe_stop(None, Some("id-less"));
    let back: TurnBook = serde_json::from_str(&serde_json::to_string(&b)?)?;
    assert_eq!(back, b);
    assert_eq!(back.candidates(), b.candidates());
    Ok(())
}

#[derive(Debug, Clone)]
enum Ev {
    Prompt(u8),
    Stop(u8, bool),
    Rollout(u8, bool),
    Force,
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        (0u8..5).prop_map(Ev::Prompt),
        (0u8..5, any::<bool>()).prop_map(|(t, a)| Ev::Stop(t, a)),
        (0u8..5, any::<bool>()).prop_map(|(t, f)| Ev::Rollout(t, f)),
        Just(Ev::Force),
    ]
}

proptest! {
    /// Whatever the order of hooks, reads and drains, with planning and pruning after
    /// every step: candidates never repeat a key, are never empty, and the book stays
    /// bounded by the turns still open.
    #[test]
    fn no_key_twice_and_bounded(events in prop::collection::vec(ev(), 1..40)) {
        let mut b = TurnBook::new();
        let mut planned: HashSet<DedupKey> = HashSet::new();
        let mut pos = 0u64;
        for e in events {
            match e {
                Ev::Prompt(t) => b.observe_prompt(Some(&format!("t{t}")), &format!("prompt {t}")),
                Ev::Stop(t, a) => b.observe_stop(Some(&format!("t{t}")), a.then(|| format!("answer {t}")).as_deref()),
                Ev::Rollout(t, f) => {
                    let id = format!("t{t}");
                    let fr = frag(&id, Some(&format!("prompt {t}")), f.then(|| format!("answer {t}")).as_deref(), Some("narration"));
                    b.observe_chunk(&chunk(pos, pos + 10, vec![fr]));
                    pos += 10;
                }
                Ev::Force => b.force_complete(),
            }
            let c = b.candidates();
            let mut keys = HashSet::new();
            for m in &c {
                prop_assert!(keys.insert(m.key.clone()), "key twice: {}", m.key);
                prop_assert!(!m.content.is_empty());
            }
            for m in c {
                planned.insert(m.key);
            }
            b.retain_unplanned(|c| planned.contains(&c.key));
            // Bounded: open or unsettled turns only, plus the last rollout turn.
            prop_assert!(b.turns().len() <= 6);
        }
    }
}
