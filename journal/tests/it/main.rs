//! Integration tests of `ov-journal` (one binary; see `common` for shared helpers).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]
// NOTE: tests may unwrap and index; failures are the point.

mod api;
mod bitflip;
mod common;
mod concurrent;
mod forge;
mod golden;
mod kill9;
mod roundtrip;
mod spec;
mod truncate;

/// Entry point of the child processes that `kill9` and `concurrent` spawn (the test binary
/// re-executes itself with `OVJ_CHILD_ROLE` set). A no-op in a normal test run.
#[test]
fn child_entry() {
    let Ok(role) = std::env::var("OVJ_CHILD_ROLE") else {
        return;
    };
    match role.as_str() {
        "kill9" => kill9::child(),
        "append" => concurrent::child(),
        other => panic!("unknown child role {other}"),
    }
}

/// Every file in `tests/it` is a declared module, and nothing is left in `tests/` itself.
#[test]
fn no_forgotten_test_files() {
    let problems = ov_testdata::test_layout::forgotten_test_files(std::path::Path::new(env!(
        "CARGO_MANIFEST_DIR"
    )));
    assert!(problems.is_empty(), "{problems:#?}");
}
