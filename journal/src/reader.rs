//! Reading: memory-mapped segments and the frame iterator.
//!
//! A [`Reader`] is a snapshot in time: each segment is mapped and its valid end fixed while the
//! shared `LOCK` is held; afterwards only bytes below those ends are touched (see `map.rs`).
//! Frames are decoded and verified lazily, as they are iterated.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{CorruptionKind, Error, IoContext, Result};
use crate::format::{decode_frame, DecodeError, Decoded, FLAG_BEGIN, FLAG_END, SEGMENT_HEADER_LEN};
use crate::journal::LOCK_FILE;
use crate::lock::{lock_bounded, Held};
use crate::map::Map;
use crate::recovery::scan;
use crate::segment::{self, Header};
use crate::{Frame, FrameKind, Position};

#[derive(Debug)]
struct Seg {
    id: u64,
    path: PathBuf,
    map: Map,
    /// Bytes below this are read; nothing at or past it is ever touched.
    valid_end: u64,
    /// Whether this is the newest segment (its tail may be torn).
    active: bool,
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
            let header = segment::check_header_bytes(map.bytes(), &path, id)?;
            let len = map.bytes().len() as u64;
            let valid_end = match (header, is_active) {
                (Header::Torn, true) => continue,
                (Header::Torn, false) => {
                    return Err(Error::Corruption {
                        path,
                        offset: 0,
                        kind: CorruptionKind::SegmentHeaderTruncated,
                    })
                }
                (Header::Ok, false) => len,
                (Header::Ok, true) => match active {
                    Some((a, end)) if a == id => end.min(len),
                    // Corruption is left for the iterator to report at its offset.
                    _ => scan(map.bytes(), SEGMENT_HEADER_LEN as usize)
                        .map(|s| s.valid_end as u64)
                        .unwrap_or(len),
                },
            };
            segments.push(Seg {
                id,
                path,
                map,
                valid_end,
                active: is_active,
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
        self.segments.iter().rev().find_map(|s| {
            let d = decode_frame(s.bytes(), SEGMENT_HEADER_LEN as usize).ok()?;
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

    fn corruption(&self, offset: usize, err: DecodeError) -> Error {
        let kind = match err {
            DecodeError::Bad(k) => k,
            DecodeError::Truncated if self.active => CorruptionKind::IncompleteBatch,
            DecodeError::Truncated => CorruptionKind::TruncatedSealedSegment,
        };
        Error::Corruption {
            path: self.path.clone(),
            offset: offset as u64,
            kind,
        }
    }
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
}

impl<'r> Frames<'r> {
    fn fail(&mut self, e: Error) -> Option<Result<Frame<'r>>> {
        self.idx = usize::MAX;
        Some(Err(e))
    }

    /// Verifies that the batch containing the frame at `off` is complete before any of it is
    /// yielded.
    fn check_batch(seg: &Seg, first: &Decoded<'_>) -> std::result::Result<u64, Error> {
        let data = seg.bytes();
        let mut at = first.next;
        loop {
            let d = decode_frame(data, at).map_err(|e| match e {
                DecodeError::Truncated if at >= data.len() => Error::Corruption {
                    path: seg.path.clone(),
                    offset: at as u64,
                    kind: if seg.active {
                        CorruptionKind::IncompleteBatch
                    } else {
                        CorruptionKind::TruncatedSealedSegment
                    },
                },
                e => seg.corruption(at, e),
            })?;
            if d.flags & FLAG_BEGIN != 0 {
                return Err(Error::Corruption {
                    path: seg.path.clone(),
                    offset: at as u64,
                    kind: CorruptionKind::IncompleteBatch,
                });
            }
            if d.flags & FLAG_END != 0 {
                return Ok(d.next as u64);
            }
            at = d.next;
        }
    }
}

impl<'r> Iterator for Frames<'r> {
    type Item = Result<Frame<'r>>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.pending_err.take() {
            return self.fail(e);
        }
        loop {
            let seg = self.reader.segments.get(self.idx)?;
            if self.off >= seg.valid_end {
                self.idx += 1;
                self.off = SEGMENT_HEADER_LEN;
                self.checked_until = 0;
                continue;
            }
            let at = usize::try_from(self.off).unwrap_or(usize::MAX);
            let d = match decode_frame(seg.bytes(), at) {
                Ok(d) => d,
                Err(e) => return self.fail(seg.corruption(at, e)),
            };
            let begin = d.flags & FLAG_BEGIN != 0;
            let end = d.flags & FLAG_END != 0;
            if self.off >= self.checked_until && !end {
                if !begin && !self.first {
                    return self.fail(Error::Corruption {
                        path: seg.path.clone(),
                        offset: self.off,
                        kind: CorruptionKind::OrphanBatchFrame,
                    });
                }
                match Self::check_batch(seg, &d) {
                    Ok(until) => self.checked_until = until,
                    Err(e) => return self.fail(e),
                }
            } else if self.off >= self.checked_until && !begin && !self.first {
                return self.fail(Error::Corruption {
                    path: seg.path.clone(),
                    offset: self.off,
                    kind: CorruptionKind::OrphanBatchFrame,
                });
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
            return Some(Ok(frame));
        }
    }
}
