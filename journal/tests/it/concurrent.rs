//! N processes append to one journal at once (one of them also rolls segments): every frame is
//! present exactly once, each process's frames are in its order, batches are contiguous, and no
//! frame is interleaved with another (each payload verifies), and readers running meanwhile never
//! see a partial frame. `OVJ_PROCS`/`OVJ_UNITS` scale it.

use std::collections::HashMap;

use ov_journal::{Durability, FrameKind, Journal};

use crate::common::{child as child_cmd, collect, filler, patient};

fn payload(id: u64, seq: u64, idx: u8, n: u8) -> Vec<u8> {
    let mut p = id.to_le_bytes().to_vec();
    p.extend(seq.to_le_bytes());
    p.extend([idx, n]);
    p.extend(filler(id, seq, ((seq * 131 + id * 17) % 3000) as usize));
    p
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A child: appends `OVJ_UNITS` units; child 0 rolls every 40 units.
pub fn child() {
    let dir = std::path::PathBuf::from(std::env::var_os("OVJ_CHILD_DIR").unwrap());
    let id = env_num("OVJ_CHILD_ID", 0);
    let units = env_num("OVJ_UNITS", 400);
    let j = Journal::open(&dir, patient()).unwrap();
    let mut seq = 0;
    for u in 0..units {
        if id == 0 && u % 40 == 39 {
            j.roll_with_snapshot(format!("snap {u}").as_bytes())
                .unwrap();
        }
        let n: u8 = if u.is_multiple_of(3) { 3 } else { 1 };
        let ps: Vec<Vec<u8>> = (0..n)
            .map(|i| payload(id, seq + u64::from(i), i, n))
            .collect();
        let refs: Vec<&[u8]> = ps.iter().map(Vec::as_slice).collect();
        let d = if u.is_multiple_of(10) {
            Durability::Sync
        } else {
            Durability::Buffered
        };
        j.append_batch(&refs, d).unwrap();
        seq += u64::from(n);
    }
}

#[test]
fn processes_appending_concurrently_never_interleave() {
    let procs = env_num("OVJ_PROCS", 4);
    let units = env_num("OVJ_UNITS", 400);
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("j");
    Journal::open(&dir, patient()).unwrap();
    let children: Vec<_> = (0..procs)
        .map(|id| {
            child_cmd("append", &dir)
                .env("OVJ_CHILD_ID", id.to_string())
                .env("OVJ_UNITS", units.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    // Meanwhile, readers in this process see only whole frames: never an error from a tail
    // being written, and never fewer frames than the reader before.
    let watcher = Journal::open(&dir, patient()).unwrap();
    let (mut seen, mut views) = (0usize, 0u32);
    let mut children = children;
    while children.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
        let (frames, err) = collect(&watcher.reader().unwrap());
        assert!(err.is_none(), "reader during appends: {err:?}");
        assert!(
            frames.len() >= seen,
            "a reader saw fewer frames than an earlier one"
        );
        seen = frames.len();
        views += 1;
    }
    eprintln!("concurrent: {views} reader views during the appends");
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a child failed");
    }
    let j = Journal::open(&dir, patient()).unwrap();
    let r = j.reader().unwrap();
    let (frames, err) = collect(&r);
    assert!(err.is_none(), "{err:?}");
    assert!(r.segments().count() > 1, "child 0 rolled");
    let mut next: HashMap<u64, u64> = HashMap::new();
    let mut open_batch: Option<(u64, u8, u8)> = None; // (id, next idx, n)
    for (kind, p) in frames {
        if kind == FrameKind::Snapshot {
            assert!(open_batch.is_none(), "snapshot inside a batch");
            continue;
        }
        let id = u64::from_le_bytes(p[..8].try_into().unwrap());
        let seq = u64::from_le_bytes(p[8..16].try_into().unwrap());
        let (idx, n) = (p[16], p[17]);
        assert_eq!(
            p,
            payload(id, seq, idx, n),
            "frame {id}/{seq} damaged or interleaved"
        );
        let e = next.entry(id).or_insert(0);
        assert_eq!(seq, *e, "process {id}: frame out of order or duplicated");
        *e += 1;
        match open_batch {
            Some((bid, bidx, bn)) => {
                assert_eq!((id, idx, n), (bid, bidx, bn), "batch of {bid} interrupted");
            }
            None => assert_eq!(idx, 0, "batch frame without its start"),
        }
        open_batch = if idx + 1 < n {
            Some((id, idx + 1, n))
        } else {
            None
        };
    }
    assert!(open_batch.is_none());
    let per_proc = (0..units)
        .map(|u| if u.is_multiple_of(3) { 3 } else { 1 })
        .sum::<u64>();
    for id in 0..procs {
        assert_eq!(
            next.get(&id).copied(),
            Some(per_proc),
            "process {id} frames missing"
        );
    }
}
