//! Finding the valid end of a segment: where whole units (single frames or complete batches) stop,
//! and whether what follows is a torn tail or corruption.
//!
//! # Design
//!
//! A truncation can only ever produce a frame that runs past the end of the data (its header, when
//! complete, still verifies) or a batch without its last frame. Anything else that does not verify
//! is damage. Damage followed by any valid-looking frame is reported as corruption (nothing there
//! is cut); damage with nothing valid after it (garbage or zero fill at the very end, e.g. pages a
//! crash left unwritten) is treated like a torn tail.

use crate::error::CorruptionKind;
use crate::format::{decode_frame, DecodeError, FLAG_BEGIN, FLAG_END, FRAME_HEADER_LEN};

/// The result of scanning a segment's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scan {
    /// End of the last whole unit.
    pub valid_end: usize,
    /// What follows `valid_end`, when it is not the end of the data.
    pub torn: Option<TornReason>,
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

/// Scans `data` from `from` (a unit boundary) to its end.
///
/// `Err((offset, kind))` is corruption: a bad frame at `offset` followed by valid-looking data, or
/// a batch structure that no writer produces.
pub(crate) fn scan(data: &[u8], from: usize) -> Result<Scan, (usize, CorruptionKind)> {
    let mut off = from;
    let mut valid_end = from;
    let mut open_batch: Option<usize> = None;
    loop {
        if off >= data.len() {
            let torn = open_batch.map(|_| TornReason::PartialBatch);
            return Ok(Scan { valid_end, torn });
        }
        match decode_frame(data, off) {
            Ok(f) => {
                let begin = f.flags & FLAG_BEGIN != 0;
                let end = f.flags & FLAG_END != 0;
                match (open_batch, begin) {
                    (Some(start), true) => return Err((start, CorruptionKind::IncompleteBatch)),
                    (None, false) => return Err((off, CorruptionKind::OrphanBatchFrame)),
                    (None, true) => open_batch = Some(off),
                    (Some(_), false) => {}
                }
                if end {
                    open_batch = None;
                    valid_end = f.next;
                }
                off = f.next;
            }
            Err(DecodeError::Truncated) => {
                let torn = Some(match open_batch {
                    Some(_) => TornReason::PartialBatch,
                    None => TornReason::PartialFrame,
                });
                return Ok(Scan { valid_end, torn });
            }
            Err(DecodeError::Bad(kind)) => {
                if valid_frame_after(data, off.saturating_add(1)) {
                    return Err((off, kind));
                }
                return Ok(Scan {
                    valid_end,
                    torn: Some(TornReason::Garbage(kind)),
                });
            }
        }
    }
}

/// Whether a frame that verifies starts at any offset at or after `from`.
fn valid_frame_after(data: &[u8], from: usize) -> bool {
    let last = data.len().saturating_sub(FRAME_HEADER_LEN as usize);
    (from..=last).any(|p| {
        // Cheap filters first: kind byte, then the header crc inside decode_frame.
        matches!(data.get(p + 4), Some(1 | 2)) && decode_frame(data, p).is_ok()
    })
}

#[cfg(test)]
#[expect(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]
mod tests {
    use super::*;
    use crate::format::encode_frame;
    use crate::FrameKind;

    fn units() -> (Vec<u8>, Vec<usize>) {
        let mut b = Vec::new();
        let mut ends = vec![0];
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

    #[test]
    fn every_truncation_ends_at_a_unit_boundary() {
        let (b, ends) = units();
        for cut in 0..=b.len() {
            let s = scan(&b[..cut], 0).unwrap();
            let expect = *ends.iter().rev().find(|e| **e <= cut).unwrap();
            assert_eq!(s.valid_end, expect, "cut {cut}");
            assert_eq!(s.torn.is_none(), ends.contains(&cut), "cut {cut}");
        }
    }

    #[test]
    fn damage_before_valid_data_is_corruption_and_at_the_end_is_torn() {
        let (mut b, ends) = units();
        let last = ends[ends.len() - 2];
        let mut tail = b.clone();
        tail[last + 3] ^= 0x10;
        let s = scan(&tail, 0).unwrap();
        assert_eq!(s.valid_end, last);
        b[ends[1] + 16] ^= 1;
        assert_eq!(scan(&b, 0).unwrap_err().0, ends[1]);
    }

    #[test]
    fn zero_fill_after_frames_is_a_torn_tail() {
        let (mut b, ends) = units();
        b.extend_from_slice(&[0u8; 100]);
        let s = scan(&b, 0).unwrap();
        assert_eq!(s.valid_end, *ends.last().unwrap());
        assert!(matches!(s.torn, Some(TornReason::Garbage(_))));
    }
}
