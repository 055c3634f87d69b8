//! `ovreplay state JOURNAL [--json]`: the folded state of a journal, as a human summary or the
//! whole `State` as JSON.

use std::io::Write;

use ov_journal::Position;

use crate::cli::JournalArgs;
use crate::journal_arg::resolve_journal;
use crate::render;

/// Runs `ovreplay state`: the fold is the engine's (`ov_engine::store::fold_reader`).
pub fn run(args: &JournalArgs) -> anyhow::Result<()> {
    let dir = resolve_journal(&args.journal, args.state_dir.as_deref())?;
    let folded = crate::view::fold(&dir)?;
    // A snapshot is the first frame of its segment.
    let from_snapshot = folded.snapshot_segment.map(|segment| Position {
        segment,
        offset: ov_journal::SEGMENT_HEADER_LEN,
    });
    let mut out = std::io::stdout().lock();
    if args.json {
        let skipped: Vec<serde_json::Value> = folded
            .skipped
            .iter()
            .map(|s| serde_json::json!({"position": s.position.to_string(), "reason": s.reason}))
            .collect();
        let v = serde_json::json!({
            "journal": dir.display().to_string(),
            "cursor": folded.state.cursor(),
            "from_snapshot": from_snapshot.map(|p| p.to_string()),
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
        if let Some(p) = from_snapshot {
            writeln!(out, "snapshot     folded from the snapshot at {p}")?;
        }
        if folded.state.planned_count() > 0 {
            writeln!(out, "messages, in plan order:")?;
            write!(out, "{}", render::message_lines(&folded.state))?;
        }
    }
    out.flush()?;
    Ok(())
}
