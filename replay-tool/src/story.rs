//! `why`: the story of one turn, told from the events that concern it, and the verdict on
//! whether it is on the server, drawn from the fold.
//!
//! # Design
//!
//! The journal is walked once, folding as it goes, so each sentence can use the state *at
//! that moment* (which keys belong to the turn, whether they were all acknowledged when a
//! commit started, whether the server was in a back-off). The verdict uses the final state
//! only; the story explains how it got there.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use ov_engine::event::{Envelope, Event, HookKind};
use ov_engine::projector::{MessageStatus, State};
use ov_engine::turn::{DedupKey, Role};
use ov_journal::Position;

use crate::engine_api::JournalView;
use crate::render::{duration, quote, time};

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
    /// `on-server`, `waiting`, `in-doubt`, `set-aside`, `open`, `not-captured`, `unknown`.
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

fn hook_name(k: Option<HookKind>) -> &'static str {
    match k {
        Some(HookKind::SessionStart) => "SessionStart",
        Some(HookKind::PromptSubmit) => "UserPromptSubmit",
        Some(HookKind::PreToolUse) => "PreToolUse",
        Some(HookKind::Stop) => "Stop",
        None => "an unknown hook",
    }
}

fn role_of(key: &DedupKey, state: &State) -> &'static str {
    state
        .messages
        .get(key)
        .map_or("message", |r| r.role.as_str())
}

fn key_list(keys: &[&DedupKey], state: &State) -> String {
    let v: Vec<String> = keys
        .iter()
        .map(|k| format!("{} ({k})", role_of(k, state)))
        .collect();
    v.join(" and ")
}

/// Walks the journal and tells the story of `turn_id`.
pub fn tell(view: &JournalView, turn_id: &str) -> Story {
    let snapshot_state = view.fold();
    let mut state = State::default();
    // Start from the snapshot a compacted journal begins with, so keys planned before it are known.
    let mut start_after = None;
    for e in &view.entries {
        if let crate::engine_api::EntryContent::Snapshot(s) = &e.content {
            state = (**s).clone();
            start_after = Some(e.position);
        }
    }
    let mut steps = Vec::new();
    if let Some(pos) = start_after {
        let known = turn_keys(&state, turn_id);
        if !known.is_empty() || state.turns.contains_key(turn_id) {
            steps.push(Step {
                position: pos.to_string(),
                at: "-".into(),
                kind: "snapshot",
                text: format!(
                    "the journal was compacted; the snapshot already knows this turn ({} message(s) planned, history before it removed)",
                    known.len()
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
    for (pos, env) in view
        .events()
        .filter(|(p, _)| start_after.is_none_or(|s| *p > s))
    {
        let before = state.clone();
        state.apply(env);
        if state.backoff_until_ms.is_none() {
            unreachable_since = None;
            told_unreachable = false;
        } else if unreachable_since.is_none() {
            unreachable_since = Some(env.at_ms);
        }
        let text = sentence(
            turn_id,
            pos,
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
        unreachable_since,
        &steps,
        start_after.is_some(),
    );
    Story {
        turn_id: turn_id.to_string(),
        session_id: final_state.session_id.clone(),
        events: steps,
        verdict,
    }
}

fn turn_keys<'s>(state: &'s State, turn_id: &str) -> Vec<&'s DedupKey> {
    state
        .order
        .values()
        .filter(|k| {
            state
                .messages
                .get(*k)
                .is_some_and(|r| r.turn_id.as_deref() == Some(turn_id))
        })
        .collect()
}

fn all_acked(state: &State, turn_id: &str) -> bool {
    let keys = turn_keys(state, turn_id);
    !keys.is_empty()
        && keys.iter().all(|k| {
            state
                .messages
                .get(*k)
                .is_some_and(|r| matches!(r.status, MessageStatus::Acked))
        })
}

fn unsettled(state: &State, turn_id: &str) -> bool {
    turn_keys(state, turn_id).iter().any(|k| {
        state.messages.get(*k).is_some_and(|r| {
            matches!(
                r.status,
                MessageStatus::Pending | MessageStatus::InFlight { .. }
            )
        })
    })
}

#[expect(clippy::too_many_arguments)]
// NOTE: the walk's running facts are passed explicitly rather than bundled, so each arm
// shows what it reads and writes.
fn sentence(
    turn_id: &str,
    _pos: Position,
    env: &Envelope,
    before: &State,
    after: &State,
    sends: &mut BTreeSet<u64>,
    covering_commits: &mut BTreeSet<u64>,
    committed_by: &mut Option<u64>,
    told_unreachable: &mut bool,
) -> Option<String> {
    let mine = |k: &DedupKey| {
        after
            .messages
            .get(k)
            .is_some_and(|r| r.turn_id.as_deref() == Some(turn_id))
    };
    match &env.event {
        Event::HookReceived(h) => {
            let t = h.turn_id.as_deref().or(h.trace_id.as_deref());
            if t != Some(turn_id) {
                return None;
            }
            let mut s = format!("{} hook received (pid {})", hook_name(h.kind), env.pid);
            match h.kind {
                Some(HookKind::PromptSubmit) => {
                    if let Some(p) = &h.prompt {
                        s += &format!(": prompt {}", quote(p, 60));
                    }
                    let prompts = after.turns.get(turn_id).map_or(0, |t| t.prompts);
                    if prompts > 1 {
                        s += &format!(" (prompt #{prompts} for this turn: a repeat)");
                    }
                }
                Some(HookKind::Stop) => {
                    match &h.response_text {
                        Some(r) => s += &format!(": answer {}", quote(r, 60)),
                        None => s += ": no answer text",
                    }
                    let stops = after.turns.get(turn_id).map_or(0, |t| t.stops);
                    if stops > 1 {
                        s += &format!(" (Stop #{stops} for this turn: a repeat)");
                    }
                }
                Some(HookKind::PreToolUse) => {
                    if let Some(t) = &h.tool_name {
                        s += &format!(": tool {t}");
                    }
                    if let Some(u) = &h.denied_uri {
                        s += &format!(", denied {u}");
                    }
                }
                _ => {}
            }
            if let Some(m) = &h.malformed {
                s += &format!("; payload malformed ({m})");
            }
            Some(s)
        }
        Event::RolloutRead { path, chunk } => {
            let frag = chunk.fragments.iter().find(|f| f.turn_id == turn_id)?;
            let mut facts = vec![format!("{} model call(s)", frag.calls)];
            facts.push(
                if frag.prompt.is_some() {
                    "the prompt"
                } else {
                    "no prompt (tail window)"
                }
                .into(),
            );
            if frag.final_text.is_some() {
                facts.push("a final answer".into());
            } else if frag.interrupted {
                facts.push("no final answer (interrupted call)".into());
            } else {
                facts.push("no final answer yet".into());
            }
            if frag.superseded {
                facts.push("a later turn after it".into());
            }
            Some(format!(
                "read from the rollout {path}, bytes {}..{}{}: {}",
                chunk.start,
                chunk.end,
                if chunk.rescanned {
                    " (rescanned from the start)"
                } else {
                    ""
                },
                facts.join(", ")
            ))
        }
        Event::MessagesPlanned { messages } => {
            let v: Vec<String> = messages
                .iter()
                .filter(|m| m.turn_id.as_deref() == Some(turn_id))
                .map(|m| {
                    let mut s = format!("{} ({}, {} B", m.role.as_str(), m.key, m.content.len());
                    if (m.content.len() as u64) < m.raw_len {
                        s += &format!(", cut from {} B", m.raw_len);
                    }
                    if m.interrupted {
                        s += ", interrupted turn";
                    }
                    if before.messages.contains_key(&m.key) {
                        s += ", already planned: ignored";
                    }
                    s + ")"
                })
                .collect();
            if v.is_empty() {
                return None;
            }
            let roles: BTreeSet<Role> = messages
                .iter()
                .filter(|m| m.turn_id.as_deref() == Some(turn_id))
                .map(|m| m.role)
                .collect();
            let mut s = format!("planned as {} message(s): {}", v.len(), v.join(", "));
            if !roles.contains(&Role::Assistant) {
                s += "; no assistant message (no answer known)";
            }
            Some(s)
        }
        Event::SendStarted {
            send_id,
            keys,
            single,
        } => {
            let ours: Vec<&DedupKey> = keys.iter().filter(|k| mine(k)).collect();
            if ours.is_empty() {
                return None;
            }
            sends.insert(*send_id);
            Some(format!(
                "sent {} in send {send_id} ({}, pid {})",
                key_list(&ours, after),
                if *single {
                    "one request per message".to_string()
                } else {
                    format!("a batch of {}", keys.len())
                },
                env.pid
            ))
        }
        Event::SendAcked { send_id } => sends
            .contains(send_id)
            .then(|| format!("send {send_id} acknowledged by the server")),
        Event::SendFailed {
            send_id,
            status,
            retryable,
            error,
            request_sent,
        } => {
            if !sends.contains(send_id) {
                return None;
            }
            let what = if *status == 0 {
                "a network error".to_string()
            } else {
                format!("HTTP {status}")
            };
            let then = if *request_sent && (*status == 0 || *status >= 500) {
                "the request had left, so the send is in doubt until reconciled with the server"
                    .to_string()
            } else if *retryable {
                "worth retrying: the messages went back to the outbox".to_string()
            } else {
                let aside: Vec<&str> = before
                    .sends
                    .get(send_id)
                    .map(|s| s.keys.as_slice())
                    .unwrap_or_default()
                    .iter()
                    .filter(|k| {
                        mine(k)
                            && matches!(
                                after.messages.get(*k).map(|r| &r.status),
                                Some(MessageStatus::SetAside { .. })
                            )
                    })
                    .map(DedupKey::as_str)
                    .collect();
                if aside.is_empty() {
                    "refused for good; the batch will be split and each message sent on its own"
                        .to_string()
                } else {
                    format!("refused for good: {} set aside", aside.join(", "))
                }
            };
            Some(format!(
                "send {send_id} failed with {what}: {}; {then}",
                quote(error, 80)
            ))
        }
        Event::Reconciled {
            send_ids,
            present,
            absent,
        } => {
            let ours_p: Vec<&DedupKey> = present.iter().filter(|k| mine(k)).collect();
            let ours_a: Vec<&DedupKey> = absent.iter().filter(|k| mine(k)).collect();
            if ours_p.is_empty() && ours_a.is_empty() && !send_ids.iter().any(|s| sends.contains(s))
            {
                return None;
            }
            let mut parts = Vec::new();
            if !ours_p.is_empty() {
                parts.push(format!(
                    "the server already holds {} (counted as acknowledged, not resent)",
                    key_list(&ours_p, after)
                ));
            }
            if !ours_a.is_empty() {
                parts.push(format!(
                    "the server does not hold {} (back to the outbox)",
                    key_list(&ours_a, after)
                ));
            }
            Some(format!(
                "in-doubt send(s) {send_ids:?} reconciled with the server: {}",
                if parts.is_empty() {
                    "nothing of this turn".to_string()
                } else {
                    parts.join("; ")
                }
            ))
        }
        Event::CommitStarted { commit_id, .. } => {
            if !all_acked(after, turn_id) || committed_by.is_some() {
                return None;
            }
            covering_commits.insert(*commit_id);
            Some(format!(
                "commit {commit_id} started, covering this turn's acknowledged messages"
            ))
        }
        Event::CommitAcked { commit_id, .. } => {
            if !covering_commits.contains(commit_id) || committed_by.is_some() {
                return None;
            }
            *committed_by = Some(*commit_id);
            Some(format!(
                "commit {commit_id} acknowledged: the turn is committed"
            ))
        }
        Event::CommitFailed {
            commit_id,
            status,
            error,
            ..
        } => covering_commits
            .contains(commit_id)
            .then(|| format!("commit {commit_id} failed ({status}): {}", quote(error, 80))),
        Event::CommitReconciled { commit_id, applied } => {
            if !covering_commits.contains(commit_id) || committed_by.is_some() {
                return None;
            }
            if *applied {
                *committed_by = Some(*commit_id);
                Some(format!(
                    "commit {commit_id} was in doubt; the server's commit count shows it applied: the turn is committed"
                ))
            } else {
                Some(format!(
                    "commit {commit_id} was in doubt; the server did not apply it"
                ))
            }
        }
        Event::ServerUnreachable {
            error,
            retry_after_ms,
        } => {
            if !unsettled(after, turn_id) || *told_unreachable {
                return None;
            }
            *told_unreachable = true;
            Some(format!(
                "the server could not be reached ({}); network work paused for {}",
                quote(error, 60),
                duration(*retry_after_ms)
            ))
        }
        Event::OpenTurnsClosed => {
            let open = before
                .book
                .turns()
                .iter()
                .any(|t| t.turn_id.as_deref() == Some(turn_id) && !t.is_complete());
            open.then(|| "a drain treated the still-open turn as over".to_string())
        }
        Event::RecallServed {
            turn_id: Some(t),
            tier,
            block,
            cached,
            ..
        } if t == turn_id => Some(format!(
            "recall for the prompt: {}{}",
            match block {
                Some(b) => format!("{} B injected (tier {tier})", b.len()),
                None => "nothing injected".into(),
            },
            if *cached { ", from the cache" } else { "" }
        )),
        _ => None,
    }
}

fn verdict(
    state: &State,
    turn_id: &str,
    committed_by: Option<u64>,
    unreachable_since: Option<u64>,
    steps: &[Step],
    compacted: bool,
) -> Verdict {
    let keys = turn_keys(state, turn_id);
    let v = |kind, on_server, text: String| Verdict {
        kind,
        on_server,
        text,
    };
    if keys.is_empty() {
        let live = state.turns.get(turn_id);
        let booked = state
            .book
            .turns()
            .iter()
            .find(|t| t.turn_id.as_deref() == Some(turn_id));
        return match (live, booked) {
            (None, None) if steps.is_empty() => v(
                "unknown",
                false,
                "unknown turn id: never seen in this journal".into(),
            ),
            (_, Some(t)) if !t.is_complete() => {
                let stops = live.map_or(0, |l| l.stops);
                let text = if stops == 0 {
                    "not captured: no Stop and no later turn yet (turn still open)"
                } else {
                    "not captured: the turn is not complete yet"
                };
                v("open", false, text.into())
            }
            (_, Some(_)) => v(
                "not-captured",
                false,
                "not captured: the turn is over but its text is not known yet (waiting for the rollout)"
                    .into(),
            ),
            _ => v(
                "not-captured",
                false,
                "not captured: nothing was planned for this turn (no prompt or answer text)".into(),
            ),
        };
    }
    let recs: Vec<(&DedupKey, &ov_engine::projector::MessageRecord)> = keys
        .iter()
        .filter_map(|k| state.messages.get_key_value(*k))
        .collect();
    let aside: Vec<String> = recs
        .iter()
        .filter_map(|(k, r)| match &r.status {
            MessageStatus::SetAside { status, error } => Some(format!("{k}: {status}: {error}")),
            _ => None,
        })
        .collect();
    let in_flight: BTreeMap<u64, Vec<&DedupKey>> =
        recs.iter().fold(BTreeMap::new(), |mut m, (k, r)| {
            if let MessageStatus::InFlight { send_id } = r.status {
                m.entry(send_id).or_insert_with(Vec::new).push(*k);
            }
            m
        });
    let pending: Vec<&&ov_engine::projector::MessageRecord> = recs
        .iter()
        .filter(|(_, r)| matches!(r.status, MessageStatus::Pending))
        .map(|(_, r)| r)
        .collect();
    let acked_at = recs.iter().filter_map(|(_, r)| r.acked_at_ms).max();
    if !in_flight.is_empty() {
        let parts: Vec<String> = in_flight
            .keys()
            .map(|id| match state.sends.get(id) {
                Some(s) => format!(
                    "send {id} started {} by pid {}",
                    time(s.started_at_ms),
                    s.pid
                ),
                None => format!("send {id}"),
            })
            .collect();
        return v(
            "in-doubt",
            false,
            format!(
                "not known to be on the server: {} has no recorded outcome (in doubt); the next worker checks the server before any resend",
                parts.join(", ")
            ),
        );
    }
    if !pending.is_empty() {
        let text = match (state.backoff_until_ms, unreachable_since) {
            (Some(until), since) => format!(
                "not on the server: waiting to be sent (server unreachable since {}: {}; next try after {})",
                since.map_or("-".to_string(), time),
                state.backoff_reason.as_deref().unwrap_or("-"),
                time(until)
            ),
            _ => match pending.iter().filter_map(|r| r.last_error.as_deref()).next_back() {
                Some(e) => format!("not on the server: waiting to be sent again (last failure: {e})"),
                None => format!(
                    "not on the server: waiting to be sent (planned at {}, no send yet{})",
                    pending
                        .iter()
                        .map(|r| r.planned_at_ms)
                        .min()
                        .map_or("-".to_string(), time),
                    if state.next_send_id == 0 {
                        "; this session has never sent anything: with url = off nothing is \
                         sent, and with no URL configured only a local OpenViking at \
                         http://127.0.0.1:1933 would get it; configure one with \
                         `ovhook install --url …`, then run `ovhook drain`"
                    } else {
                        ""
                    }
                ),
            },
        };
        return v("waiting", false, text);
    }
    if !aside.is_empty() {
        let acked = recs
            .iter()
            .filter(|(_, r)| matches!(r.status, MessageStatus::Acked))
            .count();
        let lead = if acked > 0 {
            format!("partly on the server ({acked} message(s) acknowledged); the rest set aside")
        } else {
            "not on the server: set aside".into()
        };
        return v(
            "set-aside",
            false,
            format!(
                "{lead} — the server refused it for good ({})",
                aside.join("; ")
            ),
        );
    }
    let acked = acked_at.map_or("-".to_string(), time);
    let commit = match committed_by {
        Some(c) => format!("committed by commit {c}"),
        None => match &state.commit.in_flight {
            Some(f) => format!("commit {} in flight, not yet confirmed", f.commit_id),
            // Compacted away: the count of acknowledged messages no commit covers still tells.
            None if compacted && state.commit.commits_ok > 0 && state.commit.uncommitted() == 0 => {
                "committed (by a commit before the compaction snapshot)".into()
            }
            None if compacted && state.commit.commits_ok > 0 => format!(
                "committed or not: unknown, the compaction removed the commit history ({} acknowledged message(s) of the session wait for a commit)",
                state.commit.uncommitted()
            ),
            None => "not committed yet".into(),
        },
    };
    v(
        "on-server",
        true,
        format!("on the server (acknowledged at {acked}, {commit})"),
    )
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
