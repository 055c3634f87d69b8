//! `ovreplay verify JOURNAL [--repair]`: check every frame of a journal.
//!
//! Exit 0 when every frame checks; 1 with the segment, offset and kind of every problem found
//! (each damaged range, read around as the engine reads it, and a torn tail).

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::Context;
use ov_journal::{Entry, Error, Journal, Options, Position, Reader, RecoveryMode};

use crate::cli::VerifyArgs;
use crate::view::LOCK_WAIT;

/// The first problem `verify` found in a journal.
#[derive(Debug, Clone, serde::Serialize)]
pub struct JournalProblem {
    /// Segment number of the bad frame.
    pub segment: u64,
    /// Byte offset of the bad frame inside its segment.
    pub offset: u64,
    /// Length of the damaged range in bytes (absent for a torn tail or an unreadable header).
    pub len: Option<u64>,
    /// What is wrong (`torn-tail`, `bad-crc`, `bad-length`, ...).
    pub kind: String,
    /// Whether `--repair` may cut it (only a torn tail may be cut).
    pub repairable: bool,
}

/// What `verify` saw.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VerifyReport {
    /// Frames that checked (every one, read around damaged ranges).
    pub frames: u64,
    /// Bytes read (frames and damaged ranges, segment headers included).
    pub valid_bytes: u64,
    /// The first problem, if any.
    pub problem: Option<JournalProblem>,
    /// Every problem, in journal order (the first is `problem`).
    pub problems: Vec<JournalProblem>,
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
    } else if report.problems.is_empty() {
        writeln!(
            out,
            "ok: {} frames, {} bytes",
            report.frames, report.valid_bytes
        )?;
    } else {
        for p in &report.problems {
            let verdict = if report.repaired && p.repairable {
                "repaired"
            } else {
                "bad"
            };
            match p.len {
                Some(len) => writeln!(
                    out,
                    "{verdict}: segment {} offset {}: {} ({len} bytes)",
                    p.segment, p.offset, p.kind
                )?,
                None => writeln!(
                    out,
                    "{verdict}: segment {} offset {}: {}",
                    p.segment, p.offset, p.kind
                )?,
            }
        }
        writeln!(
            out,
            "{} problem(s); {} valid frames read around them",
            report.problems.len(),
            report.frames
        )?;
    }
    out.flush()?;
    if report
        .problems
        .iter()
        .any(|p| !(report.repaired && p.repairable))
    {
        return Err(crate::exit::Failure::Silent(1).into());
    }
    Ok(())
}

/// Checks every frame of the journal at `dir`.
///
/// 1. A read-only `Reader` walks every frame of every segment, reading around damaged ranges as
///    the engine does; each damaged range is a problem.
/// 2. Bytes of the newest segment past the reader's valid end are a torn tail (an interrupted
///    append, the only thing recovery cuts); so is a newest segment shorter than its header
///    (`Journal::open` with `AbsoluteConsistency` says so without changing anything). With
///    `repair` a torn tail is cut by reopening with `TolerateTailCorruption`.
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
        ..Options::default()
    };
    let reader = match Reader::open(dir, LOCK_WAIT) {
        Ok(r) => r,
        // A journal no reader can open (a newer format version, a foreign
        // file): that is the finding, reported like any other.
        Err(e) => match as_problem(&e) {
            Some(p) => {
                return Ok(VerifyReport {
                    frames: 0,
                    valid_bytes: 0,
                    problem: Some(p.clone()),
                    problems: vec![p],
                    repaired: false,
                })
            }
            None => return Err(e).with_context(|| format!("could not read {}", dir.display())),
        },
    };
    let total = reader.valid_bytes();
    let mut frames = 0u64;
    let mut valid_bytes = 0u64;
    let mut problems = Vec::new();
    for (i, entry) in reader.entries().enumerate() {
        match entry {
            Ok(Entry::Frame(f)) => {
                frames += 1;
                valid_bytes = reader.bytes_before(f.next_position());
            }
            Ok(Entry::Damage(d)) => {
                valid_bytes = reader.bytes_before(Position {
                    segment: d.segment,
                    offset: d.offset + d.len,
                });
                problems.push(JournalProblem {
                    segment: d.segment,
                    offset: d.offset,
                    len: Some(d.len),
                    kind: d.kind.to_string(),
                    repairable: false,
                });
            }
            Err(e) => match as_problem(&e) {
                Some(p) => {
                    problems.push(p);
                    break;
                }
                None => return Err(e).with_context(|| format!("could not read {}", dir.display())),
            },
        }
        if i % 4096 == 0 {
            progress(valid_bytes, total);
        }
    }
    progress(valid_bytes, total);
    let newest = reader.segments().last();
    drop(reader);
    let mut tail = None;
    if let Some(seg) = newest {
        let len = std::fs::metadata(&seg.path)
            .with_context(|| format!("could not read {}", seg.path.display()))?
            .len();
        if len > seg.valid_end {
            tail = Some(JournalProblem {
                segment: seg.id,
                offset: seg.valid_end,
                len: Some(len - seg.valid_end),
                kind: "torn-tail".into(),
                repairable: true,
            });
        }
    }
    if tail.is_none() {
        if let Err(e @ Error::TornTail { .. }) =
            Journal::open(dir, opts(RecoveryMode::AbsoluteConsistency))
        {
            tail = as_problem(&e);
        }
    }
    let mut repaired = false;
    if tail.is_some() && repair {
        Journal::open(dir, opts(RecoveryMode::TolerateTailCorruption))
            .with_context(|| format!("could not repair {}", dir.display()))?;
        repaired = true;
    }
    // A torn tail lies after everything the reader reads.
    problems.extend(tail);
    Ok(VerifyReport {
        frames,
        valid_bytes,
        problem: problems.first().cloned(),
        problems,
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
            len: None,
            kind: kind.to_string(),
            repairable: false,
        },
        Error::TornTail { path, offset } => JournalProblem {
            segment: segment(path),
            offset: *offset,
            len: None,
            kind: "torn-tail".into(),
            repairable: true,
        },
        Error::NotAJournal { path } => JournalProblem {
            segment: segment(path),
            offset: 0,
            len: None,
            kind: "not a journal segment (bad magic)".into(),
            repairable: false,
        },
        Error::UnsupportedVersion { path, found, .. } => JournalProblem {
            segment: segment(path),
            offset: 0,
            len: None,
            kind: format!("unsupported format version {found}"),
            repairable: false,
        },
        _ => return None,
    })
}
