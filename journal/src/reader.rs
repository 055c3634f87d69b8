//! Reading: memory-mapped segments and the frame iterator.
//!
//! A [`Reader`] is a snapshot in time: each segment is mapped and its valid end fixed while the
//! shared `LOCK` is held; afterwards only bytes below those ends are touched (see `map.rs`).
//! Frames are decoded and verified lazily, as they are iterated.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{CorruptionKind, Error, IoContext, Result};
use crate::format::{
    decode_frame, decode_header, salt_of_damaged_header, DecodeError, Decoded, Salt, FLAG_BEGIN,
    FLAG_END, SEGMENT_HEADER_LEN,
};
use crate::journal::LOCK_FILE;
use crate::lock::{lock_bounded, Held};
use crate::map::Map;
use crate::recovery::{next_unit, scan};
use crate::segment::{self, Header};
use crate::{Damage, Entry, Frame, FrameKind, Position};

#[derive(Debug)]
struct Seg {
    id: u64,
    path: PathBuf,
    map: Map,
    /// Bytes below this are read; nothing at or past it is ever touched.
    valid_end: u64,
    /// Whether this is the newest segment (its tail may be torn).
    active: bool,
    /// The segment header does not verify (a damaged range `0..32`).
    header_damage: Option<CorruptionKind>,
    /// The salt its frames are keyed with (from its header; a guess when the header is damaged).
    salt: Salt,
}

/// Facts about one segment of a [`Reader`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentInfo {
    /// The segment id.
    pub id: u64,
    /// Its file.
    pub path: PathBuf,
    /// The end of the bytes this reader reads in it.
    pub valid_end: u64,
}

/// A read-only, memory-mapped view of a journal at one moment.
#[derive(Debug)]
pub struct Reader {
    dir: PathBuf,
    segments: Vec<Seg>,
}

impl Reader {
    /// Opens a read-only view of the journal in `dir` without a [`crate::Journal`]: nothing is
    /// created or repaired (a torn tail is simply where the view ends). Waits at most
    /// `lock_timeout` for the shared lock.
    pub fn open(dir: &Path, lock_timeout: Duration) -> Result<Reader> {
        if !dir.is_dir() {
            return Err(Error::NotFound {
                path: dir.to_path_buf(),
            });
        }
        let lock_path = dir.join(LOCK_FILE);
        let lock_file = match crate::lock::open_lock_file(&lock_path) {
            Ok(f) => f,
            // A read-only copy of a journal: a read-only descriptor can be locked too.
            Err(_) => File::open(&lock_path).at(&lock_path)?,
        };
        if !lock_bounded(&lock_file, false, lock_timeout).at(&lock_path)? {
            return Err(Error::LockTimeout {
                path: lock_path,
                waited: lock_timeout,
            });
        }
        let _held = Held(&lock_file);
        Reader::load(dir, None)
    }

    /// Builds the view; the caller holds the `LOCK`. `active` is a known `(segment, valid end)`.
    pub(crate) fn load(dir: &Path, active: Option<(u64, u64)>) -> Result<Reader> {
        let ids = segment::list(dir)?;
        let mut segments = Vec::with_capacity(ids.len());
        let newest = ids.last().copied();
        for id in ids {
            let path = segment::path(dir, id);
            let file = File::open(&path).at(&path)?;
            let map = Map::new(&file, &path)?;
            let is_active = Some(id) == newest;
            let len = map.bytes().len() as u64;
            let header = match segment::check_header_bytes(map.bytes(), &path, id) {
                Ok(h) => Ok(h),
                Err(Error::Corruption { kind, .. }) => Err(kind),
                Err(e) => return Err(e),
            };
            let (valid_end, header_damage, salt) = match (header, is_active) {
                (Ok(Header::Torn), true) => continue,
                (Ok(Header::Torn), false) => (
                    len,
                    Some(CorruptionKind::SegmentHeaderTruncated),
                    Salt::NONE,
                ),
                (Err(kind), _) => (len, Some(kind), salt_of_damaged_header(map.bytes())),
                (Ok(Header::Ok(h)), false) => (len, None, h.salt),
                (Ok(Header::Ok(h)), true) => match active {
                    Some((a, end)) if a == id => (end.min(len), None, h.salt),
                    // Damage is left for the iterator to report at its offset.
                    _ => (
                        scan(map.bytes(), SEGMENT_HEADER_LEN as usize, h.salt).valid_end as u64,
                        None,
                        h.salt,
                    ),
                },
            };
            segments.push(Seg {
                id,
                path,
                map,
                valid_end,
                active: is_active,
                header_damage,
                salt,
            });
        }
        Ok(Reader {
            dir: dir.to_path_buf(),
            segments,
        })
    }

    /// The journal directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The segments in this view, oldest first.
    pub fn segments(&self) -> impl Iterator<Item = SegmentInfo> + '_ {
        self.segments.iter().map(|s| SegmentInfo {
            id: s.id,
            path: s.path.clone(),
            valid_end: s.valid_end,
        })
    }

    /// The position of the first frame of the oldest segment.
    pub fn start(&self) -> Position {
        Position {
            segment: self.segments.first().map_or(0, |s| s.id),
            offset: SEGMENT_HEADER_LEN,
        }
    }

    /// The position after the last valid frame.
    pub fn end(&self) -> Position {
        self.segments.last().map_or(self.start(), |s| Position {
            segment: s.id,
            offset: s.valid_end,
        })
    }

    /// The bytes this view reads, over all its segments (segment headers included): the total
    /// of a progress count that [`Reader::bytes_before`] advances.
    pub fn valid_bytes(&self) -> u64 {
        self.segments.iter().map(|s| s.valid_end).sum()
    }

    /// The bytes of this view that come before `pos` (segment headers included): how far a walk
    /// of the frames has come when it reaches `pos`. A position past the view counts as its end.
    pub fn bytes_before(&self, pos: Position) -> u64 {
        self.segments
            .iter()
            .take_while(|s| s.id <= pos.segment)
            .map(|s| {
                if s.id == pos.segment {
                    pos.offset.min(s.valid_end)
                } else {
                    s.valid_end
                }
            })
            .sum()
    }

    /// The newest snapshot: the first frame of the newest segment that starts with one.
    pub fn latest_snapshot(&self) -> Option<Frame<'_>> {
        self.snapshots().next()
    }

    /// Every snapshot that verifies, newest first (the first frame of each segment that starts
    /// with one). A reader that cannot use the newest falls back to the next.
    pub fn snapshots(&self) -> impl Iterator<Item = Frame<'_>> + '_ {
        self.segments.iter().rev().filter_map(|s| {
            let d = decode_frame(s.bytes(), SEGMENT_HEADER_LEN as usize, s.salt).ok()?;
            (d.kind == FrameKind::Snapshot
                && d.flags == FLAG_BEGIN | FLAG_END
                && d.next as u64 <= s.valid_end)
                .then_some(Frame {
                    position: Position {
                        segment: s.id,
                        offset: SEGMENT_HEADER_LEN,
                    },
                    kind: d.kind,
                    payload: d.payload,
                })
        })
    }

    /// Every damaged range in this view, in journal order (reads every segment).
    pub fn damage(&self) -> Vec<Damage> {
        self.entries_from(self.start())
            .filter_map(|e| match e {
                Ok(Entry::Damage(d)) => Some(d),
                _ => None,
            })
            .collect()
    }

    /// Every frame and damaged range from the oldest segment on (see [`Reader::entries_from`]).
    pub fn entries(&self) -> Entries<'_> {
        self.entries_from(self.start())
    }

    /// Frames at or after `pos`, resynchronising after damage: a range that does not verify is
    /// yielded as one [`Entry::Damage`] (whole units: a batch with a damaged frame is damaged as a
    /// whole), and reading goes on with the next unit that verifies. The only error is
    /// [`Error::PositionRemoved`].
    pub fn entries_from(&self, pos: Position) -> Entries<'_> {
        let mut f = self.frames_from(pos);
        f.resync = true;
        Entries(f)
    }

    /// Every frame from the oldest segment on.
    pub fn frames(&self) -> Frames<'_> {
        self.frames_from(self.start())
    }

    /// Frames at or after `pos`, across segments. `pos` must be a frame position, an end position,
    /// or `offset` 0 (the segment's first frame). A position in a removed segment yields
    /// [`Error::PositionRemoved`]. The iterator stops after the first error.
    pub fn frames_from(&self, pos: Position) -> Frames<'_> {
        let idx = self.segments.partition_point(|s| s.id < pos.segment);
        let mut f = Frames {
            reader: self,
            idx,
            off: SEGMENT_HEADER_LEN,
            checked_until: 0,
            first: true,
            pending_err: None,
            resync: false,
            header_reported: false,
        };
        match self.segments.first() {
            Some(s) if pos.segment < s.id => {
                f.pending_err = Some(Error::PositionRemoved {
                    path: self.dir.clone(),
                    position: pos,
                });
            }
            _ => {}
        }
        if self.segments.get(idx).is_some_and(|s| s.id == pos.segment) {
            f.off = pos.offset.max(SEGMENT_HEADER_LEN);
        }
        f
    }
}

impl Seg {
    fn bytes(&self) -> &[u8] {
        let end = usize::try_from(self.valid_end).unwrap_or(usize::MAX);
        self.map.bytes().get(..end).unwrap_or_default()
    }

    fn kind_of(&self, err: DecodeError) -> CorruptionKind {
        match err {
            DecodeError::Bad(k) => k,
            DecodeError::Truncated if self.active => CorruptionKind::IncompleteBatch,
            DecodeError::Truncated => CorruptionKind::TruncatedSealedSegment,
        }
    }
}

/// Bad bytes met while iterating: the unit they belong to and where they are.
struct Bad {
    /// Start of the damaged unit.
    unit: u64,
    /// Offset of the frame that does not verify.
    at: usize,
    kind: CorruptionKind,
}

/// Iterator over frames of a [`Reader`]; see [`Reader::frames_from`].
#[derive(Debug)]
pub struct Frames<'r> {
    reader: &'r Reader,
    idx: usize,
    off: u64,
    /// Frames below this offset (in the current segment) belong to a verified whole batch.
    checked_until: u64,
    first: bool,
    pending_err: Option<Error>,
    /// Skip damage (reported as [`Entry::Damage`]) instead of stopping at it.
    resync: bool,
    /// The current segment's damaged header was reported.
    header_reported: bool,
}

/// Iterator over frames and damaged ranges of a [`Reader`]; see [`Reader::entries_from`].
#[derive(Debug)]
pub struct Entries<'r>(Frames<'r>);

impl<'r> Iterator for Entries<'r> {
    type Item = Result<Entry<'r>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_entry()
    }
}

impl<'r> Frames<'r> {
    fn fail(&mut self, e: Error) -> Option<Result<Entry<'r>>> {
        self.idx = usize::MAX;
        Some(Err(e))
    }

    /// Verifies that the batch starting with `first` is complete before any of it is yielded;
    /// returns its end.
    fn check_batch(
        seg: &Seg,
        first: &Decoded<'_>,
    ) -> std::result::Result<u64, (usize, CorruptionKind)> {
        let data = seg.bytes();
        let mut at = first.next;
        loop {
            let d = decode_frame(data, at, seg.salt).map_err(|e| (at, seg.kind_of(e)))?;
            if d.flags & FLAG_BEGIN != 0 {
                return Err((at, CorruptionKind::IncompleteBatch));
            }
            if d.flags & FLAG_END != 0 {
                return Ok(d.next as u64);
            }
            at = d.next;
        }
    }

    /// The bad range `bad` as an error, or (resynchronising) as a damaged range up to the next
    /// unit that verifies.
    fn damaged(&mut self, bad: Bad) -> Option<Result<Entry<'r>>> {
        let seg = self.reader.segments.get(self.idx)?;
        if !self.resync {
            return self.fail(Error::Corruption {
                path: seg.path.clone(),
                offset: bad.at as u64,
                kind: bad.kind,
            });
        }
        let data = seg.bytes();
        let search_from = match decode_header(data, bad.at, seg.salt) {
            // A header that verifies gives a length that can be trusted: skip its payload.
            Ok(h) if h.next > bad.at && bad.at as u64 >= bad.unit => h.next,
            _ => bad.at.saturating_add(1),
        };
        let resume = next_unit(data, search_from, seg.salt).map_or(seg.valid_end, |p| p as u64);
        self.off = resume;
        self.checked_until = 0;
        self.first = false;
        Some(Ok(Entry::Damage(Damage {
            path: seg.path.clone(),
            segment: seg.id,
            offset: bad.unit,
            len: resume.saturating_sub(bad.unit),
            kind: bad.kind,
        })))
    }

    fn next_entry(&mut self) -> Option<Result<Entry<'r>>> {
        if let Some(e) = self.pending_err.take() {
            return self.fail(e);
        }
        loop {
            let seg = self.reader.segments.get(self.idx)?;
            if let Some(kind) = seg
                .header_damage
                .filter(|_| !self.header_reported && self.off <= SEGMENT_HEADER_LEN)
            {
                let (path, id) = (seg.path.clone(), seg.id);
                self.header_reported = true;
                if !self.resync {
                    return self.fail(Error::Corruption {
                        path,
                        offset: 0,
                        kind,
                    });
                }
                // The header has a fixed size: frames still start after it.
                self.off = self.off.max(SEGMENT_HEADER_LEN);
                return Some(Ok(Entry::Damage(Damage {
                    path,
                    segment: id,
                    offset: 0,
                    len: SEGMENT_HEADER_LEN.min(seg.map.bytes().len() as u64),
                    kind,
                })));
            }
            if self.off >= seg.valid_end {
                self.idx += 1;
                self.off = SEGMENT_HEADER_LEN;
                self.checked_until = 0;
                self.header_reported = false;
                continue;
            }
            let at = usize::try_from(self.off).unwrap_or(usize::MAX);
            let d = match decode_frame(seg.bytes(), at, seg.salt) {
                Ok(d) => d,
                Err(e) => {
                    let kind = seg.kind_of(e);
                    return self.damaged(Bad {
                        unit: self.off,
                        at,
                        kind,
                    });
                }
            };
            let begin = d.flags & FLAG_BEGIN != 0;
            let end = d.flags & FLAG_END != 0;
            if self.off >= self.checked_until && !begin && !self.first {
                return self.damaged(Bad {
                    unit: self.off,
                    at,
                    kind: CorruptionKind::OrphanBatchFrame,
                });
            }
            if self.off >= self.checked_until && !end {
                match Self::check_batch(seg, &d) {
                    Ok(until) => self.checked_until = until,
                    Err((bad_at, kind)) => {
                        return self.damaged(Bad {
                            unit: self.off,
                            at: bad_at,
                            kind,
                        })
                    }
                }
            }
            self.first = false;
            let frame = Frame {
                position: Position {
                    segment: seg.id,
                    offset: self.off,
                },
                kind: d.kind,
                payload: d.payload,
            };
            self.off = d.next as u64;
            return Some(Ok(Entry::Frame(frame)));
        }
    }
}

impl<'r> Iterator for Frames<'r> {
    type Item = Result<Frame<'r>>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_entry()? {
            Ok(Entry::Frame(f)) => Some(Ok(f)),
            Err(e) => Some(Err(e)),
            // Only produced with `resync`, which `Frames` never sets.
            Ok(Entry::Damage(_)) => None,
        }
    }
}
