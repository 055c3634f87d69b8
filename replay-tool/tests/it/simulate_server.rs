//! `simulate --url $OVHOOK_TEST_URL`: the real ovhook against the real server, counted from
//! what the server holds. Needs the hooks and worker on main.

use crate::{fixture, ovhook, server_url, simulate, workspace};

/// Our fixtures plus every generated session in `testdata/sessions/`.
fn sessions() -> Vec<std::path::PathBuf> {
    let mut v = vec![fixture("five-turns.jsonl"), fixture("partial-tail.jsonl")];
    if let Ok(dir) = std::fs::read_dir(workspace().join("testdata/sessions")) {
        let mut generated: Vec<_> = dir
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".jsonl"))
            .collect();
        generated.sort();
        v.extend(generated);
    }
    v
}

fn exactly_once(session: &std::path::Path, url: &str, faults: &str) {
    let mut args = vec![
        session.to_str().unwrap(),
        "--url",
        url,
        "--ovhook",
        ovhook().to_str().unwrap(),
    ];
    if !faults.is_empty() {
        args.extend(["--faults", faults]);
    }
    let (code, r, err) = simulate(&args);
    let name = session.file_name().unwrap().to_string_lossy();
    assert_eq!(code, 0, "{name} [{faults}]: {r} {err}");
    assert_eq!(r["mode"], "server");
    // A session with nothing of the user's conversation (a subagent's own) expects nothing.
    let plan = std::fs::read_to_string(session.with_extension("expected.json")).unwrap_or_default();
    let nothing = plan.trim() == "[]";
    assert_eq!(r["expected"].as_u64().unwrap() == 0, nothing, "{name}: {r}");
    assert_eq!(r["delivered"], r["expected"], "{name} [{faults}]: {r}");
    assert_eq!(r["duplicates"], 0, "{name} [{faults}]: {r}");
    assert_eq!(r["lost"], 0, "{name} [{faults}]: {r}");
    assert_eq!(r["content_mismatches"], 0, "{name} [{faults}]: {r}");
    assert_eq!(r["hook_violations"], 0, "{name} [{faults}]: {r} {err}");
}

#[test]
fn every_session_exactly_once_without_faults() {
    let Some(url) = server_url() else { return };
    for s in sessions() {
        exactly_once(&s, &url, "");
    }
}

macro_rules! fault_case {
    ($name:ident, $spec:expr) => {
        #[test]
        fn $name() {
            let Some(url) = server_url() else { return };
            exactly_once(&fixture("five-turns.jsonl"), &url, $spec);
        }
    };
}

fault_case!(drop_stop, "drop-stop@1");
fault_case!(dup_stop, "dup-stop@1");
fault_case!(late_stop, "late-stop@1");
fault_case!(late_stop_of_the_last_complete_turn, "late-stop@3");
fault_case!(race_stop, "race-stop@2");
fault_case!(rotate, "rotate@2");
fault_case!(partial_line, "partial-line@1");
fault_case!(partial_line_last_turn, "partial-line@3");
fault_case!(server_down, "server-down@1-2");
fault_case!(server_down_from_the_start, "server-down@0-1");
fault_case!(kill_after_stop_journaled, "kill:after-stop-journaled@1");
fault_case!(kill_after_rollout_read, "kill:after-rollout-read@1");
fault_case!(kill_after_plan, "kill:after-plan@1");
fault_case!(kill_after_request_sent, "kill:after-request-sent@1");
fault_case!(
    kill_after_reply_before_outcome,
    "kill:after-reply-before-outcome@1"
);
fault_case!(kill_after_commit_sent, "kill:after-commit-sent@1");
fault_case!(everything_at_once, "drop-stop@0,dup-stop@1,race-stop@1,late-stop@2,rotate@3,partial-line@3,kill:after-request-sent@3");

/// A recorded Claude Code transcript plays through `ovhook --harness claude-code`: every
/// complete turn once under `cc-<id>`, with faults; the turn whose model call failed is
/// captured prompt-only (an unexpected, incomplete turn, never a loss).
#[test]
fn a_recorded_claude_code_session_exactly_once() {
    let Some(url) = server_url() else { return };
    let recorded = workspace().join("testdata/agents/claude-code/recorded/transcript.jsonl");
    for faults in ["", "drop-stop@1,dup-stop@2,kill:after-request-sent@4"] {
        exactly_once(&recorded, &url, faults);
    }
    let (_, r, _) = simulate(&[
        recorded.to_str().unwrap(),
        "--url",
        &url,
        "--ovhook",
        ovhook().to_str().unwrap(),
    ]);
    assert_eq!(r["expected"], 5, "{r}");
    assert!(
        r["server_session"].as_str().unwrap().starts_with("cc-"),
        "{r}"
    );
    assert_eq!(r["incomplete_turns"], 1, "the failed call's prompt: {r}");
}
