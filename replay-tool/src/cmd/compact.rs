//! `ovreplay compact JOURNAL`: roll the journal to a new segment that starts with a snapshot of
//! the folded state, remove the segments before it, and check the fold did not change.

use std::io::Write;

use crate::cli::JournalArgs;
use crate::engine_api;
use crate::render;

/// Runs `ovreplay compact`.
pub fn run(args: &JournalArgs) -> anyhow::Result<()> {
    let dir = engine_api::resolve_journal(&args.journal, args.state_dir.as_deref())?;
    let c = engine_api::compact(&dir)?;
    let same = c.before == c.after;
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = serde_json::json!({
            "journal": dir.display().to_string(),
            "snapshot": c.snapshot.to_string(),
            "removed_segments": c.removed_segments,
            "same_state": same,
            "before": c.before,
            "after": c.after,
        });
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "compacted {}: snapshot at {}, {} old segment(s) removed",
            dir.display(),
            c.snapshot,
            c.removed_segments
        )?;
        writeln!(out, "-- before")?;
        write!(out, "{}", render::state_summary(&c.before, &[]))?;
        writeln!(out, "-- after")?;
        write!(out, "{}", render::state_summary(&c.after, &[]))?;
        writeln!(
            out,
            "{}",
            if same {
                "same state before and after"
            } else {
                "STATE CHANGED"
            }
        )?;
    }
    out.flush()?;
    if same {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "the folded state of {} changed when compacting (a projector or codec bug)",
            dir.display()
        ))
    }
}
