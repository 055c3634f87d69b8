//! What `simulate` prints: the report (`--json`, or three lines and the reasons).

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use super::explain;

/// What `simulate --json` prints. The first four keys are the contract (README, `ovreplay
/// simulate`); the rest is diagnostics.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Turns the server should hold.
    pub expected: usize,
    /// Expected turns the server holds, prompt and answer.
    pub delivered: usize,
    /// Extra copies of messages on the server.
    pub duplicates: usize,
    /// Expected turns the server does not hold.
    pub lost: usize,
    /// Turns planned but not acknowledged (embedded default); `null` when unknown.
    pub pending: Option<usize>,
    /// Hook runs whose output or exit broke the hook contract.
    pub hook_violations: usize,
    /// Hook runs that could not be run or waited for.
    pub hook_failures: usize,
    /// Hooks that ran longer than the `timeoutMs` `ovhook install` gives their event.
    pub hook_over_budget: usize,
    /// The longest run of each hook event, in milliseconds.
    pub hook_longest_ms: BTreeMap<String, u64>,
    /// Files under the state folder (journals, log) holding a secret a fault planted.
    pub secrets_leaked: usize,
    /// Damaged ranges a read of the session's journal finds after the run.
    pub journal_damage: usize,
    /// Damaged ranges the engine recorded in the journal (`JournalDamaged`).
    pub journal_damage_recorded: usize,
    /// 1 when a fault damaged the journal (`forge-frame`, `forge-header`) and neither a read
    /// nor the engine shows any damage: damage went unreported.
    pub damage_unreported: usize,
    /// Delivered turns whose text differs from the recording.
    pub content_mismatches: usize,
    /// Turns on the server that are not expected.
    pub unexpected_turns: usize,
    /// Turns of the recording that never completed (not expected).
    pub incomplete_turns: usize,
    /// For every count above that is not as it should be: its turns and why, in a sentence.
    pub why: Vec<explain::Reason>,
    /// The session id of the playback.
    pub session_id: String,
    /// The session id in the recording.
    pub recorded_session_id: Option<String>,
    /// The server's session of the playback.
    pub server_session: String,
    /// `server`, or `embedded` (no `--url`).
    pub mode: &'static str,
    /// The faults, as given.
    pub faults: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The temporary folder, when `--keep` kept it.
    pub kept: Option<String>,
}

/// Prints `report` on stdout: one JSON object, or the human lines.
pub fn print_report(report: &Report, json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut out, report)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{} ({}, faults: {}): expected {}, delivered {}, duplicates {}, lost {}, pending {}",
            report.session_id,
            report.mode,
            if report.faults.is_empty() {
                "none".to_owned()
            } else {
                report.faults.join(",")
            },
            report.expected,
            report.delivered,
            report.duplicates,
            report.lost,
            report
                .pending
                .map_or("unknown".to_owned(), |p| p.to_string()),
        )?;
        writeln!(
            out,
            "hook violations {}, hook failures {}, hooks over budget {}, secrets leaked {}, content mismatches {}, unexpected turns {}, incomplete turns {}",
            report.hook_violations,
            report.hook_failures,
            report.hook_over_budget,
            report.secrets_leaked,
            report.content_mismatches,
            report.unexpected_turns,
            report.incomplete_turns
        )?;
        writeln!(
            out,
            "journal damage {} (recorded {}), damage unreported {}",
            report.journal_damage, report.journal_damage_recorded, report.damage_unreported
        )?;
        write!(out, "{}", explain::render(&report.why))?;
        if let Some(k) = &report.kept {
            writeln!(out, "kept {k}")?;
        }
    }
    out.flush()?;
    if let Some(k) = report.kept.as_ref().filter(|_| json) {
        eprintln!("ovreplay: kept {k}");
    }
    Ok(())
}
