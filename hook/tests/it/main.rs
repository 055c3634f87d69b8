//! Integration tests of `hook`: one test binary; every file here is a module.
#![expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]

mod agents_real;
mod antigravity;
mod claude_code;
mod claude_code_compact;
mod claude_code_e2e;
mod claude_code_plugin;
mod claude_code_plugin_tree;
mod claude_code_support;
mod codex_plugin_real;
mod common;
mod compaction;
mod consent;
mod control_prompts;
mod copilot_lag;
mod cursor;
mod doctor;
mod doctor_placement;
mod drain;
mod droid;
mod exactly_once;
mod guard;
mod history;
mod hooks_behaviour;
mod hooks_contract;
mod hostile;
mod install;
mod install_agents;
mod install_claude_code;
mod install_plugin;
mod install_respect;
mod install_scope;
mod mcp_faults;
mod mcp_server;
mod mcp_support;
mod npm_package;
mod opencode_shim;
mod privacy;
mod project_first;
mod server_answers;
mod spill;
mod subagents;
mod sweep;
mod tool_calls;
mod turn_times;
mod zcode_formats;
mod zcode_plugin_layout;

/// Every file in `tests/it` is a declared module, and nothing is left in `tests/` itself.
#[test]
fn no_forgotten_test_files() {
    let problems = ov_testdata::test_layout::forgotten_test_files(std::path::Path::new(env!(
        "CARGO_MANIFEST_DIR"
    )));
    assert!(problems.is_empty(), "{problems:#?}");
}
