//! One-line summaries of events: what `dump` prints after the event's kind.

use std::fmt::Write as _;

use ov_engine::event::{Event, HookKind, HookReceived};

use super::{duration, keys, opt, quote};

/// A hook: its kind, turn (else trace), and the payload fields it carries.
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
        Event::TranscriptNamed { path } => format!("path={path}"),
        Event::ToolCalls {
            turn_id,
            origin,
            calls,
        } => format!(
            "turn={turn_id} from {origin}: {}",
            calls
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Event::SubagentTurn {
            turn_id,
            agent,
            prompt,
            answer,
        } => format!(
            "turn={turn_id} agent={agent}{}{}",
            prompt
                .as_deref()
                .map_or(String::new(), |p| format!(" prompt={}", quote(p, 40))),
            answer
                .as_deref()
                .map_or(String::new(), |a| format!(" answer={}", quote(a, 40)))
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ov_engine::turn::DedupKey;

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
}
