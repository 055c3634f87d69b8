//! The turn book: completion and content rules, hook-only turns, bounded memory.

use std::collections::HashSet;

use ov_engine::turn::{Candidate, DedupKey, Role, TranscriptChunk, TurnFragment};
use ov_engine::turnbook::{AnswerPrecedence, TurnBook, TurnRecord, KEPT_UNSEEN_TURNS};
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
        ..TurnFragment::default()
    }
}

fn chunk(start: u64, end: u64, mut fragments: Vec<TurnFragment>) -> TranscriptChunk {
    let n = fragments.len();
    for (i, f) in fragments.iter_mut().enumerate() {
        f.superseded = i + 1 < n;
    }
    TranscriptChunk {
        start,
        end,
        file_len: end,
        fragments,
        ..TranscriptChunk::default()
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

fn times(b: &TurnBook) -> Vec<(&'static str, Option<u64>)> {
    b.candidates()
        .iter()
        .map(|c| (c.role.as_str(), c.created_at_ms))
        .collect()
}

/// Each message carries when it was written: the hook's time first (the first
/// UserPromptSubmit, the first Stop), else the transcript's, else the other message's.
#[test]
fn message_times_follow_the_hooks_then_the_transcript() {
    let timed = |prompt_ms, answer_ms| TurnFragment {
        prompt_ms,
        answer_ms,
        ..frag("t1", Some("p1"), Some("a1"), None)
    };
    // Hooks and transcript: the hooks' times, the first of each.
    let mut b = TurnBook::new();
    b.observe_prompt_at(Some("t1"), "p1", Some(100));
    b.observe_prompt_at(Some("t1"), "p1", Some(150));
    b.observe_chunk(&chunk(0, 10, vec![timed(Some(110), Some(180))]));
    b.observe_stop_with_preview(Some("t1"), Some("a1"), None, Some(200));
    b.observe_stop_with_preview(Some("t1"), Some("a1"), None, Some(900));
    assert_eq!(times(&b), [("user", Some(100)), ("assistant", Some(200))]);
    // No hooks (a drain of the transcript alone): the transcript's times.
    let mut b = TurnBook::new();
    b.observe_chunk(&chunk(0, 10, vec![timed(Some(110), Some(180))]));
    b.force_complete();
    assert_eq!(times(&b), [("user", Some(110)), ("assistant", Some(180))]);
    // A prompt hook and a forced end with no answer time: the answer takes the prompt's.
    let mut b = TurnBook::new();
    b.observe_prompt_at(Some("t1"), "p1", Some(100));
    b.observe_chunk(&chunk(0, 10, vec![timed(None, None)]));
    b.force_complete();
    assert_eq!(times(&b), [("user", Some(100)), ("assistant", Some(100))]);
    // Nothing known: no time (the server stamps the message when it arrives).
    let mut b = TurnBook::new();
    b.observe_prompt(Some("t1"), "p1");
    b.observe_stop(Some("t1"), Some("a1"));
    assert_eq!(times(&b), [("user", None), ("assistant", None)]);
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
            s(
                "turn:t1:assistant",
                "assistant",
                "[interrupted] half an answer",
                true
            )
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
    // Nor does a rescanned chunk that starts past 0 with another turn.
    let mut r3 = chunk(40, 50, vec![frag("t3", Some("p3"), None, None)]);
    r3.rescanned = true;
    r3.fragments[0].superseded = false;
    b.observe_chunk(&r3);
    assert_eq!(b.candidates().len(), 2, "t2 is still open after a rescan");
}

#[test]
fn force_complete_yields_the_prompt_and_marks_an_interrupted_turns_last_text() {
    // Interrupted (its latest call has no finishReason): the last text, marked.
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
        [
            s("turn:t1:user", "user", "p1", false),
            s(
                "turn:t1:assistant",
                "assistant",
                "[interrupted] partial",
                true
            )
        ]
    );
    // Still running (its latest call asked for tools): only the prompt.
    let mut b = TurnBook::new();
    b.observe_prompt(Some("t1"), "p1");
    let mut running = frag("t1", Some("p1"), None, Some("narration"));
    running.interrupted = false;
    b.observe_chunk(&chunk(0, 10, vec![running]));
    b.force_complete();
    assert_eq!(
        summary(&b.candidates()),
        [s("turn:t1:user", "user", "p1", false)]
    );
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

/// Copilot CLI: wordless, id-less prompt hooks, and an `agentStop` named by the last user
/// message of `events.jsonl`, which Copilot writes in batches: under load the Stop names the
/// turn before. The Stop ends the running prompt turn all the same, the transcript names
/// that turn when it shows it, and until then the book says the transcript owes it.
#[test]
fn a_stop_named_by_a_lagging_transcript_ends_the_running_prompt_turn() {
    let mut b = TurnBook::new();
    b.observe_prompt_hook(None, None);
    b.observe_stop(Some("m1"), None);
    b.observe_chunk(&chunk(
        0,
        10,
        vec![frag("m1", Some("first"), Some("a1"), None)],
    ));
    assert!(!b.awaits_transcript());

    b.observe_prompt_hook(None, None);
    assert!(b.awaits_transcript(), "the prompt is owed");
    // The transcript still ends with m1.
    b.observe_stop(Some("m1"), None);
    assert!(b.awaits_transcript(), "the prompt and the answer are owed");
    assert_eq!(b.turns().len(), 2);
    assert!(b.turns().iter().all(|t| t.stopped), "{:?}", b.turns());

    b.observe_chunk(&chunk(
        10,
        20,
        vec![frag("m2", Some("second"), Some("a2"), None)],
    ));
    assert!(!b.awaits_transcript());
    assert_eq!(
        summary(&b.candidates()),
        [
            s("turn:m1:user", "user", "first", false),
            s("turn:m1:assistant", "assistant", "a1", false),
            s("turn:m2:user", "user", "second", false),
            s("turn:m2:assistant", "assistant", "a2", false),
        ]
    );

    // A repeated Stop of a stopped turn, with no prompt turn after it, ends that turn again.
    b.observe_stop(Some("m2"), None);
    assert_eq!(b.turns().len(), 2);
}

/// A turn whose Stop has no answer owes it until a transcript read shows one; a refused turn
/// owes nothing.
#[test]
fn a_stopped_turn_without_an_answer_awaits_the_transcript_unless_refused() {
    let mut b = TurnBook::new();
    b.observe_prompt(Some("t1"), "what is in notes.md?");
    assert!(!b.awaits_transcript(), "running, its prompt known");
    b.observe_stop(Some("t1"), None);
    assert!(b.awaits_transcript());
    b.observe_chunk(&chunk(
        0,
        10,
        vec![frag("t1", Some("what is in notes.md?"), Some("a1"), None)],
    ));
    assert!(!b.awaits_transcript());

    b.observe_prompt(Some("t2"), "and now?");
    b.observe_refused(Some("t2"), "paused (project)");
    b.observe_stop(Some("t2"), None);
    assert!(!b.awaits_transcript());
    b.observe_prompt(Some("t3"), "and then?");
    b.observe_stop(Some("t3"), Some("the answer"));
    assert!(!b.awaits_transcript(), "the Stop carried the answer");
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
    for i in 0..500 {
        let id = format!("t{i}");
        b.observe_prompt(Some(&id), &format!("p{i}"));
        b.observe_stop(Some(&id), Some(&format!("a{i}")));
        for c in b.candidates() {
            planned.insert(c.key);
        }
        b.retain_unplanned(|c| planned.contains(&c.key));
    }
    // Turns the rollout has not shown: the latest few stay for their rollout lines to join.
    assert_eq!(b.turns().len(), KEPT_UNSEEN_TURNS);
    assert_eq!(b.turns()[0].turn_id.as_deref(), Some("t468"));
    // Once the rollout has shown them, planned turns go.
    let frags: Vec<TurnFragment> = (468..500)
        .map(|i| {
            frag(
                &format!("t{i}"),
                Some(&format!("p{i}")),
                Some(&format!("a{i}")),
                None,
            )
        })
        .collect();
    b.observe_chunk(&chunk(0, 10, frags));
    b.retain_unplanned(|c| planned.contains(&c.key));
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
    /// A whole turn the rollout never shows (prompt and answered Stop, id `h<n>`: no rollout
    /// line names it).
    HookOnly(u8),
}

/// Turn ids are drawn from more turns than the book keeps unseen, so the bound is reached.
const IDS: u8 = 2 * KEPT_UNSEEN_TURNS as u8;

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        (0u8..IDS).prop_map(Ev::Prompt),
        (0u8..IDS, any::<bool>()).prop_map(|(t, a)| Ev::Stop(t, a)),
        (0u8..IDS, any::<bool>()).prop_map(|(t, f)| Ev::Rollout(t, f)),
        Just(Ev::Force),
    ]
}

/// Random events with, somewhere among them, more hook-only turns than the book keeps unseen:
/// every case passes the bound, and a book that kept every unseen turn fails it.
fn events() -> impl Strategy<Value = Vec<Ev>> {
    (
        prop::collection::vec(ev(), 1..200),
        (KEPT_UNSEEN_TURNS as u8 + 1)..IDS,
        any::<prop::sample::Index>(),
    )
        .prop_map(|(mut events, hook_only, at)| {
            let at = at.index(events.len() + 1);
            events.splice(at..at, (0..hook_only).map(Ev::HookOnly));
            events
        })
}

/// The turns the rollout has not shown, by their place in the book.
fn unseen(b: &TurnBook) -> Vec<usize> {
    (0..b.turns().len())
        .filter(|&i| b.turns()[i].rollout.is_none())
        .collect()
}

proptest! {
    /// Whatever the order of hooks, reads and drains, with planning and pruning after
    /// every step: candidates never repeat a key, are never empty, and every turn the book
    /// keeps has a reason to be kept: it is open or unsettled, it is the rollout's last turn,
    /// it is among the latest [`KEPT_UNSEEN_TURNS`] the rollout has not shown, or it has a
    /// message not planned yet.
    ///
    /// The bound: the book keeps the latest [`KEPT_UNSEEN_TURNS`] unseen turns (none of them is
    /// dropped) and no other unseen turn that is complete, settled and planned.
    #[test]
    fn no_key_twice_and_bounded(events in events()) {
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
                Ev::HookOnly(t) => {
                    let id = format!("h{t}");
                    b.observe_prompt(Some(&id), &format!("hook-only prompt {t}"));
                    b.observe_stop(Some(&id), Some(&format!("hook-only answer {t}")));
                }
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
            let before = unseen(&b);
            let latest_unseen: Vec<TurnRecord> = before[before.len().saturating_sub(KEPT_UNSEEN_TURNS)..]
                .iter()
                .filter_map(|&i| b.turns().get(i).cloned())
                .collect();
            b.retain_unplanned(|c| planned.contains(&c.key));
            for t in &latest_unseen {
                prop_assert!(b.turns().contains(t), "latest unseen turn {:?} dropped", t.turn_id);
            }
            let unseen = unseen(&b);
            let kept_unseen = &unseen[unseen.len().saturating_sub(KEPT_UNSEEN_TURNS)..];
            let last = b.last_rollout_turn().map(str::to_owned);
            for (i, t) in b.turns().iter().enumerate() {
                let open = !t.is_complete() || !t.is_settled();
                let is_last = last.is_some()
                    && t.rollout_id.as_ref().or(t.turn_id.as_ref()) == last.as_ref();
                let unplanned = t
                    .messages(AnswerPrecedence::StopFirst)
                    .iter()
                    .any(|m| !planned.contains(&m.key));
                prop_assert!(
                    open || is_last || kept_unseen.contains(&i) || unplanned,
                    "turn {:?} kept without a reason", t.turn_id
                );
            }
            let closed_unseen = unseen
                .iter()
                .filter_map(|&i| b.turns().get(i))
                .filter(|t| t.is_complete() && t.is_settled())
                .count();
            prop_assert!(
                closed_unseen <= KEPT_UNSEEN_TURNS,
                "{closed_unseen} complete, settled, planned turns the rollout never showed are kept"
            );
        }
    }
}

#[test]
fn a_preview_never_beats_the_rollouts_final_answer() {
    let mut b = TurnBook::new();
    b.observe_prompt(Some("t1"), "p1");
    // Stop with only a truncated preview, before the rollout has the final call.
    b.observe_stop_with_preview(Some("t1"), None, Some("The long ans…"), None);
    b.observe_chunk(&chunk(
        0,
        10,
        vec![frag("t1", Some("p1"), None, Some("narration"))],
    ));
    let mut running = b.clone();
    running.observe_chunk(&chunk(
        10,
        20,
        vec![frag("t1", None, Some("The long answer, in full."), None)],
    ));
    assert_eq!(
        summary(&running.candidates()),
        [
            s("turn:t1:user", "user", "p1", false),
            s(
                "turn:t1:assistant",
                "assistant",
                "The long answer, in full.",
                false
            )
        ]
    );
    // The preview is the answer of last resort: only once the turn is over for good.
    let mut only_preview = TurnBook::new();
    only_preview.observe_prompt(Some("t1"), "p1");
    only_preview.observe_stop_with_preview(Some("t1"), None, Some("The long ans…"), None);
    assert_eq!(only_preview.candidates().len(), 1, "waits for the rollout");
    only_preview.force_complete();
    assert_eq!(
        summary(&only_preview.candidates())[1],
        s("turn:t1:assistant", "assistant", "The long ans…", false)
    );
}

#[test]
fn a_stop_before_its_rollout_lines_waits_so_the_prompt_comes_first() {
    let mut b = TurnBook::new();
    // No UserPromptSubmit; the Stop arrives before the rollout has the turn.
    b.observe_stop(Some("t1"), Some("the answer"));
    assert!(
        b.candidates().is_empty(),
        "the user message is not known yet"
    );
    b.observe_chunk(&chunk(
        0,
        10,
        vec![frag("t1", Some("the prompt"), Some("the answer"), None)],
    ));
    assert_eq!(
        summary(&b.candidates()),
        [
            s("turn:t1:user", "user", "the prompt", false),
            s("turn:t1:assistant", "assistant", "the answer", false)
        ]
    );
    // With no rollout at all, a drain sends what is known.
    let mut d = TurnBook::new();
    d.observe_stop(Some("t2"), Some("only the answer"));
    d.force_complete();
    assert_eq!(d.candidates().len(), 1);
}

#[test]
fn steering_follows_the_prompt_in_the_user_message() {
    // From the rollout: a later call's last user message sits after the prompt.
    let mut b = TurnBook::new();
    let mut first = frag("t1", Some("refactor the parser"), None, Some("looking"));
    first.prompt_at = Some(3);
    first.interrupted = false;
    let mut later = frag("t1", Some("also keep the old API"), Some("Done."), None);
    later.prompt_at = Some(6);
    b.observe_chunk(&chunk(0, 10, vec![first]));
    b.observe_chunk(&chunk(10, 20, vec![later]));
    b.observe_stop(Some("t1"), None);
    assert_eq!(
        summary(&b.candidates()),
        [
            s(
                "turn:t1:user",
                "user",
                "refactor the parser\n\nalso keep the old API",
                false
            ),
            s("turn:t1:assistant", "assistant", "Done.", false)
        ]
    );
    // From hooks: a second prompt for the same turn.
    let mut h = TurnBook::new();
    h.observe_prompt(Some("t1"), "first");
    h.observe_prompt(Some("t1"), "then this");
    h.observe_prompt(Some("t1"), "then this");
    h.observe_stop(Some("t1"), Some("ok"));
    assert_eq!(summary(&h.candidates())[0].2, "first\n\nthen this");
}

#[test]
fn a_task_notification_turn_has_only_its_answer() {
    let mut b = TurnBook::new();
    b.observe_chunk(&chunk(
        0,
        10,
        vec![frag("t1", None, Some("The task finished."), None)],
    ));
    b.observe_prompt(Some("t1"), "<task-notification>x</task-notification>");
    b.observe_stop(Some("t1"), None);
    assert_eq!(
        summary(&b.candidates()),
        [s(
            "turn:t1:assistant",
            "assistant",
            "The task finished.",
            false
        )]
    );
}

#[test]
fn a_turn_named_by_a_hook_first_keeps_that_identity_when_the_rollout_arrives() {
    // Hooks without a turnId but with a traceId, messages planned: the rollout's lines
    // (same traceId) join the turn and its identity stays.
    let mut b = TurnBook::new();
    b.observe_prompt(Some("trace-1"), "the prompt");
    b.observe_stop(Some("trace-1"), Some("the answer"));
    let first = summary(&b.candidates());
    let planned: Vec<String> = first.iter().map(|(k, ..)| k.clone()).collect();
    let mut f = frag("turn_r", Some("the prompt"), Some("the answer"), None);
    f.trace_id = Some("trace-1".into());
    b.observe_chunk_given(&chunk(0, 10, vec![f.clone()]), |k| {
        planned.contains(&k.to_string())
    });
    assert_eq!(summary(&b.candidates()), first, "no second identity");
    assert_eq!(b.turns().len(), 1);
    // Nothing planned yet: the rollout's turnId becomes the identity, and the hooks'
    // traceId still finds the turn.
    let mut b = TurnBook::new();
    b.observe_prompt(Some("trace-1"), "the prompt");
    b.observe_stop(Some("trace-1"), Some("the answer"));
    b.observe_chunk(&chunk(0, 10, vec![f.clone()]));
    assert_eq!(
        summary(&b.candidates()),
        [
            s("turn:turn_r:user", "user", "the prompt", false),
            s("turn:turn_r:assistant", "assistant", "the answer", false)
        ]
    );
    b.observe_stop(Some("trace-1"), Some("the answer, again"));
    assert_eq!(b.turns().len(), 1);
    // Planned under the traceId after all (a journal of a build that kept the first
    // name): the planned identity wins, so a replay has no second set of keys.
    b.observe_planned("trace-1");
    assert_eq!(
        summary(&b.candidates())
            .iter()
            .map(|(k, ..)| k.as_str())
            .collect::<Vec<_>>(),
        ["turn:trace-1:user", "turn:trace-1:assistant"]
    );
    b.observe_planned("trace-1");
    b.observe_chunk(&chunk(10, 20, vec![f]));
    assert_eq!(b.turns().len(), 1);
    assert_eq!(b.turns()[0].turn_id.as_deref(), Some("trace-1"));
    // Hooks with no id at all: the rollout's turn with the same prompt joins.
    let mut b = TurnBook::new();
    b.observe_prompt(None, "bare prompt");
    b.observe_stop(None, Some("bare answer"));
    let first = summary(&b.candidates());
    assert!(first.iter().all(|(k, ..)| k.starts_with("hash:")));
    b.observe_chunk(&chunk(
        0,
        10,
        vec![frag(
            "turn_r",
            Some("bare prompt"),
            Some("bare answer"),
            None,
        )],
    ));
    assert_eq!(summary(&b.candidates()), first);
    // The rollout named it first: an id-less Stop ends that turn.
    let mut b = TurnBook::new();
    let mut running = frag("turn_r", Some("p"), None, Some("n"));
    running.interrupted = false;
    b.observe_chunk(&chunk(0, 10, vec![running]));
    b.observe_stop(None, Some("final"));
    assert_eq!(b.turns().len(), 1);
    assert_eq!(
        summary(&b.candidates()),
        [
            s("turn:turn_r:user", "user", "p", false),
            s("turn:turn_r:assistant", "assistant", "final", false)
        ]
    );
}

/// A turn a hook named by its `traceId`, planned and settled before the rollout shows it:
/// it stays in the book, so its rollout lines (arriving turns later) join it and give no
/// second set of messages.
#[test]
fn a_planned_turn_named_by_its_trace_id_is_joined_by_a_late_rollout() {
    let mut b = TurnBook::new();
    let mut planned: HashSet<DedupKey> = HashSet::new();
    let mut plan = |b: &mut TurnBook| {
        for c in b.candidates() {
            planned.insert(c.key);
        }
        let p = planned.clone();
        b.retain_unplanned(|c| p.contains(&c.key));
    };
    b.observe_prompt(Some("trace-late"), "the prompt");
    b.observe_stop(Some("trace-late"), Some("the answer"));
    plan(&mut b);
    for i in 0..5 {
        let id = format!("t{i}");
        b.observe_prompt(Some(&id), "later");
        b.observe_stop(Some(&id), Some("later answer"));
        plan(&mut b);
    }
    let mut f = frag("turn_real", Some("the prompt"), Some("the answer"), None);
    f.trace_id = Some("trace-late".into());
    b.observe_chunk_given(&chunk(0, 10, vec![f]), |k| planned.contains(k));
    // A drain then closes every open turn.
    b.force_complete();
    let fresh: Vec<String> = b
        .candidates()
        .into_iter()
        .filter(|c| !planned.contains(&c.key))
        .map(|c| c.key.0)
        .collect();
    assert!(fresh.is_empty(), "sent again under {fresh:?}");
}

/// A subagent's turn, reported whole while the parent's turn that spawned it is still running:
/// it is complete and planned at once, and the parent's turn stays open (not superseded), to be
/// planned whole at its own Stop.
#[test]
fn a_subagent_turn_leaves_the_running_turn_open() {
    let mut book = TurnBook::default();
    book.observe_prompt_at(Some("p1"), "find the loader", Some(1_000));
    book.observe_subagent_turn(
        "subagent-a1",
        Some("search the repo"),
        Some("src/config.rs"),
        2_000,
    );
    let got: Vec<(String, Role, String)> = book
        .candidates_by(AnswerPrecedence::TranscriptFirst)
        .into_iter()
        .map(|c| (c.turn_id.unwrap_or_default(), c.role, c.content))
        .collect();
    assert_eq!(
        got,
        [
            ("subagent-a1".into(), Role::User, "search the repo".into()),
            (
                "subagent-a1".into(),
                Role::Assistant,
                "src/config.rs".into()
            ),
        ]
    );
    book.observe_stop(Some("p1"), Some("it is src/config.rs"));
    let parent: Vec<(Role, String, bool)> = book
        .candidates()
        .into_iter()
        .filter(|c| c.turn_id.as_deref() == Some("p1"))
        .map(|c| (c.role, c.content, c.interrupted))
        .collect();
    assert_eq!(
        parent,
        [
            (Role::User, "find the loader".into(), false),
            (Role::Assistant, "it is src/config.rs".into(), false),
        ]
    );
}

/// A subagent turn whose task is unknown (no transcript of its own) sends its answer alone,
/// at once: no transcript will ever show it.
#[test]
fn a_subagent_turn_without_its_task_sends_the_answer() {
    let mut book = TurnBook::default();
    book.observe_subagent_turn("subagent-a2", None, Some("done"), 5);
    let got: Vec<(Role, String, Option<u64>)> = book
        .candidates()
        .into_iter()
        .map(|c| (c.role, c.content, c.created_at_ms))
        .collect();
    assert_eq!(got, [(Role::Assistant, "done".into(), Some(5))]);
}
