//! A frame of a journal as `dump` and `follow` show it: one line, or one JSON object.

use ov_engine::event::Envelope;
use ov_journal::Position;

use super::event::summary;
use super::time;
use crate::view::{Entry, EntryContent};

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
