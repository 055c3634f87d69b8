//! The calls into engine and journal pieces that are still being written on other branches.
//!
//! Every use of a not-yet-landed API goes through this one file, so that landing it means
//! replacing a function body here and nothing else. Each shim states the real call it stands
//! for.

use std::path::Path;

use std::time::Duration;

use anyhow::Context;

/// `ov_engine::plan::to_json(&ov_engine::plan::first_capture(path)?)`: the messages a first
/// capture of `path` sends, as a JSON array of `{"turn_id","role","content"}`.
pub fn plan_json(path: &Path) -> anyhow::Result<serde_json::Value> {
    let plan = ov_engine::plan::first_capture(path)
        .with_context(|| format!("could not read {}", path.display()))?;
    serde_json::from_str(&ov_engine::plan::to_json(&plan)).context("the planner printed bad JSON")
}

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
    use ov_journal::{Error, Journal, Options, Reader, RecoveryMode};
    let opts = |recovery| Options {
        recovery,
        lock_timeout: Duration::from_secs(5),
        create: false,
    };
    let mut problem = None;
    let mut repaired = false;
    match Journal::open(dir, opts(RecoveryMode::AbsoluteConsistency)) {
        Ok(_) => {}
        Err(Error::TornTail { path, offset }) => {
            if repair {
                Journal::open(dir, opts(RecoveryMode::TolerateTailCorruption))
                    .with_context(|| format!("could not repair {}", dir.display()))?;
                repaired = true;
            }
            problem = Some(JournalProblem {
                segment: segment_of(&path),
                offset,
                kind: "torn-tail".into(),
                repairable: true,
            });
        }
        Err(e) => match as_problem(&e) {
            Some(p) => problem = Some(p),
            None => return Err(e).with_context(|| format!("could not open {}", dir.display())),
        },
    }
    let reader = Reader::open(dir, Duration::from_secs(5))
        .with_context(|| format!("could not read {}", dir.display()))?;
    let total: u64 = reader.segments().map(|s| s.valid_end).sum();
    let done_before: Vec<(u64, u64)> = reader
        .segments()
        .scan(0u64, |acc, s| {
            let before = *acc;
            *acc += s.valid_end;
            Some((s.id, before))
        })
        .collect();
    let mut frames = 0u64;
    let mut valid_bytes = 0u64;
    for (i, frame) in reader.frames().enumerate() {
        match frame {
            Ok(f) => {
                frames += 1;
                let next = f.next_position();
                let base = done_before
                    .iter()
                    .find(|(id, _)| *id == next.segment)
                    .map_or(0, |(_, b)| *b);
                valid_bytes = base + next.offset;
                if i % 4096 == 0 {
                    progress(valid_bytes, total);
                }
            }
            Err(e) => {
                // A problem found by the reader comes before any tail problem (it is earlier).
                match as_problem(&e) {
                    Some(p) => problem = Some(p),
                    None => return Err(e).with_context(|| format!("could not read {}", dir.display())),
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
fn as_problem(e: &ov_journal::Error) -> Option<JournalProblem> {
    use ov_journal::Error;
    Some(match e {
        Error::Corruption { path, offset, kind } => JournalProblem {
            segment: segment_of(path),
            offset: *offset,
            kind: kind.to_string(),
            repairable: false,
        },
        Error::TornTail { path, offset } => JournalProblem {
            segment: segment_of(path),
            offset: *offset,
            kind: "torn-tail".into(),
            repairable: true,
        },
        Error::NotAJournal { path } => JournalProblem {
            segment: segment_of(path),
            offset: 0,
            kind: "not a journal segment (bad magic)".into(),
            repairable: false,
        },
        Error::UnsupportedVersion { path, found, .. } => JournalProblem {
            segment: segment_of(path),
            offset: 0,
            kind: format!("unsupported format version {found}"),
            repairable: false,
        },
        _ => return None,
    })
}

/// Segment files are named `<id as 16 hex digits><suffix>`.
fn segment_of(path: &Path) -> u64 {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.get(..16))
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or(0)
}

/// Messages still pending (planned, not acknowledged) for `session` under `state_dir`, counted
/// in turns, read from the folded journal state.
///
/// TODO(integrator): fold the journal with `ov_engine::store` once it lands; until then
/// `simulate` prints `"pending": null`.
pub fn pending_turns(_state_dir: &Path, _session: &str) -> Option<usize> {
    None
}
