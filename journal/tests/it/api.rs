//! Behaviour of the public API, one property per test.

use std::fs::{self, OpenOptions};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use ov_journal::{
    Durability, Error, FileLock, FrameKind, Journal, Options, Position, Reader, LOCK_FILE,
    MAX_PAYLOAD_LEN, SEGMENT_HEADER_LEN,
};

use crate::common::{collect, golden_copy};

fn tmp_journal() -> (tempfile::TempDir, Journal) {
    let t = tempfile::tempdir().unwrap();
    let j = Journal::open(&t.path().join("j"), crate::common::patient()).unwrap();
    (t, j)
}

fn payloads(r: &Reader) -> Vec<Vec<u8>> {
    let (f, e) = collect(r);
    assert!(e.is_none(), "{e:?}");
    f.into_iter().map(|(_, p)| p).collect()
}

#[test]
fn creates_private_directory_and_files() {
    let (_t, j) = tmp_journal();
    j.append(b"x", Durability::Sync).unwrap();
    let mode = |p: &std::path::Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(j.dir()), 0o700);
    assert_eq!(mode(&j.dir().join(LOCK_FILE)), 0o600);
    assert_eq!(mode(&j.dir().join("0000000000000000.ovj")), 0o600);
    j.roll_with_snapshot(b"s").unwrap();
    assert_eq!(mode(&j.dir().join("0000000000000001.ovj")), 0o600);
}

#[test]
fn missing_journal_without_create_is_not_found() {
    let t = tempfile::tempdir().unwrap();
    let opts = Options {
        create: false,
        ..Options::default()
    };
    assert!(matches!(
        Journal::open(&t.path().join("nope"), opts.clone()),
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        Journal::open(t.path(), opts),
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        Reader::open(&t.path().join("nope"), Duration::ZERO),
        Err(Error::NotFound { .. })
    ));
}

#[test]
fn positions_returned_by_append_are_where_frames_are() {
    let (_t, j) = tmp_journal();
    let p0 = j.append(b"a", Durability::Buffered).unwrap();
    let p1 = j
        .append_batch(&[b"b", b"cc", b""], Durability::Buffered)
        .unwrap();
    let p2 = j.append(b"d", Durability::Sync).unwrap();
    assert_eq!(
        p0,
        Position {
            segment: 0,
            offset: SEGMENT_HEADER_LEN
        }
    );
    assert!(p0 < p1 && p1 < p2);
    let r = j.reader().unwrap();
    let frames: Vec<_> = r.frames().map(Result::unwrap).collect();
    assert_eq!(frames[0].position, p0);
    assert_eq!(frames[1].position, p1);
    assert_eq!(frames[4].position, p2);
    assert_eq!(frames[3].payload, b"");
    assert_eq!(frames[4].next_position(), j.end().unwrap());
    assert_eq!(r.end(), j.end().unwrap());
    let from: Vec<_> = r
        .frames_from(p1)
        .map(|f| f.unwrap().payload.to_vec())
        .collect();
    assert_eq!(
        from,
        vec![b"b".to_vec(), b"cc".to_vec(), vec![], b"d".to_vec()]
    );
    // An empty batch writes nothing.
    assert_eq!(
        j.append_batch(&[], Durability::Sync).unwrap(),
        j.end().unwrap()
    );
}

#[test]
fn reader_is_a_view_at_one_moment() {
    let (_t, j) = tmp_journal();
    j.append(b"1", Durability::Buffered).unwrap();
    let r1 = j.reader().unwrap();
    j.append(b"2", Durability::Buffered).unwrap();
    assert_eq!(payloads(&r1), vec![b"1".to_vec()]);
    assert_eq!(
        payloads(&j.reader().unwrap()),
        vec![b"1".to_vec(), b"2".to_vec()]
    );
}

/// A tail that a writer is still writing (or died writing) is the end for a reader, not an error;
/// the next writer cuts it and appends after the last whole frame.
#[test]
fn reader_ignores_a_half_written_tail() {
    let (_t, j) = tmp_journal();
    j.append(b"whole", Durability::Buffered).unwrap();
    let end = j.end().unwrap();
    let seg = j.dir().join("0000000000000000.ovj");
    // Half of a frame: a valid header announcing 100 bytes, then 10 of them (the frame is
    // appended, then cut back, as a crash during its write leaves it).
    j.append(&[7u8; 100], Durability::Buffered).unwrap();
    let f = OpenOptions::new().write(true).open(&seg).unwrap();
    f.set_len(end.offset + 26).unwrap();
    drop(f);
    let r = Reader::open(j.dir(), Duration::from_secs(5)).unwrap();
    assert_eq!(payloads(&r), vec![b"whole".to_vec()]);
    assert_eq!(r.end(), end);
    assert_eq!(payloads(&j.reader().unwrap()), vec![b"whole".to_vec()]);
    assert_eq!(j.end().unwrap(), end);
    let p = j.append(b"next", Durability::Buffered).unwrap();
    assert_eq!(p, end);
    assert_eq!(
        payloads(&j.reader().unwrap()),
        vec![b"whole".to_vec(), b"next".to_vec()]
    );
}

#[test]
fn oversized_frame_is_refused_before_writing() {
    let (_t, j) = tmp_journal();
    let big = vec![0u8; MAX_PAYLOAD_LEN as usize + 1];
    assert!(matches!(
        j.append(&big, Durability::Buffered),
        Err(Error::FrameTooLarge { .. })
    ));
    assert!(matches!(
        j.append_batch(&[b"ok", &big], Durability::Buffered),
        Err(Error::FrameTooLarge { .. })
    ));
    assert_eq!(payloads(&j.reader().unwrap()), Vec::<Vec<u8>>::new());
}

#[test]
fn lock_wait_is_bounded() {
    let (_t, j) = tmp_journal();
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("k");
    let opts = Options {
        lock_timeout: Duration::from_millis(30),
        ..Options::default()
    };
    let j2 = Journal::open(&dir, opts.clone()).unwrap();
    let held = FileLock::try_exclusive(&dir.join(LOCK_FILE), Duration::ZERO)
        .unwrap()
        .unwrap();
    assert!(matches!(
        j2.append(b"x", Durability::Buffered),
        Err(Error::LockTimeout { .. })
    ));
    assert!(matches!(j2.reader(), Err(Error::LockTimeout { .. })));
    assert!(matches!(j2.end(), Err(Error::LockTimeout { .. })));
    assert!(matches!(
        Journal::open(&dir, opts.clone()),
        Err(Error::LockTimeout { .. })
    ));
    drop(held);
    j2.append(b"x", Durability::Buffered).unwrap();
    // A writer holds the lock: another handle times out, the writer's frames land when dropped.
    let j3 = Journal::open(&dir, opts).unwrap();
    {
        let mut w = j2.writer().unwrap();
        w.append(b"y").unwrap();
        assert!(matches!(
            j3.append(b"z", Durability::Buffered),
            Err(Error::LockTimeout { .. })
        ));
    }
    j3.append(b"z", Durability::Buffered).unwrap();
    assert_eq!(
        payloads(&j3.reader().unwrap()),
        vec![b"x".to_vec(), b"y".to_vec(), b"z".to_vec()]
    );
    drop(j);
}

#[test]
fn writer_buffers_many_frames_and_batches() {
    let (_t, j) = tmp_journal();
    let mut want = Vec::new();
    {
        let mut w = j.writer().unwrap();
        for i in 0..20_000u32 {
            let p = i.to_le_bytes().repeat(1 + (i % 50) as usize);
            let pos = w.append(&p).unwrap();
            assert_eq!(w.end().offset, pos.offset + 16 + p.len() as u64);
            want.push(p);
            if i.is_multiple_of(1000) {
                let b = [b"b1".to_vec(), b"b2".to_vec()];
                w.append_batch(&[&b[0], &b[1]]).unwrap();
                want.extend(b);
            }
        }
        w.sync().unwrap();
        w.append(b"last").unwrap();
        want.push(b"last".to_vec());
    }
    assert_eq!(payloads(&j.reader().unwrap()), want);
}

#[test]
fn roll_snapshot_and_remove_old_segments() {
    let (_t, j) = tmp_journal();
    j.append(b"r0", Durability::Buffered).unwrap();
    let s1 = j.roll_with_snapshot(b"snap1").unwrap();
    assert_eq!(
        s1,
        Position {
            segment: 1,
            offset: SEGMENT_HEADER_LEN
        }
    );
    j.append(b"r1", Durability::Buffered).unwrap();
    {
        let mut w = j.writer().unwrap();
        w.append(b"r2").unwrap();
        let s2 = w.roll_with_snapshot(b"snap2").unwrap();
        assert_eq!(s2.segment, 2);
        w.append(b"r3").unwrap();
    }
    let r = j.reader().unwrap();
    let snap = r.latest_snapshot().unwrap();
    assert_eq!(
        (snap.kind, snap.payload),
        (FrameKind::Snapshot, &b"snap2"[..])
    );
    let after: Vec<_> = r
        .frames_from(snap.next_position())
        .map(|f| f.unwrap().payload.to_vec())
        .collect();
    assert_eq!(after, vec![b"r3".to_vec()]);
    assert_eq!(payloads(&r).len(), 6);

    assert_eq!(j.remove_segments_before(2).unwrap(), 2);
    // The old view still reads the removed segments; a new one starts at segment 2.
    assert_eq!(payloads(&r).len(), 6);
    let r2 = j.reader().unwrap();
    assert_eq!(r2.start().segment, 2);
    assert!(matches!(
        r2.frames_from(Position {
            segment: 0,
            offset: 0
        })
        .next(),
        Some(Err(Error::PositionRemoved { .. }))
    ));
    // The active segment is never removed.
    assert_eq!(j.remove_segments_before(u64::MAX).unwrap(), 0);
    drop(j);
    let j = Journal::open(r2.dir(), Options::default()).unwrap();
    assert_eq!(
        payloads(&j.reader().unwrap()),
        vec![b"snap2".to_vec(), b"r3".to_vec()]
    );
}

/// Another handle (as another process would) rolls and removes segments; this handle follows.
#[test]
fn handles_follow_rolls_made_elsewhere() {
    let (_t, a) = tmp_journal();
    let b = Journal::open(a.dir(), Options::default()).unwrap();
    a.append(b"a0", Durability::Buffered).unwrap();
    b.roll_with_snapshot(b"s1").unwrap();
    b.roll_with_snapshot(b"s2").unwrap();
    b.remove_segments_before(2).unwrap();
    let p = a.append(b"a1", Durability::Buffered).unwrap();
    assert_eq!(p.segment, 2);
    assert_eq!(
        payloads(&b.reader().unwrap()),
        vec![b"s2".to_vec(), b"a1".to_vec()]
    );
}

#[test]
fn reopening_many_times_gives_the_same_result() {
    let (_t, d) = golden_copy("torn");
    let first = crate::common::open_and_read(&d, Options::default()).unwrap();
    for _ in 0..10 {
        let again = crate::common::open_and_read(&d, Options::default()).unwrap();
        assert_eq!(again.0, first.0);
        assert!(again.1.is_none());
    }
}

#[test]
fn leftover_roll_temp_file_is_removed() {
    let (_t, j) = tmp_journal();
    j.append(b"x", Durability::Buffered).unwrap();
    let tmp = j.dir().join("0000000000000001.ovj.tmp");
    fs::write(&tmp, b"partial").unwrap();
    let dir = j.dir().to_path_buf();
    drop(j);
    let j = Journal::open(&dir, Options::default()).unwrap();
    assert!(!tmp.exists());
    assert_eq!(payloads(&j.reader().unwrap()), vec![b"x".to_vec()]);
}

#[test]
fn threads_share_one_handle() {
    let (_t, j) = tmp_journal();
    std::thread::scope(|s| {
        for t in 0..4u8 {
            let j = &j;
            s.spawn(move || {
                for i in 0..200u8 {
                    j.append_batch(&[&[t, i, 0], &[t, i, 1]], Durability::Buffered)
                        .unwrap();
                }
            });
        }
    });
    let all = payloads(&j.reader().unwrap());
    assert_eq!(all.len(), 4 * 200 * 2);
    for pair in all.chunks(2) {
        assert_eq!(
            (pair[0][0], pair[0][1], pair[0][2]),
            (pair[1][0], pair[1][1], 0)
        );
        assert_eq!(pair[1][2], 1);
    }
}

#[test]
fn errors_name_path_and_offset() {
    let e = Error::Corruption {
        path: "/j/0000000000000000.ovj".into(),
        offset: 78,
        kind: ov_journal::CorruptionKind::FrameChecksum,
    };
    assert_eq!(
        e.to_string(),
        "corruption in /j/0000000000000000.ovj at offset 78: frame checksum mismatch"
    );
}

#[test]
fn handles_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Journal>();
    check::<Reader>();
    check::<FileLock>();
    check::<Error>();
}

#[test]
fn reader_progress_counts_bytes_across_segments() {
    let (_t, j) = tmp_journal();
    j.append(b"first", Durability::Buffered).unwrap();
    j.roll_with_snapshot(b"snap").unwrap();
    j.append(b"second", Durability::Buffered).unwrap();
    let r = j.reader().unwrap();
    let sizes: Vec<u64> = r.segments().map(|s| s.valid_end).collect();
    assert_eq!(r.valid_bytes(), sizes.iter().sum::<u64>());
    assert_eq!(r.bytes_before(r.start()), SEGMENT_HEADER_LEN);
    assert_eq!(r.bytes_before(r.end()), r.valid_bytes());
    let mut last = 0;
    for f in r.frames() {
        let done = r.bytes_before(f.unwrap().next_position());
        assert!(done > last, "progress moves forward");
        last = done;
    }
    assert_eq!(last, r.valid_bytes());
}
