//! `why`: the story of one turn, told from the events that concern it, and the verdict on
//! whether it is on the server, drawn from the fold.
//!
//! # Design
//!
//! The journal is walked once, folding as it goes, so each sentence can use the state *at
//! that moment* (which keys belong to the turn, whether they were all acknowledged when a
//! commit started, whether the server was in a back-off). The verdict uses the final state
//! only; the story explains how it got there.
//!
//! # Files
//!
//! * `sentence.rs`: what one event says about the turn.
//! * `verdict.rs`: where the turn stands in the final state.
//!
//! What a failed send or commit means comes from [`ov_engine::failure::Failure`], the
//! classification the worker and the fold use.
mod sentence;
mod verdict;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use ov_engine::event::Event;
use ov_engine::projector::{MessageStatus, State};
use ov_engine::turn::{DedupKey, Role};

use crate::render::time;
use crate::view::{EntryContent, JournalView};
use sentence::sentence;
use verdict::verdict;

/// One sentence of the story.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Where the event is (`segment:offset`).
    pub position: String,
    /// When (UTC ISO).
    pub at: String,
    /// `Event::kind_name`.
    pub kind: &'static str,
    /// The sentence.
    pub text: String,
}

/// Where the turn stands.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// `on-server`, `waiting`, `in-doubt`, `set-aside`, `open`, `not-captured`, `no-hook`,
    /// `refused`, `forgotten`, `unknown`.
    pub kind: &'static str,
    /// Every message of the turn is acknowledged.
    pub on_server: bool,
    /// The verdict line.
    pub text: String,
}

/// The story of one turn (the `why --json` document).
#[derive(Debug, Clone, Serialize)]
pub struct Story {
    /// The turn asked about.
    pub turn_id: String,
    /// The session (from the journal).
    pub session_id: Option<String>,
    /// The sentences, in journal order.
    pub events: Vec<Step>,
    /// The verdict.
    pub verdict: Verdict,
}
/// Walks the journal and tells the story of `turn_id`.
pub fn tell(view: &JournalView, turn_id: &str) -> Story {
    let snapshot_state = view.fold();
    let mut state = State::default();
    // Start from the snapshot a compacted journal begins with, so keys planned before it are known.
    let mut start_after = None;
    for e in &view.entries {
        if let EntryContent::Snapshot(s) = &e.content {
            state = (**s).clone();
            start_after = Some(e.position);
        }
    }
    let mut steps = Vec::new();
    if let Some(pos) = start_after {
        let known = turn_keys(&state, turn_id);
        let delivered_before = let_go(&state, turn_id);
        if !known.is_empty() || delivered_before || state.turns.contains_key(turn_id) {
            steps.push(Step {
                position: pos.to_string(),
                at: "-".into(),
                kind: "snapshot",
                text: format!(
                    "the journal was compacted; the snapshot already knows this turn ({} message(s) planned{}, history before it removed)",
                    known.len(),
                    if delivered_before {
                        "; delivered before it, its record let go: only its identity is kept"
                    } else {
                        ""
                    }
                ),
            });
        }
    }
    // Sends still open in the snapshot that carry this turn's keys.
    let mut sends: BTreeSet<u64> = state
        .sends
        .iter()
        .filter(|(_, s)| {
            s.keys.iter().any(|k| {
                state
                    .messages
                    .get(k)
                    .is_some_and(|r| r.turn_id.as_deref() == Some(turn_id))
            })
        })
        .map(|(id, _)| *id)
        .collect();
    let mut covering_commits: BTreeSet<u64> = BTreeSet::new();
    let mut committed_by: Option<u64> = None;
    let mut unreachable_since: Option<u64> = None;
    let mut told_unreachable = false;
    let mut traces: BTreeMap<u64, String> = BTreeMap::new();
    // When the last of the turn's messages became delivered (its record may be let go since).
    let mut delivered_at: Option<u64> = None;
    for (pos, env) in view
        .events()
        .filter(|(p, _)| start_after.is_none_or(|s| *p > s))
    {
        let before = state.clone();
        state.apply(env);
        for role in [Role::User, Role::Assistant] {
            let key = DedupKey::for_turn(turn_id, role);
            if !before.is_delivered(&key) && state.is_delivered(&key) {
                delivered_at = Some(env.at_ms);
            }
        }
        if let Event::CommitTraced {
            commit_id,
            trace_id,
        } = &env.event
        {
            traces.insert(*commit_id, trace_id.clone());
        }
        if state.backoff_until_ms.is_none() {
            unreachable_since = None;
            told_unreachable = false;
        } else if unreachable_since.is_none() {
            unreachable_since = Some(env.at_ms);
        }
        let text = sentence(
            turn_id,
            env,
            &before,
            &state,
            &mut sends,
            &mut covering_commits,
            &mut committed_by,
            &mut told_unreachable,
        );
        if let Some(text) = text {
            steps.push(Step {
                position: pos.to_string(),
                at: time(env.at_ms),
                kind: env.event.kind_name(),
                text,
            });
        }
    }
    // The final state is the store's fold (snapshot + events), which `state` equals.
    let final_state = &snapshot_state.state;
    let verdict = verdict(
        final_state,
        turn_id,
        committed_by,
        committed_by
            .and_then(|c| traces.get(&c))
            .map(String::as_str),
        unreachable_since,
        &steps,
        start_after.is_some(),
        delivered_at,
    );
    Story {
        turn_id: turn_id.to_string(),
        session_id: final_state.session_id.clone(),
        events: steps,
        verdict,
    }
}
fn turn_keys<'s>(state: &'s State, turn_id: &str) -> Vec<&'s DedupKey> {
    let mut v: Vec<(&DedupKey, u64)> = state
        .messages
        .iter()
        .filter(|(_, r)| r.turn_id.as_deref() == Some(turn_id))
        .map(|(k, r)| (k, r.order))
        .collect();
    v.sort_by_key(|(_, o)| *o);
    v.into_iter().map(|(k, _)| k).collect()
}

/// Whether a message of the turn was delivered and its record let go (only its identity
/// is kept).
fn let_go(state: &State, turn_id: &str) -> bool {
    [Role::User, Role::Assistant].into_iter().any(|r| {
        let key = DedupKey::for_turn(turn_id, r);
        !state.messages.contains_key(&key) && state.is_delivered(&key)
    })
}

fn all_acked(state: &State, turn_id: &str) -> bool {
    let keys = turn_keys(state, turn_id);
    (!keys.is_empty() || let_go(state, turn_id))
        && keys.iter().all(|k| {
            state
                .messages
                .get(*k)
                .is_some_and(|r| matches!(r.status, MessageStatus::Acked))
        })
}

fn unsettled(state: &State, turn_id: &str) -> bool {
    turn_keys(state, turn_id).iter().any(|k| {
        state
            .messages
            .get(*k)
            .is_some_and(|r| !r.status.is_settled())
    })
}
/// The human rendering of a story.
pub fn render(story: &Story) -> String {
    let mut o = format!(
        "turn {} of session {}\n",
        story.turn_id,
        story.session_id.as_deref().unwrap_or("-")
    );
    for s in &story.events {
        o += &format!("{}  {:<8} {}\n", s.at, s.position, s.text);
    }
    o += &format!("verdict: {}\n", story.verdict.text);
    o
}
