//! Journal benchmarks (divan): `cargo bench -p ov-journal`. Figures go to `BENCHMARKS.md`.
//!
//! Files are created under `$OVJ_BENCH_DIR` (default: the system temp dir); the synced benches
//! measure that file system's fsync.
#![allow(missing_docs, clippy::unwrap_used)]

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use divan::counter::{BytesCount, ItemsCount};
use divan::Bencher;
use ov_journal::{Durability, Journal, Options};

fn main() {
    divan::main();
}

fn bench_root() -> PathBuf {
    std::env::var_os("OVJ_BENCH_DIR").map_or_else(std::env::temp_dir, PathBuf::from)
}

fn fresh() -> (tempfile::TempDir, Journal) {
    let t = tempfile::tempdir_in(bench_root()).unwrap();
    let j = Journal::open(&t.path().join("j"), Options::default()).unwrap();
    (t, j)
}

const FRAMES: usize = 100_000;

/// 100-byte frames through a `Writer` (one lock hold, buffered), flushed at the end.
#[divan::bench(sample_count = 20)]
fn buffered_append_100b_writer(b: Bencher) {
    let payload = [0x5au8; 100];
    b.counter(ItemsCount::new(FRAMES))
        .with_inputs(fresh)
        .bench_local_values(|(t, j)| {
            {
                let mut w = j.writer().unwrap();
                for _ in 0..FRAMES {
                    w.append(&payload).unwrap();
                }
                w.flush().unwrap();
            }
            (t, j)
        });
}

/// 100-byte frames through `Journal::append(.., Buffered)`: lock, tail check, write, unlock each.
#[divan::bench(sample_count = 20)]
fn buffered_append_100b_per_call(b: Bencher) {
    const N: usize = 10_000;
    let payload = [0x5au8; 100];
    b.counter(ItemsCount::new(N))
        .with_inputs(fresh)
        .bench_local_values(|(t, j)| {
            for _ in 0..N {
                j.append(&payload, Durability::Buffered).unwrap();
            }
            (t, j)
        });
}

fn scan(b: Bencher, payload_len: usize, total: usize) {
    let (_t, j) = fresh();
    let payload = vec![0xa5u8; payload_len];
    {
        let mut w = j.writer().unwrap();
        for _ in 0..total / (payload_len + 16) {
            w.append(&payload).unwrap();
        }
    }
    let bytes = j.end().unwrap().offset;
    // Warm the page cache.
    let _ = j.reader().unwrap().frames().count();
    b.counter(BytesCount::new(bytes)).bench_local(|| {
        let r = j.reader().unwrap();
        let mut sum = 0usize;
        for f in r.frames() {
            sum += f.unwrap().payload.len();
        }
        divan::black_box(sum)
    });
}

/// Reader over a 256 MiB segment of 4 KiB frames, from page cache (mmap, every crc checked).
#[divan::bench(sample_count = 10)]
fn full_scan_4k_frames(b: Bencher) {
    scan(b, 4096, 256 << 20);
}

/// Reader over a 64 MiB segment of 100-byte frames, from page cache.
#[divan::bench(sample_count = 10)]
fn full_scan_100b_frames(b: Bencher) {
    scan(b, 100, 64 << 20);
}

/// One 100-byte frame with `Durability::Sync` (lock, tail check, write, fdatasync).
#[divan::bench(sample_count = 200)]
fn synced_append_100b(b: Bencher) {
    let (_t, j) = fresh();
    let payload = [0x5au8; 100];
    b.bench_local(|| j.append(&payload, Durability::Sync).unwrap());
}

/// Baseline: write 116 bytes at the end of a plain file and `fdatasync` it, in the same file
/// system.
#[divan::bench(sample_count = 200)]
fn fsync_baseline_116b(b: Bencher) {
    let t = tempfile::tempdir_in(bench_root()).unwrap();
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(t.path().join("plain"))
        .unwrap();
    let buf = [0x5au8; 116];
    let mut off = 0u64;
    b.bench_local(|| {
        f.write_all_at(&buf, off).unwrap();
        off += buf.len() as u64;
        f.sync_data().unwrap();
    });
}
