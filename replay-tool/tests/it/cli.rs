//! Exit codes and usage errors.

use predicates::prelude::*;

use crate::{fixture, ovreplay};

#[test]
fn no_command_is_usage() {
    ovreplay().assert().code(2);
}

#[test]
fn help_and_version_exit_0() {
    ovreplay()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("simulate"));
    ovreplay().arg("--version").assert().success();
    ovreplay()
        .args(["simulate", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--faults"));
}

#[test]
fn unknown_fault_is_a_usage_error() {
    ovreplay()
        .args([
            "simulate",
            fixture("five-turns.jsonl").to_str().unwrap(),
            "--faults",
            "drop-stop@1,explode@2",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown fault 'explode@2'"));
    ovreplay()
        .args([
            "simulate",
            fixture("five-turns.jsonl").to_str().unwrap(),
            "--faults",
            "kill:after-lunch@1",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown failpoint"));
}

#[test]
fn missing_inputs_are_user_errors() {
    ovreplay()
        .args(["simulate", "/nonexistent/rollout.jsonl"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no such file"));
    ovreplay()
        .args([
            "simulate",
            fixture("five-turns.jsonl").to_str().unwrap(),
            "--ovhook",
            "/nonexistent/ovhook",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "ovhook not found at /nonexistent/ovhook",
        ));
    ovreplay()
        .args(["plan", "/nonexistent/rollout.jsonl"])
        .assert()
        .code(1);
    ovreplay()
        .args(["verify", "/nonexistent/journal"])
        .assert()
        .code(1);
}
