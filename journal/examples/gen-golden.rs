//! Writes the golden journals of `testdata/journal-frames/`:
//! `cargo run -p ov-journal --example gen-golden -- testdata/journal-frames`.
//!
//! The generator lives in `tests/it/spec.rs`; its output is deterministic, and the test
//! `golden::generator_reproduces_committed_files` regenerates it and compares byte for byte.

use std::path::PathBuf;

#[path = "../tests/it/spec.rs"]
mod spec;

fn main() -> spec::BoxResult<()> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "testdata/journal-frames".into()),
    );
    spec::generate(&out)?;
    println!("wrote golden journals to {}", out.display());
    Ok(())
}
