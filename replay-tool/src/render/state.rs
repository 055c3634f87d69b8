//! A folded state as `state` and `compact` show it: the summary, and one line per message.

use std::fmt::Write as _;

use ov_engine::projector::{MessageStatus, State};
use ov_engine::store::SkippedRecord;

use super::{keys, time};

fn status_word(s: &MessageStatus) -> String {
    match s {
        MessageStatus::Pending => "pending".into(),
        MessageStatus::InFlight { send_id } => format!("in flight (send {send_id})"),
        MessageStatus::Acked => "acknowledged".into(),
        MessageStatus::SetAside { status, .. } => format!("set aside ({status})"),
    }
}

/// The human summary of a folded state (`state`, `compact`).
pub fn state_summary(state: &State, skipped: &[SkippedRecord]) -> String {
    let mut o = String::new();
    let na = "-";
    let _ = writeln!(
        o,
        "session      {}",
        state.session_id.as_deref().unwrap_or(na)
    );
    let _ = writeln!(o, "harness      {}", state.harness.as_deref().unwrap_or(na));
    let _ = writeln!(o, "cwd          {}", state.cwd.as_deref().unwrap_or(na));
    let span = if state.events == 0 {
        na.to_string()
    } else {
        format!("{} .. {}", time(state.first_at_ms), time(state.last_at_ms))
    };
    let _ = writeln!(o, "events       {} ({span})", state.events);
    let hooks: Vec<String> = state
        .hook_counts
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(
        o,
        "hooks        {}{}",
        if hooks.is_empty() {
            na.to_string()
        } else {
            hooks.join(", ")
        },
        if state.malformed_hooks > 0 {
            format!(" ({} malformed)", state.malformed_hooks)
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        o,
        "cursor       lastTurnId = {}",
        state.cursor().unwrap_or(na)
    );
    let count =
        |f: fn(&MessageStatus) -> bool| state.messages.values().filter(|r| f(&r.status)).count();
    let _ = writeln!(
        o,
        "messages     {} planned: {} acknowledged, {} pending, {} in flight, {} set aside",
        state.planned_count(),
        state.acked_count(),
        count(|s| matches!(s, MessageStatus::Pending)),
        count(|s| matches!(s, MessageStatus::InFlight { .. })),
        count(|s| matches!(s, MessageStatus::SetAside { .. })),
    );
    let outbox = state.outbox();
    let _ = writeln!(o, "outbox       {}", outbox.len());
    for (k, r) in outbox {
        let _ = writeln!(
            o,
            "  {k} ({} B, {} failed send(s){})",
            r.content_len,
            r.failures,
            r.last_error
                .as_deref()
                .map(|e| format!(", last: {e}"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(o, "in doubt     {}", state.in_doubt().len());
    for (id, send) in state.in_doubt() {
        let _ = writeln!(
            o,
            "  send {id} started {} by pid {}: {}",
            time(send.started_at_ms),
            send.pid,
            keys(&send.keys)
        );
    }
    let aside = state.set_aside();
    let _ = writeln!(o, "set aside    {}", aside.len());
    for (k, r) in aside {
        if let MessageStatus::SetAside { status, error } = &r.status {
            let _ = writeln!(o, "  {k}: {status}: {error}");
        }
    }
    let c = &state.commit;
    let _ = writeln!(
        o,
        "commit       {} commit(s) ok, {} acknowledged, {} uncommitted (~{} tokens){}{}",
        c.commits_ok,
        c.acked_total,
        c.uncommitted(),
        c.uncommitted_tokens(),
        c.in_flight
            .as_ref()
            .map(|f| format!(
                ", commit {} in flight since {}",
                f.commit_id,
                time(f.started_at_ms)
            ))
            .unwrap_or_default(),
        c.last_error
            .as_deref()
            .map(|e| format!(", last error: {e}"))
            .unwrap_or_default()
    );
    match &state.rollout {
        Some(r) => {
            let _ = writeln!(
                o,
                "rollout      {} at {} of {} (dev {} ino {}), {} read(s), {} bad line(s)",
                r.path,
                r.offset,
                r.file_len,
                r.identity.dev,
                r.identity.ino,
                state.rollout_reads,
                state.rollout_bad_lines
            );
        }
        None => {
            let _ = writeln!(o, "rollout      not read");
        }
    }
    let open: Vec<String> = state
        .book
        .turns()
        .iter()
        .map(|t| t.turn_id.clone().unwrap_or_else(|| "(no id)".into()))
        .collect();
    let _ = writeln!(
        o,
        "turn book    {}",
        if open.is_empty() {
            "empty".to_string()
        } else {
            open.join(", ")
        }
    );
    match (state.backoff_until_ms, &state.backoff_reason) {
        (Some(until), why) => {
            let _ = writeln!(
                o,
                "back-off     until {} ({})",
                time(until),
                why.as_deref().unwrap_or(na)
            );
        }
        _ => {
            let _ = writeln!(o, "back-off     none");
        }
    }
    let missing = state.turns_missing_stop();
    let _ = writeln!(
        o,
        "liveness     {} turn(s) seen, {} without Stop{}",
        state.turns.len(),
        missing.len(),
        if missing.is_empty() {
            String::new()
        } else {
            format!(": {}", missing.join(", "))
        }
    );
    let _ = writeln!(
        o,
        "workers      {} started ({} drain(s))",
        state.workers_started, state.drains
    );
    if let Some(p) = state.problems.last() {
        let _ = writeln!(o, "problems     {} (last: {p})", state.problems.len());
    }
    for s in skipped {
        let _ = writeln!(o, "skipped      {}: {}", s.position, s.reason);
    }
    o
}

/// One line per message of the state: key, status (for `state` after the summary).
pub fn message_lines(state: &State) -> String {
    let mut o = String::new();
    if state.records_let_go > 0 {
        let _ = writeln!(
            o,
            "  {} acknowledged earlier: records let go, identities kept",
            state.records_let_go
        );
    }
    let mut kept: Vec<_> = state.messages.iter().collect();
    kept.sort_by_key(|(_, r)| r.order);
    for (key, r) in kept {
        {
            let _ = writeln!(
                o,
                "  {:<4} {:<44} {}",
                r.order,
                key.as_str(),
                status_word(&r.status)
            );
        }
    }
    o
}
