//! Benchmarks of the rollout reader and the capture plan.
//!
//! Input: the 225 MB benchmark rollout (240 turns, 3 calls per tool-using turn),
//! generated on first use into `$CARGO_TARGET_DIR/bench-data/big.jsonl` (or the path in
//! `OV_BENCH_ROLLOUT`). Before the divan benches, the binary re-runs itself once in a
//! child process that plans the file cold and prints the message count, wall time and
//! peak RSS (`getrusage` `ru_maxrss` of that child alone).
//!
//! ```sh
//! cargo bench -p ov-engine --no-default-features --bench plan
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use ov_engine::plan::first_capture;
use ov_engine::transcript::zcode::{parse_line, read_chunk};

const CHILD_ENV: &str = "OV_PLAN_BENCH_CHILD";

fn big_path() -> PathBuf {
    if let Some(p) = std::env::var_os("OV_BENCH_ROLLOUT") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("bench-data/big.jsonl")
}

fn ensure_big(path: &Path) {
    if path.exists() {
        return;
    }
    eprintln!("generating {} (225 MB)…", path.display());
    if let Err(e) = ov_testdata::write_big(path, 225_000_000) {
        eprintln!("could not generate {}: {e}", path.display());
        std::process::exit(1);
    }
}

fn max_rss_kib() -> i64 {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru.ru_maxrss
    }
}

/// The child: one cold first plan, then its figures on stdout.
fn child(path: &Path) {
    let before = max_rss_kib();
    let t = Instant::now();
    let plan = first_capture(path);
    let secs = t.elapsed().as_secs_f64();
    match plan {
        Ok(p) => println!(
            "first plan: {} messages, {secs:.3} s, peak RSS {} KiB (process start: {before} KiB)",
            p.len(),
            max_rss_kib()
        ),
        Err(e) => println!("first plan failed: {e}"),
    }
}

fn main() {
    let path = big_path();
    if std::env::var_os(CHILD_ENV).is_some() {
        child(&path);
        return;
    }
    ensure_big(&path);
    if let Ok(exe) = std::env::current_exe() {
        match std::process::Command::new(exe).env(CHILD_ENV, "1").output() {
            Ok(out) => print!("{}", String::from_utf8_lossy(&out.stdout)),
            Err(e) => eprintln!("could not run the RSS child: {e}"),
        }
    }
    divan::main();
}

/// A first plan of the whole 225 MB rollout.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn first_plan_225mb(b: divan::Bencher) {
    let path = big_path();
    b.bench(|| first_capture(&path).map(|p| p.len()).unwrap_or(0));
}

/// A resume read when nothing is new: only the bytes past the saved offset are read.
#[divan::bench(sample_count = 200)]
fn resume_nothing_new(b: divan::Bencher) {
    let path = big_path();
    let Ok(Some(first)) = read_chunk(&path, None) else {
        return;
    };
    let resume = Some((first.identity, first.end));
    b.bench(|| read_chunk(&path, resume).map(|c| c.map(|c| c.end)));
}

/// Parsing the longest line of the file (the last call: the whole conversation).
#[divan::bench(sample_count = 20)]
fn parse_last_line(b: divan::Bencher) {
    let path = big_path();
    let Ok(bytes) = std::fs::read(&path) else {
        return;
    };
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    let start = body.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
    let line = body.get(start..).unwrap_or_default().to_vec();
    drop(bytes);
    b.counter(divan::counter::BytesCount::new(line.len()))
        .bench(|| parse_line(&line).map(|f| f.map(|f| f.attempt)));
}
