//! `ovreplay sessions [--state-dir DIR] [--json]`: one row per session journal under the state
//! root, most recent activity first.

use std::io::Write;

use ov_engine::projector::MessageStatus;
use serde::Serialize;

use crate::cli::SessionsArgs;
use crate::journal_arg::state_root;
use crate::render;

/// One session's row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Session id (from the journal, else the directory name).
    pub session_id: String,
    /// The journal directory.
    pub journal: String,
    /// Time of the last event (UTC ISO), if any.
    pub last_activity: Option<String>,
    /// Same, in ms.
    pub last_activity_ms: u64,
    /// Turns seen by hooks or the rollout.
    pub turns: usize,
    /// Messages acknowledged.
    pub acked: usize,
    /// Messages planned, not acknowledged, no send outstanding.
    pub pending: usize,
    /// Messages refused for good.
    pub set_aside: usize,
    /// Sends with no outcome.
    pub in_doubt: usize,
    /// Turns with UserPromptSubmit but no Stop.
    pub hooks_missing: usize,
    /// Turns with a Stop of which nothing was captured (transcript unreadable or missing them).
    pub uncaptured: usize,
    /// Turns never sent for want of consent: no hook of ours saw them, a hook refused them
    /// (paused, capture off), or the user forgot them (`ovreplay why` says which).
    pub withheld: usize,
    /// Damaged ranges in the journal (read around; what they held may be missing).
    pub damaged: usize,
    /// What the privacy rule removed where text entered, per kind (never the text).
    pub redacted: std::collections::BTreeMap<String, u32>,
    /// The last problem recorded, or why the journal could not be read.
    pub last_problem: Option<String>,
}

/// Runs `ovreplay sessions`.
pub fn run(args: &SessionsArgs) -> anyhow::Result<()> {
    let root = state_root(args.state_dir.as_deref());
    let dirs: Vec<_> = ov_engine::store::session_dirs(&root)
        .into_iter()
        .filter(|d| ov_journal::is_journal(d))
        .collect();
    let bar = render::progress_bar();
    if let Some(bar) = &bar {
        bar.set_length(dirs.len() as u64);
    }
    let mut rows: Vec<Row> = dirs
        .iter()
        .map(|d| {
            let r = row(d);
            if let Some(bar) = &bar {
                bar.inc(1);
            }
            r
        })
        .collect();
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    rows.sort_by(|a, b| {
        b.last_activity_ms
            .cmp(&a.last_activity_ms)
            .then_with(|| a.session_id.cmp(&b.session_id))
    });
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &rows)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", table(&rows))?;
    }
    out.flush()?;
    Ok(())
}

fn row(dir: &std::path::Path) -> Row {
    let name = dir
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut row = Row {
        session_id: name,
        journal: dir.display().to_string(),
        last_activity: None,
        last_activity_ms: 0,
        turns: 0,
        acked: 0,
        pending: 0,
        set_aside: 0,
        in_doubt: 0,
        hooks_missing: 0,
        uncaptured: 0,
        withheld: 0,
        damaged: 0,
        redacted: std::collections::BTreeMap::new(),
        last_problem: None,
    };
    let reader = match crate::view::open_reader(dir) {
        Ok(r) => r,
        Err(e) => {
            row.last_problem = Some(format!("unreadable: {e:#}"));
            return row;
        }
    };
    let folded = ov_engine::store::fold_reader(&reader);
    let damage = reader.damage();
    row.damaged = damage.len();
    let s = &folded.state;
    if let Some(id) = &s.session_id {
        row.session_id.clone_from(id);
    }
    if s.events > 0 {
        row.last_activity = Some(render::time(s.last_at_ms));
        row.last_activity_ms = s.last_at_ms;
    }
    row.turns = s.turns.len();
    let count =
        |f: fn(&MessageStatus) -> bool| s.messages.values().filter(|r| f(&r.status)).count();
    row.acked = usize::try_from(s.acked_count()).unwrap_or(usize::MAX);
    row.pending = count(|st| matches!(st, MessageStatus::Pending));
    row.set_aside = count(|st| matches!(st, MessageStatus::SetAside { .. }));
    row.in_doubt = s.in_doubt().len();
    row.hooks_missing = s.turns_missing_stop().len();
    row.uncaptured = s.turns_uncaptured().len();
    row.redacted.clone_from(&s.redactions.0);
    row.withheld = s.turns_withheld().len();
    row.last_problem = match (folded.skipped.last(), damage.last()) {
        (Some(s), _) => Some(format!(
            "undecodable record at {}: {}",
            s.position, s.reason
        )),
        (None, Some(d)) => Some(format!("damaged at {}: {}", d.position(), d.kind)),
        (None, None) => s.problems.last().cloned(),
    };
    row
}

/// The human table.
pub fn table(rows: &[Row]) -> String {
    let mut o = format!(
        "{:<44} {:<24} {:>5} {:>5} {:>7} {:>5} {:>8} {:>7} {:>10} {:>8} {:>7} {:>8}  last problem\n",
        "session",
        "last activity",
        "turns",
        "acked",
        "pending",
        "aside",
        "in doubt",
        "no stop",
        "uncaptured",
        "withheld",
        "damaged",
        "redacted"
    );
    for r in rows {
        o += &format!(
            "{:<44} {:<24} {:>5} {:>5} {:>7} {:>5} {:>8} {:>7} {:>10} {:>8} {:>7} {:>8}  {}\n",
            r.session_id,
            r.last_activity.as_deref().unwrap_or("-"),
            r.turns,
            r.acked,
            r.pending,
            r.set_aside,
            r.in_doubt,
            r.hooks_missing,
            r.uncaptured,
            r.withheld,
            r.damaged,
            r.redacted.values().map(|n| u64::from(*n)).sum::<u64>(),
            r.last_problem.as_deref().unwrap_or("-")
        );
    }
    o += &format!("{} session(s)\n", rows.len());
    o
}
