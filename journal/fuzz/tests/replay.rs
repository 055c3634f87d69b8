//! Replays every committed seed (`corpus/<target>/`) and regression input
//! (`regressions/<target>/`) through the fuzz checks: stable toolchain, no cargo-fuzz.

use std::path::Path;

#[test]
fn journal_frame() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let n = ov_journal_fuzz::replay_dir(
        &here.join("corpus/journal_frame"),
        ov_journal_fuzz::journal_frame,
    ) + ov_journal_fuzz::replay_dir(
        &here.join("regressions/journal_frame"),
        ov_journal_fuzz::journal_frame,
    );
    assert!(n > 0, "no seeds for journal_frame");
}

#[test]
fn journal_open() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let n = ov_journal_fuzz::replay_dir(
        &here.join("corpus/journal_open"),
        ov_journal_fuzz::journal_open,
    ) + ov_journal_fuzz::replay_dir(
        &here.join("regressions/journal_open"),
        ov_journal_fuzz::journal_open,
    );
    assert!(n > 0, "no seeds for journal_open");
}
