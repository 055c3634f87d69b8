//! Finding the valid end of a segment: where whole units (single frames or complete batches) stop,
//! which byte ranges before it are damaged, and whether what follows it is a torn tail.
//!
//! # Design
//!
//! A truncation can only ever produce a frame that runs past the end of the data (its header, when
//! complete, still verifies) or a batch without its last frame. Anything else that does not verify
//! is damage. Frames are self-delimiting and checksummed, so after damage the scan
//! *resynchronises*: the next offset where a frame verifies and starts a unit (`BEGIN`) is where
//! whole units resume, and the bytes in between are one damaged range. Damage is never cut.
//!
//! Only damage with nothing valid after it can be a torn tail (garbage or zero fill left by a
//! crash at the very end), and not even then when it cannot come from an interrupted append: a
//! frame whose header verifies as a snapshot (snapshots are synced before their segment becomes
//! visible), or non-zero bytes at the segment's first frame (where a roll put its snapshot).

use crate::error::CorruptionKind;
use crate::format::{
    decode_frame, decode_header, DecodeError, FLAG_BEGIN, FLAG_END, FRAME_HEADER_LEN,
    SEGMENT_HEADER_LEN,
};
use crate::FrameKind;

/// The result of scanning a segment's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    /// End of the last whole unit, or of a damaged range that may not be cut.
    pub valid_end: usize,
    /// What follows `valid_end`, when it is not the end of the data.
    pub torn: Option<TornReason>,
    /// Damaged ranges below `valid_end`, in order.
    pub damage: Vec<DamagedRange>,
}

/// A damaged byte range of a segment: `start..end`, unit-aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DamagedRange {
    /// Where the damaged unit starts.
    pub start: usize,
    /// Where the next whole unit (or the data) starts.
    pub end: usize,
    /// What was wrong first.
    pub kind: CorruptionKind,
}

/// Why the bytes after the valid end are a torn tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TornReason {
    /// A frame runs past the end of the data.
    PartialFrame,
    /// A batch has no last frame.
    PartialBatch,
    /// Bytes that are not a frame, with no valid frame after them.
    Garbage(CorruptionKind),
}

impl std::fmt::Display for TornReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::PartialFrame => f.write_str("partial frame"),
            Self::PartialBatch => f.write_str("incomplete batch"),
            Self::Garbage(k) => write!(f, "unreadable tail ({k})"),
        }
    }
}

/// Scans `data` (a whole segment file) from `from` (a unit boundary) to its end.
///
/// A fixed point: cutting a torn tail at `valid_end` and scanning again finds no torn tail
/// and the same damage. A cut can change what a second look sees (damage followed only by
/// a partial frame has nothing valid after it; a frame inside a damaged range that reached
/// past the cut now runs past the end, like an interrupted append), so the scan is repeated
/// on the bytes before each cut until nothing more is torn. Every round ends strictly
/// earlier, and a clean segment takes one round.
pub(crate) fn scan(data: &[u8], from: usize) -> Scan {
    let mut s = scan_units(data, from);
    let Some(first_reason) = s.torn else {
        return s;
    };
    while s.torn.is_some() && s.valid_end > from {
        let Some(before_cut) = data.get(..s.valid_end) else {
            break;
        };
        let again = scan_units(before_cut, from);
        let more = again.torn.is_some();
        s = again;
        if !more {
            break;
        }
    }
    s.torn = Some(first_reason);
    s
}

/// Damage starting at `start` cannot come from an interrupted append: a frame whose header
/// verifies as a snapshot, or non-zero bytes at the segment's first frame.
fn never_torn(data: &[u8], start: usize) -> bool {
    let snapshot_header = decode_header(data, start).is_ok_and(|h| h.kind == FrameKind::Snapshot);
    let at_first_frame = start as u64 == SEGMENT_HEADER_LEN
        && data.get(start..).is_some_and(|b| b.iter().any(|&x| x != 0));
    snapshot_header || at_first_frame
}

/// [`scan`] before damage that ends in a torn tail is joined to it.
fn scan_units(data: &[u8], from: usize) -> Scan {
    let mut s = Scan {
        valid_end: from,
        torn: None,
        damage: Vec::new(),
    };
    let mut off = from;
    let mut open_batch: Option<usize> = None;
    while off < data.len() {
        let (kind, search_from, snapshot_header) = match decode_frame(data, off) {
            Ok(f) => {
                let begin = f.flags & FLAG_BEGIN != 0;
                match (open_batch, begin) {
                    (Some(start), true) => {
                        // A new unit while a batch is open: that batch lost its end.
                        s.damage.push(DamagedRange {
                            start,
                            end: off,
                            kind: CorruptionKind::IncompleteBatch,
                        });
                        s.valid_end = off;
                        open_batch = None;
                    }
                    (None, false) => {
                        // The rest of a batch whose start is damaged: damaged with it.
                        damaged(&mut s, data, off, f.next, CorruptionKind::OrphanBatchFrame);
                        match next_unit(data, f.next) {
                            Some(p) => {
                                off = p;
                                continue;
                            }
                            None => return s,
                        }
                    }
                    _ => {}
                }
                if begin {
                    open_batch = Some(off);
                }
                if f.flags & FLAG_END != 0 {
                    open_batch = None;
                    s.valid_end = f.next;
                }
                off = f.next;
                continue;
            }
            Err(DecodeError::Truncated) => {
                s.torn = Some(match open_batch {
                    Some(_) => TornReason::PartialBatch,
                    None => TornReason::PartialFrame,
                });
                return s;
            }
            Err(DecodeError::Bad(kind)) => match decode_header(data, off) {
                // The header verified: its length can be trusted to skip the payload.
                Ok(h) => (kind, h.next.min(data.len()), h.kind == FrameKind::Snapshot),
                Err(_) => (kind, off.saturating_add(1), false),
            },
        };
        let start = open_batch.take().unwrap_or(off);
        match next_unit(data, search_from) {
            Some(p) => {
                s.damage.push(DamagedRange {
                    start,
                    end: p,
                    kind,
                });
                s.valid_end = p;
                off = p;
            }
            None => {
                if snapshot_header || never_torn(data, start) {
                    s.damage.push(DamagedRange {
                        start,
                        end: data.len(),
                        kind,
                    });
                    s.valid_end = data.len();
                } else {
                    s.torn = Some(TornReason::Garbage(kind));
                }
                return s;
            }
        }
    }
    if open_batch.is_some() {
        s.torn = Some(TornReason::PartialBatch);
    }
    s
}

/// Records damage from `start` up to the next unit after `search_from` (or the end of the data).
fn damaged(s: &mut Scan, data: &[u8], start: usize, search_from: usize, kind: CorruptionKind) {
    let end = next_unit(data, search_from).unwrap_or(data.len());
    s.damage.push(DamagedRange { start, end, kind });
    s.valid_end = end;
}

/// The first offset at or after `from` where a unit starts: a frame whose header verifies with the
/// `BEGIN` flag, and whose payload verifies too or runs past the end of the data (a torn append).
pub(crate) fn next_unit(data: &[u8], from: usize) -> Option<usize> {
    let last = data.len().checked_sub(FRAME_HEADER_LEN as usize)?;
    (from..=last).find(|&p| {
        // Cheap filters first: kind byte and flags, then the header crc, then the payload crc.
        matches!(data.get(p + 4), Some(1 | 2))
            && data.get(p + 5).is_some_and(|f| f & FLAG_BEGIN != 0)
            && decode_header(data, p).is_ok()
            && !matches!(decode_frame(data, p), Err(DecodeError::Bad(_)))
    })
}

#[cfg(test)]
#[expect(clippy::indexing_slicing, reason = "tests")]
mod tests {
    use super::*;
    use crate::format::encode_frame;

    /// `[header][one][b1 b2 b3][empty]` as a segment; unit ends, absolute offsets.
    fn units() -> (Vec<u8>, Vec<usize>) {
        let h = SEGMENT_HEADER_LEN as usize;
        let mut b = vec![0xAAu8; h];
        let mut ends = vec![h];
        encode_frame(&mut b, FrameKind::Record, FLAG_BEGIN | FLAG_END, b"one");
        ends.push(b.len());
        encode_frame(&mut b, FrameKind::Record, FLAG_BEGIN, b"b1");
        encode_frame(&mut b, FrameKind::Record, 0, b"b2");
        encode_frame(&mut b, FrameKind::Record, FLAG_END, b"b3");
        ends.push(b.len());
        encode_frame(&mut b, FrameKind::Record, FLAG_BEGIN | FLAG_END, b"");
        ends.push(b.len());
        (b, ends)
    }

    const H: usize = SEGMENT_HEADER_LEN as usize;

    #[test]
    fn every_truncation_ends_at_a_unit_boundary() {
        let (b, ends) = units();
        for cut in H..=b.len() {
            let s = scan(&b[..cut], H);
            let expect = *ends.iter().rev().find(|e| **e <= cut).unwrap();
            assert_eq!(s.valid_end, expect, "cut {cut}");
            assert_eq!(s.torn.is_none(), ends.contains(&cut), "cut {cut}");
            assert!(s.damage.is_empty(), "cut {cut}");
        }
    }

    #[test]
    fn damage_before_valid_data_is_kept_and_skipped_and_at_the_end_is_torn() {
        let (mut b, ends) = units();
        let last = ends[ends.len() - 2];
        let mut tail = b.clone();
        tail[last + 3] ^= 0x10;
        let s = scan(&tail, H);
        assert_eq!(s.valid_end, last);
        assert!(s.damage.is_empty());
        b[ends[1] + 16] ^= 1;
        let s = scan(&b, H);
        assert_eq!(s.torn, None);
        assert_eq!(s.valid_end, b.len());
        assert_eq!(
            s.damage,
            vec![DamagedRange {
                start: ends[1],
                end: ends[2],
                kind: CorruptionKind::FrameChecksum
            }],
            "the damaged batch is one range; the unit after it is recovered"
        );
    }

    /// Cutting a torn tail where the scan says and scanning again finds nothing to cut and
    /// the same damage, whatever byte was flipped and wherever the data was cut.
    #[test]
    fn a_cut_at_the_valid_end_is_a_fixed_point() {
        let (mut b, _) = units();
        encode_frame(
            &mut b,
            FrameKind::Record,
            FLAG_BEGIN | FLAG_END,
            b"last payload",
        );
        for flip in H..b.len() {
            for cut in H..=b.len() {
                let mut d = b.clone();
                d[flip] ^= 0x40;
                d.truncate(cut);
                let s = scan(&d, H);
                if s.torn.is_none() {
                    continue;
                }
                let again = scan(&d[..s.valid_end], H);
                assert_eq!(again.torn, None, "flip {flip} cut {cut}: {s:?}");
                assert_eq!(again.damage, s.damage, "flip {flip} cut {cut}");
                assert_eq!(again.valid_end, s.valid_end, "flip {flip} cut {cut}");
            }
        }
    }

    #[test]
    fn damage_followed_only_by_a_partial_frame_is_part_of_the_torn_tail() {
        let (mut b, ends) = units();
        encode_frame(
            &mut b,
            FrameKind::Record,
            FLAG_BEGIN | FLAG_END,
            b"last payload",
        );
        b[ends[2] + 1] ^= 1;
        let s = scan(&b[..b.len() - 2], H);
        assert_eq!(s.valid_end, ends[2]);
        assert!(s.damage.is_empty());
        assert!(s.torn.is_some(), "{s:?}");
    }

    #[test]
    fn zero_fill_after_frames_is_a_torn_tail() {
        let (mut b, ends) = units();
        b.extend_from_slice(&[0u8; 100]);
        let s = scan(&b, H);
        assert_eq!(s.valid_end, *ends.last().unwrap());
        assert!(matches!(s.torn, Some(TornReason::Garbage(_))));
    }

    #[test]
    fn a_damaged_snapshot_is_never_a_torn_tail() {
        let mut b = vec![0xAAu8; H];
        encode_frame(&mut b, FrameKind::Snapshot, FLAG_BEGIN | FLAG_END, b"state");
        let mut payload = b.clone();
        let n = payload.len();
        payload[n - 1] ^= 1;
        let s = scan(&payload, H);
        assert_eq!((s.valid_end, s.torn), (n, None));
        assert_eq!(s.damage.len(), 1);
        let mut header = b.clone();
        header[H] ^= 1;
        let s = scan(&header, H);
        assert_eq!(
            (s.valid_end, s.torn),
            (n, None),
            "damage at the first frame"
        );
        // Zeros at the first frame are still a torn tail (an append that never landed).
        let mut zeros = vec![0xAAu8; H];
        zeros.extend_from_slice(&[0; 40]);
        assert!(matches!(scan(&zeros, H).torn, Some(TornReason::Garbage(_))));
    }
}
