//! Where the turn stands: the verdict drawn from the final state.

use std::collections::BTreeMap;

use ov_engine::projector::{MessageStatus, State};
use ov_engine::turn::{DedupKey, Role};
use ov_engine::turnbook::Consent;

use super::{turn_keys, Step, Verdict};
use crate::render::time;

#[expect(clippy::too_many_arguments)]
// NOTE: the facts the walk gathered are passed one by one, as `sentence` takes them.
pub(super) fn verdict(
    state: &State,
    turn_id: &str,
    committed_by: Option<u64>,
    commit_trace: Option<&str>,
    unreachable_since: Option<u64>,
    steps: &[Step],
    compacted: bool,
    delivered_at: Option<u64>,
) -> Verdict {
    let keys = turn_keys(state, turn_id);
    let v = |kind, on_server, text: String| Verdict {
        kind,
        on_server,
        text,
    };
    if keys.is_empty() && !super::let_go(state, turn_id) {
        if state.forgotten_at_ms.is_some() {
            return v(
                "forgotten",
                false,
                "not sent: the user forgot this session (ovhook forget)".into(),
            );
        }
        match state.consent_of(turn_id) {
            Some(Consent::NoHook) => {
                return v(
                    "no-hook",
                    false,
                    "not sent: no hook of ours saw this turn (ovhook was disabled, uninstalled or \
                     not installed when it was made)"
                        .into(),
                )
            }
            Some(Consent::Refused(reason)) => {
                return v(
                    "refused",
                    false,
                    format!("not sent: capture refused for this turn ({reason})"),
                )
            }
            Some(Consent::Given) | None => {}
        }
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
    let acked_at = recs
        .iter()
        .filter_map(|(_, r)| r.acked_at_ms)
        .chain(delivered_at)
        .max();
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
        let acked = [Role::User, Role::Assistant]
            .into_iter()
            .filter(|r| state.is_delivered(&DedupKey::for_turn(turn_id, *r)))
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
    let acked = match acked_at {
        Some(at) => time(at),
        None if super::let_go(state, turn_id) => {
            "an earlier time: its record was let go, only its identity is kept".into()
        }
        None => "-".into(),
    };
    let commit = match committed_by {
        Some(c) => match commit_trace {
            Some(t) => format!("committed by commit {c}, server trace id {t}"),
            None => format!("committed by commit {c}"),
        },
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
