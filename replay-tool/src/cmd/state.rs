//! `ovreplay state JOURNAL [--json]`: the folded state of a journal, as a human summary or the
//! whole `State` as JSON.

use std::io::Write;

use crate::cli::JournalArgs;
use crate::engine_api;
use crate::render;

/// Runs `ovreplay state`.
pub fn run(args: &JournalArgs) -> anyhow::Result<()> {
    let dir = engine_api::resolve_journal(&args.journal, args.state_dir.as_deref())?;
    let view = engine_api::read_journal(&dir)?;
    let folded = view.fold();
    let mut out = std::io::stdout().lock();
    if args.json {
        let skipped: Vec<serde_json::Value> = folded
            .skipped
            .iter()
            .map(|(p, why)| serde_json::json!({"position": p.to_string(), "reason": why}))
            .collect();
        let v = serde_json::json!({
            "journal": dir.display().to_string(),
            "cursor": folded.state.cursor(),
            "from_snapshot": folded.from_snapshot.map(|p| p.to_string()),
            "skipped": skipped,
            "state": folded.state,
        });
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        write!(
            out,
            "{}",
            render::state_summary(&folded.state, &folded.skipped)
        )?;
        if let Some(p) = folded.from_snapshot {
            writeln!(out, "snapshot     folded from the snapshot at {p}")?;
        }
        if !folded.state.messages.is_empty() {
            writeln!(out, "messages, in plan order:")?;
            write!(out, "{}", render::message_lines(&folded.state))?;
        }
    }
    out.flush()?;
    Ok(())
}
