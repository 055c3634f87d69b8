//! `ovreplay compact JOURNAL`: roll the journal to a new segment that starts with a snapshot of
//! the folded state, remove the segments before it, and check the fold did not change.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use ov_engine::projector::State;
use ov_journal::Position;

use crate::cli::JournalArgs;
use crate::journal_arg::resolve_journal;
use crate::render;

/// What `compact` did.
#[derive(Debug, Clone)]
pub(crate) struct Compacted {
    /// The fold before.
    before: State,
    /// The fold after (from the new snapshot).
    after: State,
    /// Where the snapshot frame is.
    snapshot: Position,
    /// Segments removed (all before the snapshot's).
    removed_segments: usize,
}

/// `SessionStore::compact()` on the journal at `dir`, then the segments before the snapshot's
/// are removed. The caller has checked that `dir` is a journal (open would create one).
pub(crate) fn compact(dir: &Path) -> anyhow::Result<Compacted> {
    let store = ov_engine::store::SessionStore::open_with(dir, crate::view::LOCK_WAIT)
        .with_context(|| format!("could not open {}", dir.display()))?;
    let before = store
        .fold()
        .with_context(|| format!("could not fold {}", dir.display()))?
        .state;
    let snapshot = store
        .compact()
        .with_context(|| format!("could not compact {}", dir.display()))?;
    let removed_segments = store
        .journal()
        .remove_segments_before(snapshot.segment)
        .with_context(|| format!("could not remove old segments of {}", dir.display()))?;
    drop(store);
    let after = crate::view::fold(dir)?.state;
    Ok(Compacted {
        before,
        after,
        snapshot,
        removed_segments,
    })
}

/// Runs `ovreplay compact`.
pub fn run(args: &JournalArgs) -> anyhow::Result<()> {
    let dir = resolve_journal(&args.journal, args.state_dir.as_deref())?;
    let c = compact(&dir)?;
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
