//! What one event says about the turn, as a sentence of its story.

use std::collections::BTreeSet;

use ov_engine::event::{Envelope, Event, HookKind};
use ov_engine::failure::Failure;
use ov_engine::projector::{MessageStatus, State};
use ov_engine::turn::{DedupKey, Role};

use super::{all_acked, unsettled};
use crate::render::{duration, quote};

fn hook_name(k: Option<HookKind>) -> &'static str {
    match k {
        Some(HookKind::SessionStart) => "SessionStart",
        Some(HookKind::PromptSubmit) => "UserPromptSubmit",
        Some(HookKind::PreToolUse) => "PreToolUse",
        Some(HookKind::Stop) => "Stop",
        Some(HookKind::SessionEnd) => "SessionEnd",
        Some(HookKind::PreCompact) => "PreCompact",
        Some(HookKind::SubagentStop) => "SubagentStop",
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
#[expect(clippy::too_many_arguments)]
// NOTE: the walk's running facts are passed explicitly rather than bundled, so each arm
// shows what it reads and writes.
pub(super) fn sentence(
    turn_id: &str,
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
            if h.turn() != Some(turn_id) {
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
            if chunk.bad_lines > 0 {
                facts.push(format!(
                    "{} line(s) of that range skipped (over the {} MiB line limit, or not a \
                     transcript line): part of this turn may be lost",
                    chunk.bad_lines,
                    ov_engine::transcript::tail::MAX_LINE_BYTES >> 20
                ));
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
            let failure = Failure::classify(*status, *retryable, *request_sent);
            let then = if failure != Failure::Refused {
                failure.meaning().to_string()
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
            retryable,
            error,
            request_sent,
        } => covering_commits.contains(commit_id).then(|| {
            let then = match Failure::classify(*status, *retryable, *request_sent) {
                Failure::InDoubt => "in doubt: the next worker asks the server's commit count",
                _ => "not applied; the next worker commits again",
            };
            format!(
                "commit {commit_id} failed ({status}): {}; {then}",
                quote(error, 80)
            )
        }),
        Event::CommitTraced {
            commit_id,
            trace_id,
        } => covering_commits
            .contains(commit_id)
            .then(|| format!("commit {commit_id}: the server's trace id is {trace_id}")),
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
        Event::CaptureRefused {
            turn_id: Some(t),
            reason,
        } if t == turn_id => Some(format!(
            "a hook did not capture this turn ({reason}): it is never sent"
        )),
        Event::Forgotten { turn_id: t, note } if t.as_deref().is_none_or(|t| t == turn_id) => {
            Some(format!("forgotten by the user ({note}): it is never sent"))
        }
        Event::Redacted {
            turn_id: Some(t),
            origin,
            counts,
        } if t == turn_id => Some(format!(
            "redacted before it was journaled ({origin}): {}",
            counts.summary()
        )),
        Event::ToolCalls {
            turn_id: t,
            origin,
            calls,
        } if t == turn_id => Some(format!(
            "{} tool call(s) seen ({origin}): {}; they go with the turn's answer, as its tool parts",
            calls.len(),
            calls
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        // Every turn's story says what history is gone.
        Event::Pruned {
            segments,
            bytes,
            newest_ms,
            retention_days,
        } => Some(format!(
            "history pruned: {} segment(s) before the snapshot ({}, {bytes} bytes, last written \
             {}) removed after the {retention_days}-day retention; their events are gone, the \
             snapshot keeps the state (delivered turns as identities)",
            segments.len(),
            match (segments.first(), segments.last()) {
                (Some(a), Some(b)) if a != b => format!("{a}..={b}"),
                (Some(a), _) => a.to_string(),
                _ => "-".into(),
            },
            crate::render::time(*newest_ms)
        )),
        Event::SubagentTurn {
            turn_id: t,
            agent,
            prompt,
            answer,
        } if t == turn_id => Some(format!(
            "subagent {agent} finished (pid {}): {}, {}",
            env.pid,
            prompt
                .as_deref()
                .map_or("no task text".to_owned(), |p| format!(
                    "task {}",
                    quote(p, 60)
                )),
            answer
                .as_deref()
                .map_or("no answer text".to_owned(), |a| format!(
                    "answer {}",
                    quote(a, 60)
                ))
        )),
        _ => None,
    }
}
