//! `ovreplay verify JOURNAL [--repair]`: check every frame of a journal.
//!
//! Exit 0 when every frame checks; 1 with the segment, offset and kind of the first problem.

use std::io::{IsTerminal, Write};

use anyhow::Context;

use crate::cli::VerifyArgs;

/// Runs `ovreplay verify`.
pub fn run(args: &VerifyArgs) -> anyhow::Result<()> {
    // A segment file names its journal: verify the directory it is in.
    let journal = match args.journal.parent() {
        Some(dir)
            if args.journal.is_file() && args.journal.extension().is_some_and(|e| e == "ovj") =>
        {
            dir.to_path_buf()
        }
        _ => args.journal.clone(),
    };
    if !journal.is_dir() {
        return Err(crate::exit::user(format!(
            "could not open journal {}: not a directory",
            journal.display()
        )));
    }
    // The bar goes to stderr, and only when a human watches it.
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let mut progress = |done: u64, total: u64| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    };
    let report = crate::engine_api::verify_journal(&journal, args.repair, &mut progress)
        .with_context(|| format!("could not verify {}", journal.display()))?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        match &report.problem {
            None => writeln!(
                out,
                "ok: {} frames, {} bytes",
                report.frames, report.valid_bytes
            )?,
            Some(p) => writeln!(
                out,
                "{}: segment {} offset {}: {} ({} valid frames before it)",
                if report.repaired { "repaired" } else { "bad" },
                p.segment,
                p.offset,
                p.kind,
                report.frames
            )?,
        }
    }
    out.flush()?;
    match &report.problem {
        Some(_) if !report.repaired => Err(crate::exit::Failure::Silent(1).into()),
        _ => Ok(()),
    }
}
