//! Human rendering shared by the inspection commands: times, one-line event summaries, the
//! state summary, and the stderr progress bar.

use std::fmt::Write as _;
use std::io::IsTerminal;

use ov_engine::event::{Envelope, Event, HookKind, HookReceived};
use ov_engine::projector::{MessageStatus, State};
use ov_engine::store::SkippedRecord;
use ov_engine::turn::DedupKey;
use ov_journal::Position;

use crate::view::{Entry, EntryContent};

/// `ms` since the Unix epoch as UTC ISO 8601 with milliseconds (`2026-01-02T03:04:05.678Z`).
pub fn time(ms: u64) -> String {
    ov_engine::time::format_ms(ms)
}

/// A duration in ms as `850ms`, `30s`, `5m`, `2h5m`.
pub fn duration(ms: u64) -> String {
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 if s.is_multiple_of(60) => format!("{}m", s / 60),
        60..=3599 => format!("{}m{}s", s / 60, s % 60),
        _ if (s % 3600) / 60 == 0 => format!("{}h", s / 3600),
        _ => format!("{}h{}m", s / 3600, (s % 3600) / 60),
    }
}

/// Text on one line (newlines shown as `⏎`), cut at `max` chars with `…`, quoted.
pub fn quote(text: &str, max: usize) -> String {
    let one: String = text.replace('\n', "⏎");
    if one.chars().count() > max {
        let cut: String = one.chars().take(max).collect();
        format!("\"{cut}…\"")
    } else {
        format!("\"{one}\"")
    }
}

fn keys(keys: &[DedupKey]) -> String {
    let v: Vec<&str> = keys.iter().map(DedupKey::as_str).collect();
    format!("[{}]", v.join(", "))
}

fn opt(label: &str, v: Option<&str>) -> String {
    v.map(|v| format!(" {label}={v}")).unwrap_or_default()
}

fn hook(h: &HookReceived) -> String {
    let mut s = h.kind.map_or("unknown", HookKind::as_str).to_string();
    s += &opt("turn", h.turn_id.as_deref());
    if h.turn_id.is_none() {
        s += &opt("trace", h.trace_id.as_deref());
    }
    if h.kind == Some(HookKind::SessionStart) {
        s += &opt("session", h.session_id.as_deref());
        s += &opt("source", h.source.as_deref());
    }
    if let Some(p) = &h.prompt {
        let _ = write!(s, " prompt={}", quote(p, 40));
    }
    if let Some(r) = &h.response_text {
        let _ = write!(s, " response={}", quote(r, 40));
    }
    if let Some(n) = h.tool_call_count {
        let _ = write!(s, " tools={n}");
    }
    s += &opt("tool", h.tool_name.as_deref());
    s += &opt("denied", h.denied_uri.as_deref());
    if let Some(m) = &h.malformed {
        let _ = write!(s, " MALFORMED({m})");
    }
    s
}

/// A compact one-line summary of an event (what `dump` prints after the kind).
pub fn summary(event: &Event) -> String {
    match event {
        Event::HookReceived(h) => hook(h),
        Event::WorkerStarted { reason } => {
            format!("reason={}", format!("{reason:?}").to_lowercase())
        }
        Event::OpenTurnsClosed | Event::ServerReachable => String::new(),
        Event::RolloutRead { path, chunk } => {
            let turns: Vec<&str> = chunk.fragments.iter().map(|f| f.turn_id.as_str()).collect();
            let mut s = format!(
                "{path} bytes {}..{} of {}, turns [{}]",
                chunk.start,
                chunk.end,
                chunk.file_len,
                turns.join(", ")
            );
            if chunk.rescanned {
                s += ", rescanned";
            }
            if chunk.bad_lines > 0 {
                let _ = write!(s, ", {} bad line(s)", chunk.bad_lines);
            }
            s
        }
        Event::RolloutMissing { path } => path.clone(),
        Event::MessagesPlanned { messages } => {
            let v: Vec<String> = messages
                .iter()
                .map(|m| {
                    let int = if m.interrupted { ", interrupted" } else { "" };
                    if let Some(len) = ov_engine::text::oversized::stand_in_len(&m.content) {
                        return format!(
                            "{} ({len} B, over the message limit: set aside{int})",
                            m.key
                        );
                    }
                    let cut = if (m.content.len() as u64) < m.raw_len {
                        ", truncated"
                    } else {
                        ""
                    };
                    format!("{} ({} B{cut}{int})", m.key, m.content.len())
                })
                .collect();
            v.join(", ")
        }
        Event::SendStarted {
            send_id,
            keys: k,
            single,
        } => format!(
            "send {send_id} {} {}",
            if *single { "single" } else { "batch" },
            keys(k)
        ),
        Event::SendAcked { send_id } => format!("send {send_id}"),
        Event::SendFailed {
            send_id,
            status,
            retryable,
            error,
            request_sent,
        } => format!(
            "send {send_id} status {status}{}{}: {}",
            if *retryable {
                " retryable"
            } else {
                " permanent"
            },
            if *request_sent { " request-sent" } else { "" },
            quote(error, 60)
        ),
        Event::Reconciled {
            send_ids,
            present,
            absent,
        } => format!(
            "sends {send_ids:?} present {} absent {}",
            keys(present),
            keys(absent)
        ),
        Event::CommitStarted {
            commit_id,
            commit_count_before,
        } => match commit_count_before {
            Some(c) => format!("commit {commit_id} (server count before {c})"),
            None => format!("commit {commit_id}"),
        },
        Event::CommitAcked {
            commit_id,
            task_id,
            archive_uri,
        } => format!(
            "commit {commit_id}{}{}",
            opt("task", task_id.as_deref()),
            opt("archive", archive_uri.as_deref())
        ),
        Event::CommitFailed {
            commit_id,
            status,
            retryable,
            error,
            request_sent,
        } => format!(
            "commit {commit_id} status {status}{}{}: {}",
            if *retryable {
                " retryable"
            } else {
                " permanent"
            },
            if *request_sent { " request-sent" } else { "" },
            quote(error, 60)
        ),
        Event::CommitReconciled { commit_id, applied } => format!(
            "commit {commit_id} {}",
            if *applied { "applied" } else { "not applied" }
        ),
        Event::RecallServed {
            turn_id,
            tier,
            block,
            context_face_unsupported,
            cached,
            ..
        } => {
            let mut s = format!(
                "tier {tier} {}",
                block
                    .as_ref()
                    .map_or("nothing injected".to_string(), |b| format!("{} B", b.len()))
            );
            s += &opt("turn", turn_id.as_deref());
            if *cached {
                s += " cached";
            }
            if *context_face_unsupported {
                s += " context-face-unsupported";
            }
            s
        }
        Event::ProfileServed { bytes } => format!("{bytes} B"),
        Event::CommitTraced {
            commit_id,
            trace_id,
        } => format!("commit {commit_id} trace {trace_id}"),
        Event::ServerUnreachable {
            error,
            retry_after_ms,
        } => format!(
            "retry after {}: {}",
            duration(*retry_after_ms),
            quote(error, 60)
        ),
        Event::Problem { context, message } => format!("{context}: {}", quote(message, 80)),
        Event::JournalDamaged {
            segment,
            offset,
            len,
            reason,
        } => format!("{len} bytes at {segment}:{offset}: {}", quote(reason, 80)),
        Event::AllReconciled { present } => format!("present={}", present.len()),
        Event::SpillIngested { name, events } => format!("{name} events={events}"),
        Event::CaptureRefused { turn_id, reason } => {
            format!(
                "turn={} reason={reason:?}",
                turn_id.as_deref().unwrap_or("-")
            )
        }
        Event::Forgotten { turn_id, note } => {
            format!(
                "{} note={note:?}",
                turn_id
                    .as_deref()
                    .map_or("session".to_owned(), |t| format!("turn={t}"))
            )
        }
        Event::Redacted {
            turn_id,
            origin,
            counts,
        } => format!(
            "turn={} from {origin}: {}",
            turn_id.as_deref().unwrap_or("-"),
            counts.summary()
        ),
        Event::ServerHolds { identities } => format!("held={}", identities.len()),
        Event::Pruned {
            segments,
            bytes,
            newest_ms,
            retention_days,
        } => format!(
            "segments={} bytes={bytes} newest_at={newest_ms} retention_days={retention_days}",
            segments.len()
        ),
    }
}

/// The `dump` line of one event.
pub fn event_line(pos: Position, env: &Envelope) -> String {
    let s = summary(&env.event);
    let line = format!(
        "{:<10} {} {:>7} {:<18} {s}",
        pos.to_string(),
        time(env.at_ms),
        env.pid,
        env.event.kind_name()
    );
    line.trim_end().to_string()
}

/// The `dump` line of any frame (events, snapshots, undecodable records).
pub fn entry_line(e: &Entry) -> String {
    match &e.content {
        EntryContent::Event(env) => event_line(e.position, env),
        EntryContent::Snapshot(s) => format!(
            "{:<10} {:<24} {:>7} {:<18} state of {} event(s), {} message(s), cursor {}",
            e.position.to_string(),
            "-",
            "-",
            "snapshot",
            s.events,
            s.planned_count(),
            s.cursor().unwrap_or("-")
        ),
        EntryContent::Undecodable { snapshot, reason } => format!(
            "{:<10} {:<24} {:>7} {:<18} {}: {reason}",
            e.position.to_string(),
            "-",
            "-",
            "UNDECODABLE",
            if *snapshot { "snapshot" } else { "record" }
        ),
    }
}

/// The JSON object of one frame (one `dump --json` / `follow --json` line).
pub fn entry_json(e: &Entry, journal: Option<&str>) -> serde_json::Value {
    let mut v = serde_json::json!({
        "position": e.position.to_string(),
        "segment": e.position.segment,
        "offset": e.position.offset,
    });
    let extra = match &e.content {
        EntryContent::Event(env) => serde_json::json!({
            "at": time(env.at_ms),
            "at_ms": env.at_ms,
            "pid": env.pid,
            "kind": env.event.kind_name(),
            "event": env.event,
        }),
        EntryContent::Snapshot(s) => serde_json::json!({
            "kind": "snapshot",
            "state": s,
        }),
        EntryContent::Undecodable { snapshot, reason } => serde_json::json!({
            "kind": "undecodable",
            "snapshot": snapshot,
            "error": reason,
        }),
    };
    if let (Some(obj), serde_json::Value::Object(more)) = (v.as_object_mut(), extra) {
        if let Some(j) = journal {
            obj.insert("journal".into(), j.into());
        }
        obj.extend(more);
    }
    v
}

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

/// A progress bar on stderr, only when stderr is a terminal.
pub fn progress_bar() -> Option<indicatif::ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc_iso() {
        assert_eq!(time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(time(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(time(1_796_212_624_251), "2026-12-02T11:57:04.251Z");
    }

    #[test]
    fn a_planned_stand_in_reads_as_set_aside() {
        use ov_engine::event::PlannedMessage;
        use ov_engine::turn::Role;
        let m = PlannedMessage {
            key: DedupKey::for_turn("t", Role::Assistant),
            turn_id: Some("t".into()),
            role: Role::Assistant,
            content: ov_engine::text::oversized::stand_in(40 << 20),
            raw_len: 40 << 20,
            interrupted: false,
            created_at_ms: None,
        };
        assert_eq!(
            summary(&Event::MessagesPlanned { messages: vec![m] }),
            "turn:t:assistant (41943040 B, over the message limit: set aside)"
        );
    }

    #[test]
    fn durations() {
        assert_eq!(duration(850), "850ms");
        assert_eq!(duration(30_000), "30s");
        assert_eq!(duration(300_000), "5m");
        assert_eq!(duration(7_500_000), "2h5m");
    }
}
