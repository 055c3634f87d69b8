//! Writes a large session journal, as an older build without automatic compaction left it:
//! `cargo run --release -p ov-engine --example big_journal -- <journal dir> <megabytes>`.
//!
//! The history is whole delivered turns of the fold benchmark's synthetic session
//! (`benches/synthetic.rs`), their texts padded to a realistic length, appended to one active
//! segment with no snapshot. `scripts/bench-big-journal.sh` times the hooks on it before and
//! after a worker compacts it.

use std::path::{Path, PathBuf};

use ov_engine::store::SessionStore;
use ov_journal::Durability;

#[path = "../benches/synthetic.rs"]
#[expect(
    dead_code,
    reason = "the benchmark uses session(); this example only turns()"
)]
mod synthetic;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or("usage: big_journal <journal dir> <megabytes>")?,
    );
    let megabytes: u64 = args.next().unwrap_or_else(|| "64".into()).parse()?;
    let store = SessionStore::open(&dir)?;
    let pad = " Then the next step of the plan, described at the length a real one tends to have."
        .repeat(12);
    let mut turns = 0;
    while dir_bytes(&dir) < megabytes << 20 {
        let batch = synthetic::turns(turns, 200, &pad);
        store.append_all(
            batch.into_iter().map(|e| e.event).collect(),
            Durability::Buffered,
        )?;
        turns += 200;
    }
    println!(
        "{turns} turns, {} bytes in {}",
        dir_bytes(&dir),
        dir.display()
    );
    Ok(())
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}
