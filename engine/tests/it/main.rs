//! Integration tests of `engine`: one test binary; every file here is a module.
#![expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]

mod claude_transcript;
#[cfg(feature = "http")]
mod client_faults;
#[cfg(feature = "http")]
mod client_server;
#[cfg(feature = "http")]
mod common;
mod config;
mod consent;
mod delivery_exactly_once;
mod delivery_settle;
mod history_bounds;
mod privacy;
mod projector_laws;
mod projector_support;
mod quarantine;
mod refusals;
mod released_journals;
#[cfg(feature = "http")]
mod server_url;
mod store_laws;
mod tool_capture;
mod transcript_copilot;
mod transcript_gemini;
mod transcript_zcode;
mod turnbook;

/// Every file in `tests/it` is a declared module, and nothing is left in `tests/` itself.
#[test]
fn no_forgotten_test_files() {
    let problems = ov_testdata::test_layout::forgotten_test_files(std::path::Path::new(env!(
        "CARGO_MANIFEST_DIR"
    )));
    assert!(problems.is_empty(), "{problems:#?}");
}
