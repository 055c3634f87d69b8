//! `ovreplay plan ROLLOUT.jsonl [--json]`: what a first capture of a rollout file sends.
//! Pure: no network, no state.

use std::io::Write;

use anyhow::Context;

use crate::cli::PlanArgs;

/// Runs `ovreplay plan`.
pub fn run(args: &PlanArgs) -> anyhow::Result<()> {
    if !args.rollout.is_file() {
        return Err(crate::exit::user(format!(
            "could not read {}: no such file",
            args.rollout.display()
        )));
    }
    let planned = ov_engine::plan::first_capture(&args.rollout)
        .with_context(|| format!("could not plan {}", args.rollout.display()))?;
    // The planner's own JSON, printed verbatim so that key order is the planner's.
    let plan = ov_engine::plan::to_json(&planned);
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{plan}")?;
    } else {
        let rows: serde_json::Value =
            serde_json::from_str(&plan).context("the planner printed bad JSON")?;
        write_table(&mut out, &rows)?;
    }
    out.flush()?;
    Ok(())
}

/// A human table: one row per planned message, content on one line, cut at 60 chars.
fn write_table(out: &mut impl Write, plan: &serde_json::Value) -> std::io::Result<()> {
    let rows = plan.as_array().map(Vec::as_slice).unwrap_or_default();
    writeln!(out, "{:>4}  {:<42} {:<9} content", "#", "turn_id", "role")?;
    for (i, row) in rows.iter().enumerate() {
        let field = |k: &str| row.get(k).and_then(|v| v.as_str()).unwrap_or("-");
        let content: String = field("content").replace('\n', "⏎");
        let short: String = content.chars().take(60).collect();
        let ellipsis = if content.chars().count() > 60 {
            "…"
        } else {
            ""
        };
        writeln!(
            out,
            "{i:>4}  {:<42} {:<9} {short}{ellipsis}",
            field("turn_id"),
            field("role")
        )?;
    }
    writeln!(out, "{} message(s)", rows.len())
}
