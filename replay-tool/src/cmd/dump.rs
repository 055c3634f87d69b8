//! `ovreplay dump JOURNAL [--kind K] [--turn T] [--json]`: every frame of a journal, decoded,
//! one per line: position, time, pid, kind, summary. Undecodable records are shown with the
//! reason; a snapshot frame is shown as such.

use std::collections::BTreeSet;
use std::io::Write;

use ov_engine::event::Event;
use ov_engine::turn::DedupKey;

use crate::cli::DumpArgs;
use crate::journal_arg::resolve_journal;
use crate::render;
use crate::view::{self, Entry, EntryContent};

/// Runs `ovreplay dump`.
pub fn run(args: &DumpArgs) -> anyhow::Result<()> {
    let dir = resolve_journal(&args.journal, args.state_dir.as_deref())?;
    let known: BTreeSet<&str> = KINDS.iter().copied().collect();
    for k in &args.kind {
        if !known.contains(k.as_str()) {
            return Err(crate::exit::usage(format!(
                "unknown event kind '{k}' (one of: {})",
                KINDS.join(", ")
            )));
        }
    }
    let bar = render::progress_bar();
    let view = view::read_journal_with(&dir, &mut |done, total| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    })?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let mut filter = Filter::new(&args.kind, args.turn.as_deref());
    let mut out = std::io::stdout().lock();
    for e in &view.entries {
        if !filter.keep(e) {
            continue;
        }
        if args.json {
            serde_json::to_writer(&mut out, &render::entry_json(e, None))?;
            writeln!(out)?;
        } else {
            writeln!(out, "{}", render::entry_line(e))?;
        }
    }
    for d in &view.damage {
        let pos = d.position();
        if args.json {
            let v = serde_json::json!({"position": pos.to_string(), "kind": "damaged", "len": d.len, "error": d.kind.to_string()});
            serde_json::to_writer(&mut out, &v)?;
            writeln!(out)?;
        } else {
            writeln!(out, "{pos:<10} DAMAGED: {d}")?;
        }
    }
    if let Some((pos, why)) = &view.read_error {
        if args.json {
            let v = serde_json::json!({"position": pos.to_string(), "kind": "read-error", "error": why});
            serde_json::to_writer(&mut out, &v)?;
            writeln!(out)?;
        } else {
            writeln!(out, "{pos:<10} READ STOPPED: {why}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Every `Event::kind_name`, plus the frame kinds `snapshot` and `undecodable`.
pub const KINDS: &[&str] = &[
    "hook",
    "worker-started",
    "open-turns-closed",
    "rollout-read",
    "rollout-missing",
    "planned",
    "send-started",
    "send-acked",
    "send-failed",
    "reconciled",
    "commit-started",
    "commit-acked",
    "commit-failed",
    "commit-reconciled",
    "recall",
    "profile",
    "server-unreachable",
    "server-reachable",
    "problem",
    "snapshot",
    "undecodable",
];

/// The `--kind` / `--turn` filter. A turn matches the events `Event::turn_ids` names, plus the
/// sends carrying the turn's keys and their outcomes and reconciliations (tracked as it goes).
pub struct Filter<'a> {
    kinds: &'a [String],
    turn: Option<&'a str>,
    keys: BTreeSet<DedupKey>,
    sends: BTreeSet<u64>,
}

impl<'a> Filter<'a> {
    /// A filter; empty `kinds` = every kind.
    pub fn new(kinds: &'a [String], turn: Option<&'a str>) -> Filter<'a> {
        Filter {
            kinds,
            turn,
            keys: BTreeSet::new(),
            sends: BTreeSet::new(),
        }
    }

    /// Whether `e` is shown; call for every frame in order.
    pub fn keep(&mut self, e: &Entry) -> bool {
        let kind = match &e.content {
            EntryContent::Event(env) => env.event.kind_name(),
            EntryContent::Snapshot(_) => "snapshot",
            EntryContent::Undecodable { .. } => "undecodable",
        };
        let turn_ok = match (self.turn, &e.content) {
            (None, _) => true,
            (Some(t), EntryContent::Event(env)) => self.about_turn(t, &env.event),
            (Some(_), EntryContent::Undecodable { .. }) => true,
            (Some(_), EntryContent::Snapshot(_)) => false,
        };
        turn_ok && (self.kinds.is_empty() || self.kinds.iter().any(|k| k == kind))
    }

    fn about_turn(&mut self, turn: &str, event: &Event) -> bool {
        match event {
            Event::MessagesPlanned { messages } => {
                for m in messages
                    .iter()
                    .filter(|m| m.turn_id.as_deref() == Some(turn))
                {
                    self.keys.insert(m.key.clone());
                }
            }
            Event::SendStarted { send_id, keys, .. } => {
                if keys.iter().any(|k| self.keys.contains(k)) {
                    self.sends.insert(*send_id);
                    return true;
                }
                return false;
            }
            Event::SendAcked { send_id } | Event::SendFailed { send_id, .. } => {
                return self.sends.contains(send_id)
            }
            Event::Reconciled {
                send_ids,
                present,
                absent,
            } => {
                return send_ids.iter().any(|s| self.sends.contains(s))
                    || present.iter().chain(absent).any(|k| self.keys.contains(k))
            }
            _ => {}
        }
        event.turn_ids().contains(&turn)
    }
}
