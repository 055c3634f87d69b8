//! `ovhook pre-tool-use` end to end: the payload on stdin, the deny JSON (or nothing) on stdout.

use assert_cmd::Command;
use rstest::rstest;
use serde_json::{json, Value};

const LINE1: &str = "viking:// URIs are OpenViking virtual paths, not local filesystem paths.";

fn run(payload: &Value) -> String {
    let state = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_ovhook"))
        .arg("pre-tool-use")
        .env_clear()
        .env("HOME", state.path())
        .env("OPENVIKING_URL", "off")
        .env("OVHOOK_STATE_DIR", state.path().join("state"))
        .write_stdin(payload.to_string())
        .output()
        .expect("run ovhook");
    assert!(out.status.success(), "exit {:?}", out.status);
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

fn deny_reason(stdout: &str) -> String {
    let v: Value = serde_json::from_str(stdout.trim()).expect("deny JSON");
    assert_eq!(
        v["hookSpecificOutput"]["hookEventName"], "PreToolUse",
        "{v}"
    );
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .expect("reason")
        .to_owned()
}

#[rstest]
#[case::read_uri(
    json!({"session_id":"g1","tool_name":"Read","tool_input":{"file_path":"viking://~/memories/profile.md"}}),
    "Use OpenViking MCP read instead.\nExample: read(uris=\"viking://~/memories/profile.md\")"
)]
#[case::read_normalised_by_harness(
    json!({"session_id":"g2","tool_name":"Read","tool_input":{"file_path":"/root/work/viking:/~/memories/x.md"}}),
    "Use OpenViking MCP read instead.\nExample: read(uris=\"viking://~/memories/x.md\")"
)]
#[case::glob_pattern(
    json!({"session_id":"g3","tool_name":"Glob","tool_input":{"pattern":"viking://user/memories/**"}}),
    "Use OpenViking MCP glob or list instead.\nExample: glob(pattern=\"viking://user/memories/**\", uri=\"viking://user/memories/**\")"
)]
#[case::grep_path(
    json!({"session_id":"g4","tool_name":"Grep","tool_input":{"pattern":"Helix","path":"viking://~/memories"}}),
    "Use OpenViking MCP grep or search instead.\nExample: grep(uri=\"viking://~/memories\", pattern=\"Helix\")"
)]
fn denies_viking_paths(#[case] payload: Value, #[case] tail: &str) {
    assert_eq!(deny_reason(&run(&payload)), format!("{LINE1}\n{tail}"));
}

#[rstest]
#[case::local_read(json!({"session_id":"p1","tool_name":"Read","tool_input":{"file_path":"/tmp/local-file.txt"}}))]
#[case::local_glob(json!({"session_id":"p2","tool_name":"Glob","tool_input":{"pattern":"src/**/*.rs"}}))]
#[case::other_tool(json!({"session_id":"p3","tool_name":"Write","tool_input":{"file_path":"viking://x"}}))]
#[case::no_input(json!({"session_id":"p4","tool_name":"Read"}))]
fn passes_everything_else(#[case] payload: Value) {
    assert_eq!(run(&payload), "");
}

#[test]
fn garbage_stdin_passes() {
    let state = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_ovhook"))
        .arg("pre-tool-use")
        .env_clear()
        .env("HOME", state.path())
        .env("OPENVIKING_URL", "off")
        .env("OVHOOK_STATE_DIR", state.path().join("state"))
        .write_stdin("not json {")
        .output()
        .expect("run ovhook");
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
}
