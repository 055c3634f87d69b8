//! The kill -9 loop: a child process appends frames (singles, batches, large frames, and now and
//! then a roll; every other unit synced) and reports each one on stdout after `append` returns; the parent SIGKILLs it at random
//! moments, reopens, and checks that every reported frame is there, that frames form a gapless
//! prefix with intact payloads, and that batches are whole. `OVJ_KILL_ITERS` sets the count.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use ov_journal::{Durability, FrameKind, Journal};

use crate::common::{capture_logs, child as child_cmd, filler, logged, patient, Rng};

/// A fixed pattern the payloads are cut from (cheap to build, even in a debug build).
fn pattern() -> &'static [u8] {
    static P: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        let block = filler(1, 2, 4096);
        block.iter().copied().cycle().take(1 << 20).collect()
    })
}

fn payload(seq: u64, idx: u8, n: u8) -> Vec<u8> {
    let mut p = seq.to_le_bytes().to_vec();
    p.extend([idx, n]);
    // Every fifth frame is large, so that kills often land in the middle of a write.
    let len = if seq.is_multiple_of(5) {
        256_000 + ((seq * 7919) % 768_000) as usize
    } else {
        ((seq * 7919) % 30_000) as usize
    };
    p.extend_from_slice(&pattern()[..len]);
    p
}

/// Checks a journal written by `child` from its latest snapshot (or the start, with `full`);
/// returns the number of records.
fn verify(dir: &std::path::Path, full: bool) -> u64 {
    let j = Journal::open(dir, patient()).unwrap();
    let r = j.reader().unwrap();
    let snap = r.latest_snapshot().filter(|_| !full);
    let mut next = snap.map_or(0, |s| u64::from_le_bytes(s.payload.try_into().unwrap()));
    let from = snap.map_or(r.start(), |s| s.next_position());
    let mut batch_left = 0u8;
    for f in r.frames_from(from) {
        let f = f.unwrap();
        let p = f.payload;
        if f.kind == FrameKind::Snapshot {
            assert_eq!(batch_left, 0, "snapshot inside a batch");
            assert_eq!(
                p,
                next.to_le_bytes(),
                "snapshot does not match the frames before it"
            );
            continue;
        }
        let seq = u64::from_le_bytes(p[..8].try_into().unwrap());
        assert_eq!(seq, next, "gap or reorder");
        let (idx, n) = (p[8], p[9]);
        assert!(p == payload(seq, idx, n), "payload of {seq} damaged");
        if batch_left == 0 {
            assert_eq!(idx, 0, "batch {seq} starts in the middle");
            batch_left = n;
        }
        batch_left -= 1;
        next += 1;
    }
    assert_eq!(batch_left, 0, "incomplete batch at the end");
    next
}

/// The child's loop; never returns (it is killed).
pub fn child() {
    let dir = std::path::PathBuf::from(std::env::var_os("OVJ_CHILD_DIR").unwrap());
    let j = Journal::open(&dir, patient()).unwrap();
    // Resume after the latest snapshot (its payload is the next sequence number).
    let r = j.reader().unwrap();
    let snap = r.latest_snapshot();
    let base = snap.map_or(0, |s| u64::from_le_bytes(s.payload.try_into().unwrap()));
    let from = snap.map_or(r.start(), |s| s.next_position());
    let mut seq = base + r.frames_from(from).count() as u64;
    drop(r);
    let mut unit = 0u64;
    loop {
        unit += 1;
        if unit.is_multiple_of(25) {
            j.roll_with_snapshot(&seq.to_le_bytes()).unwrap();
        }
        let n: u8 = if unit % 4 == 3 { 3 } else { 1 };
        let ps: Vec<Vec<u8>> = (0..n).map(|i| payload(seq + u64::from(i), i, n)).collect();
        let refs: Vec<&[u8]> = ps.iter().map(Vec::as_slice).collect();
        // Every other unit is buffered (not reported); a later synced one implies it is kept.
        let sync = unit.is_multiple_of(2);
        let d = if sync {
            Durability::Sync
        } else {
            Durability::Buffered
        };
        j.append_batch(&refs, d).unwrap();
        seq += u64::from(n);
        if sync {
            println!("synced {}", seq - 1);
        }
    }
}

#[test]
fn kill9_loop_loses_no_synced_frame() {
    let iters: u32 = std::env::var("OVJ_KILL_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    capture_logs();
    let (mut rng, seed) = Rng::from_time();
    eprintln!("kill9 seed {seed}");
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("j");
    let mut reported_total = 0u64;
    for it in 0..iters {
        let mut c = child_cmd("kill9", &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = c.stdout.take().unwrap();
        let lines = std::thread::spawn(move || {
            BufReader::new(out)
                .lines()
                .map_while(Result::ok)
                .filter_map(|l| {
                    l.strip_prefix("synced ")
                        .and_then(|n| n.parse::<u64>().ok())
                })
                .max()
        });
        std::thread::sleep(Duration::from_millis(10 + rng.below(150)));
        c.kill().unwrap();
        c.wait().unwrap();
        let max_reported = lines.join().unwrap();
        let n = verify(&dir, false);
        if let Some(m) = max_reported {
            assert!(
                m < n,
                "iteration {it} (seed {seed}): frame {m} reported synced, only {n} present"
            );
            reported_total += 1;
        }
    }
    assert!(reported_total > 0, "no child ever reported a synced frame");
    verify(&dir, true);
    // How many kills tore a frame (informational: it depends on timing).
    eprintln!(
        "kill9: {} torn tails repaired in {iters} kills",
        logged("torn tail").len()
    );
}
