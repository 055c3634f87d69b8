//! `ovreplay verify JOURNAL [--repair]`: check every frame of a journal.
//!
//! Exit 0 when every frame checks; 1 with the segment, offset and kind of the first problem.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::Context;
use ov_journal::{Error, Journal, Options, Reader, RecoveryMode};

use crate::cli::VerifyArgs;
use crate::view::LOCK_WAIT;

/// The first problem `verify` found in a journal.
#[derive(Debug, Clone, serde::Serialize)]
pub struct JournalProblem {
    /// Segment number of the bad frame.
    pub segment: u64,
    /// Byte offset of the bad frame inside its segment.
    pub offset: u64,
    /// What is wrong (`torn-tail`, `bad-crc`, `bad-length`, ...).
    pub kind: String,
    /// Whether `--repair` may cut it (only a torn tail may be cut).
    pub repairable: bool,
}

/// What `verify` saw.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VerifyReport {
    /// Frames that checked.
    pub frames: u64,
    /// Bytes covered by valid frames.
    pub valid_bytes: u64,
    /// The first problem, if any.
    pub problem: Option<JournalProblem>,
    /// True when `--repair` cut the tail.
    pub repaired: bool,
}

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
    let report = verify_journal(&journal, args.repair, &mut progress)
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

/// Checks every frame of the journal at `dir`.
///
/// 1. `Journal::open` with `AbsoluteConsistency` finds a torn tail or a bad segment header
///    without changing anything; with `repair`, a torn tail is then cut by reopening with
///    `TolerateTailCorruption`.
/// 2. A read-only `Reader` walks every frame of every segment; the first error is the problem.
///
/// `progress` is called with (bytes checked, total bytes) as frames are read.
pub fn verify_journal(
    dir: &Path,
    repair: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<VerifyReport> {
    let opts = |recovery| Options {
        recovery,
        lock_timeout: LOCK_WAIT,
        create: false,
    };
    let mut problem = None;
    let mut repaired = false;
    match Journal::open(dir, opts(RecoveryMode::AbsoluteConsistency)) {
        Ok(_) => {}
        Err(e @ Error::TornTail { .. }) => {
            if repair {
                Journal::open(dir, opts(RecoveryMode::TolerateTailCorruption))
                    .with_context(|| format!("could not repair {}", dir.display()))?;
                repaired = true;
            }
            problem = as_problem(&e);
        }
        Err(e) => match as_problem(&e) {
            Some(p) => problem = Some(p),
            None => return Err(e).with_context(|| format!("could not open {}", dir.display())),
        },
    }
    let reader = match Reader::open(dir, LOCK_WAIT) {
        Ok(r) => r,
        // A journal no reader can open (a newer format version, a foreign
        // file): that is the finding, reported like any other.
        Err(e) if problem.is_some() || as_problem(&e).is_some() => {
            return Ok(VerifyReport {
                frames: 0,
                valid_bytes: 0,
                problem: problem.or_else(|| as_problem(&e)),
                repaired,
            })
        }
        Err(e) => return Err(e).with_context(|| format!("could not read {}", dir.display())),
    };
    let total = reader.valid_bytes();
    let mut frames = 0u64;
    let mut valid_bytes = 0u64;
    for (i, frame) in reader.frames().enumerate() {
        match frame {
            Ok(f) => {
                frames += 1;
                valid_bytes = reader.bytes_before(f.next_position());
                if i % 4096 == 0 {
                    progress(valid_bytes, total);
                }
            }
            Err(e) => {
                // A problem found by the reader comes before any tail problem (it is earlier).
                match as_problem(&e) {
                    Some(p) => problem = Some(p),
                    None => {
                        return Err(e).with_context(|| format!("could not read {}", dir.display()))
                    }
                }
                break;
            }
        }
    }
    progress(valid_bytes, total);
    Ok(VerifyReport {
        frames,
        valid_bytes,
        problem,
        repaired,
    })
}

/// The journal errors that are findings about the bytes, not failures to look at them.
fn as_problem(e: &Error) -> Option<JournalProblem> {
    let segment = |path: &Path| ov_journal::segment_id(path).unwrap_or(0);
    Some(match e {
        Error::Corruption { path, offset, kind } => JournalProblem {
            segment: segment(path),
            offset: *offset,
            kind: kind.to_string(),
            repairable: false,
        },
        Error::TornTail { path, offset } => JournalProblem {
            segment: segment(path),
            offset: *offset,
            kind: "torn-tail".into(),
            repairable: true,
        },
        Error::NotAJournal { path } => JournalProblem {
            segment: segment(path),
            offset: 0,
            kind: "not a journal segment (bad magic)".into(),
            repairable: false,
        },
        Error::UnsupportedVersion { path, found, .. } => JournalProblem {
            segment: segment(path),
            offset: 0,
            kind: format!("unsupported format version {found}"),
            repairable: false,
        },
        _ => return None,
    })
}
