//! Writes a long session as this build's worker leaves it, and says what it weighs:
//! `cargo run --release -p ov-engine --example long_session -- <journal dir> (<turns> | --prune)`.
//!
//! The turns are the fold benchmark's synthetic session (`benches/synthetic.rs`), delivered,
//! their texts padded to about 1 KB; they are appended 100 at a time, each batch followed by
//! the worker's compaction rule (`SessionStore::compact_if_due` with the worker's bounds).
//! Prints one JSON line: the journal on disk, its segments and its latest snapshot. With
//! `--prune` instead of a number, prunes it as the worker would once the retention has passed
//! (`retention::prune_segments` judged 15 days later) and prints the same.
//! `scripts/bench-history.sh` times the hooks on it.

use std::path::PathBuf;

use ov_engine::delivery::{COMPACT_ACTIVE_BYTES, COMPACT_AFTER_RECORDS};
use ov_engine::retention;
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
    let usage = "usage: long_session <journal dir> (<turns> | --prune)";
    let dir = PathBuf::from(args.next().ok_or(usage)?);
    let what = args.next().ok_or(usage)?;
    let store = SessionStore::open(&dir)?;
    if what == "--prune" {
        let later = retention::now_ms() + 15 * retention::DAY_MS;
        retention::prune_segments(&store, 14, later)?;
    } else {
        let turns: usize = what.parse()?;
        let pad =
            " Then the next step of the plan, described at the length a real one tends to have."
                .repeat(12);
        let mut done = 0;
        while done < turns {
            let n = (turns - done).min(100);
            let batch = synthetic::turns(done, n, &pad);
            store.append_all(
                batch.into_iter().map(|e| e.event).collect(),
                Durability::Buffered,
            )?;
            store.compact_if_due(COMPACT_AFTER_RECORDS, COMPACT_ACTIVE_BYTES)?;
            done += n;
        }
    }
    let (bytes, segments, snapshot) = weigh(&store)?;
    println!("{{\"disk_bytes\":{bytes},\"segments\":{segments},\"snapshot_bytes\":{snapshot}}}");
    Ok(())
}

/// Bytes of segment files, how many, and the latest snapshot's payload bytes.
fn weigh(store: &SessionStore) -> Result<(u64, usize, usize), Box<dyn std::error::Error>> {
    let files = ov_journal::prune::segment_files(store.dir())?;
    let reader = store.journal().reader()?;
    let snapshot = reader.latest_snapshot().map_or(0, |f| f.payload.len());
    Ok((files.iter().map(|f| f.len).sum(), files.len(), snapshot))
}
