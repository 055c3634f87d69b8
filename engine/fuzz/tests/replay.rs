//! Replays every committed seed (`corpus/<target>/`) and regression input
//! (`regressions/<target>/`) through the fuzz checks: stable toolchain, no cargo-fuzz.

use std::path::Path;

#[test]
fn codec_event() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let n = ov_engine_fuzz::replay_dir(
        &here.join("corpus/codec_event"),
        ov_engine_fuzz::codec_event,
    ) + ov_engine_fuzz::replay_dir(
        &here.join("regressions/codec_event"),
        ov_engine_fuzz::codec_event,
    );
    assert!(n > 0, "no seeds for codec_event");
}

#[test]
fn codec_snapshot() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let n = ov_engine_fuzz::replay_dir(
        &here.join("corpus/codec_snapshot"),
        ov_engine_fuzz::codec_snapshot,
    ) + ov_engine_fuzz::replay_dir(
        &here.join("regressions/codec_snapshot"),
        ov_engine_fuzz::codec_snapshot,
    );
    assert!(n > 0, "no seeds for codec_snapshot");
}

#[test]
fn rollout_line() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let n = ov_engine_fuzz::replay_dir(
        &here.join("corpus/rollout_line"),
        ov_engine_fuzz::rollout_line,
    ) + ov_engine_fuzz::replay_dir(
        &here.join("regressions/rollout_line"),
        ov_engine_fuzz::rollout_line,
    );
    assert!(n > 0, "no seeds for rollout_line");
}

#[test]
fn rollout_chunk() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let n = ov_engine_fuzz::replay_dir(
        &here.join("corpus/rollout_chunk"),
        ov_engine_fuzz::rollout_chunk,
    ) + ov_engine_fuzz::replay_dir(
        &here.join("regressions/rollout_chunk"),
        ov_engine_fuzz::rollout_chunk,
    );
    assert!(n > 0, "no seeds for rollout_chunk");
}
