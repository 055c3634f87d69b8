//! The calls into engine and journal pieces that are still being written on other branches.
//!
//! Every use of a not-yet-landed API goes through this one file, so that landing it means
//! replacing a function body here and nothing else. Each shim states the real call it stands
//! for.

use std::path::Path;

use crate::exit::not_yet_available;

/// `ov_engine::plan::to_json(&ov_engine::plan::first_capture(path)?)`: the messages a first
/// capture of `path` sends, as a JSON array of `{"turn_id","role","content"}`.
///
/// TODO(h/rollout): call the planner once `ov_engine::plan` lands on main.
pub fn plan_json(_path: &Path) -> anyhow::Result<serde_json::Value> {
    Err(not_yet_available(
        "plan",
        "the rollout planner (ov_engine::plan::first_capture)",
    ))
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

/// Checks every frame of the journal at `dir` (`ov_journal::Journal::open` with
/// `RecoveryMode::AbsoluteConsistency`, then `reader().frames_from(start)`); with `repair`,
/// reopens with `TolerateTailCorruption` to cut a torn tail.
///
/// `progress` is called with (bytes checked, total bytes) as frames are read.
///
/// TODO(h/journal): implement on `ov_journal` once it lands on main.
pub fn verify_journal(
    _dir: &Path,
    _repair: bool,
    _progress: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<VerifyReport> {
    Err(not_yet_available(
        "verify",
        "the journal reader (ov_journal::Journal)",
    ))
}

/// Messages still pending (planned, not acknowledged) for `session` under `state_dir`, counted
/// in turns, read from the folded journal state.
///
/// TODO(integrator): fold the journal with `ov_engine::store` once it lands; until then
/// `simulate` prints `"pending": null`.
pub fn pending_turns(_state_dir: &Path, _session: &str) -> Option<usize> {
    None
}
