//! Finding the valid end of a segment: where whole units (single frames or complete batches) stop,
//! which byte ranges before it are damaged, and whether what follows it is a torn tail.
//!
//! # Design
//!
//! A torn tail is never assumed, it is proven by the bytes at the valid end (the end of the last
//! whole unit): fewer bytes than a frame header, a frame whose header verifies and whose length
//! runs past the end of the data, a batch whose frames verify and stop before its `END` frame, or
//! zero bytes to the end of the data (space a crash allocated but never wrote). That is all an
//! interrupted append can leave, and only at the end of the active segment. Anything else that
//! does not verify is damage, wherever it is: kept, reported, never cut.
//!
//! Frames are self-delimiting and checksummed (with the segment's salt), so after damage the scan
//! *resynchronises*: the next offset where a whole frame verifies and starts a unit (`BEGIN`) is
//! where whole units resume, and the bytes in between are one damaged range. A frame found there
//! must verify whole: a header alone is never trusted to end the scan. With a salted segment
//! (format version 2) text stored inside a payload cannot hold a frame that verifies, since the
//! checksums are keyed with a secret it cannot read.

use crate::error::CorruptionKind;
use crate::format::{
    decode_frame, decode_header, DecodeError, Salt, FLAG_BEGIN, FLAG_END, FRAME_HEADER_LEN,
};

/// The result of scanning a segment's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    /// End of the last whole unit, or of a damaged range that reaches the end of the data.
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
    /// Where the next whole unit (or the end of the data) starts.
    pub end: usize,
    /// What was wrong first.
    pub kind: CorruptionKind,
}

/// Why the bytes after the valid end are a torn tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TornReason {
    /// A frame runs past the end of the data (or the data ends inside a frame header).
    PartialFrame,
    /// A batch has no last frame.
    PartialBatch,
    /// Zero bytes to the end of the data, where a frame should start.
    ZeroFill,
}

impl std::fmt::Display for TornReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::PartialFrame => f.write_str("partial frame"),
            Self::PartialBatch => f.write_str("incomplete batch"),
            Self::ZeroFill => f.write_str("zero fill"),
        }
    }
}

/// Scans `data` (a whole segment file whose frames are keyed with `salt`) from `from` (a unit
/// boundary) to its end.
///
/// A fixed point: cutting a torn tail at `valid_end` and scanning again finds no torn tail and
/// the same damage. A cut can change what a second look sees (zero bytes before a batch cut
/// away now reach the end of the data), so the scan is repeated on the bytes before each cut
/// until nothing more is torn. Every round ends strictly earlier, and a clean segment takes one
/// round.
pub(crate) fn scan(data: &[u8], from: usize, salt: Salt) -> Scan {
    let mut s = scan_units(data, from, salt);
    let Some(first_reason) = s.torn else {
        return s;
    };
    while s.torn.is_some() && s.valid_end > from {
        let Some(before_cut) = data.get(..s.valid_end) else {
            break;
        };
        let again = scan_units(before_cut, from, salt);
        let more = again.torn.is_some();
        s = again;
        if !more {
            break;
        }
    }
    s.torn = Some(first_reason);
    s
}

/// Whether every byte from `from` to the end of `data` is zero.
fn zero_fill(data: &[u8], from: usize) -> bool {
    data.get(from..).is_some_and(|b| b.iter().all(|&x| x == 0))
}

/// One pass of [`scan`].
fn scan_units(data: &[u8], from: usize, salt: Salt) -> Scan {
    let mut s = Scan {
        valid_end: from,
        torn: None,
        damage: Vec::new(),
    };
    let mut off = from;
    let mut open_batch: Option<usize> = None;
    while off < data.len() {
        let (kind, search_from) = match decode_frame(data, off, salt) {
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
                        let end = next_unit(data, f.next, salt).unwrap_or(data.len());
                        s.damage.push(DamagedRange {
                            start: off,
                            end,
                            kind: CorruptionKind::OrphanBatchFrame,
                        });
                        s.valid_end = end;
                        off = end;
                        continue;
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
            // Proven torn: the header verifies and its length runs past the end of the data,
            // or the data ends inside the header.
            Err(DecodeError::Truncated) => {
                s.torn = Some(match open_batch {
                    Some(_) => TornReason::PartialBatch,
                    None => TornReason::PartialFrame,
                });
                return s;
            }
            Err(DecodeError::Bad(kind)) => match decode_header(data, off, salt) {
                // The header verified: its length can be trusted to skip the payload.
                Ok(h) => (kind, h.next.min(data.len())),
                Err(_) => (kind, off.saturating_add(1)),
            },
        };
        if zero_fill(data, off) {
            s.torn = Some(match open_batch {
                Some(_) => TornReason::PartialBatch,
                None => TornReason::ZeroFill,
            });
            return s;
        }
        let start = open_batch.take().unwrap_or(off);
        let end = next_unit(data, search_from, salt).unwrap_or(data.len());
        s.damage.push(DamagedRange { start, end, kind });
        s.valid_end = end;
        off = end;
    }
    if open_batch.is_some() {
        s.torn = Some(TornReason::PartialBatch);
    }
    s
}

/// The first offset at or after `from` where a unit starts: a whole frame that verifies with
/// the segment's `salt` and has the `BEGIN` flag. A header whose payload does not verify, or
/// runs past the end of the data, is not one.
pub(crate) fn next_unit(data: &[u8], from: usize, salt: Salt) -> Option<usize> {
    let last = data.len().checked_sub(FRAME_HEADER_LEN as usize)?;
    (from..=last).find(|&p| {
        // Cheap filters first: kind byte and flags, then the header crc, then the payload crc.
        matches!(data.get(p + 4), Some(1 | 2))
            && data.get(p + 5).is_some_and(|f| f & FLAG_BEGIN != 0)
            && decode_header(data, p, salt).is_ok()
            && decode_frame(data, p, salt).is_ok()
    })
}

#[cfg(test)]
#[expect(clippy::indexing_slicing, reason = "tests")]
mod tests {
    use super::*;
    use crate::format::{encode_frame, SEGMENT_HEADER_LEN};
    use crate::FrameKind;

    const SALT: Salt = Salt(0x5eed_5eed_0bad_cafe);

    fn frame(b: &mut Vec<u8>, flags: u8, payload: &[u8]) {
        encode_frame(b, SALT, FrameKind::Record, flags, payload);
    }

    /// `[header][one][b1 b2 b3][empty]` as a segment; unit ends, absolute offsets.
    fn units() -> (Vec<u8>, Vec<usize>) {
        let h = SEGMENT_HEADER_LEN as usize;
        let mut b = vec![0xAAu8; h];
        let mut ends = vec![h];
        frame(&mut b, FLAG_BEGIN | FLAG_END, b"one");
        ends.push(b.len());
        frame(&mut b, FLAG_BEGIN, b"b1");
        frame(&mut b, 0, b"b2");
        frame(&mut b, FLAG_END, b"b3");
        ends.push(b.len());
        frame(&mut b, FLAG_BEGIN | FLAG_END, b"");
        ends.push(b.len());
        (b, ends)
    }

    const H: usize = SEGMENT_HEADER_LEN as usize;

    #[test]
    fn every_truncation_ends_at_a_unit_boundary() {
        let (b, ends) = units();
        for cut in H..=b.len() {
            let s = scan(&b[..cut], H, SALT);
            let expect = *ends.iter().rev().find(|e| **e <= cut).unwrap();
            assert_eq!(s.valid_end, expect, "cut {cut}");
            assert_eq!(s.torn.is_none(), ends.contains(&cut), "cut {cut}");
            assert!(s.damage.is_empty(), "cut {cut}");
        }
    }

    #[test]
    fn damage_is_kept_and_skipped_wherever_it_is() {
        let (mut b, ends) = units();
        let last = ends[ends.len() - 2];
        // A flip in the last unit: damage to the end, not a torn tail (nothing proves an
        // interrupted append).
        let mut tail = b.clone();
        tail[last + 3] ^= 0x10;
        let s = scan(&tail, H, SALT);
        assert_eq!((s.valid_end, s.torn), (tail.len(), None));
        assert_eq!(
            s.damage,
            vec![DamagedRange {
                start: last,
                end: tail.len(),
                kind: CorruptionKind::HeaderChecksum
            }]
        );
        b[ends[1] + 16] ^= 1;
        let s = scan(&b, H, SALT);
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

    /// Frames written with another salt (or plain CRC-32, what text that cannot read the salt
    /// can compute) are damage, never frames.
    #[test]
    fn frames_of_another_salt_are_damage() {
        let (mut b, ends) = units();
        let foreign = b.len();
        for salt in [Salt::NONE, Salt(SALT.0 ^ 0x8000_0000)] {
            encode_frame(&mut b, salt, FrameKind::Record, FLAG_BEGIN | FLAG_END, b"x");
        }
        let s = scan(&b, H, SALT);
        assert_eq!((s.valid_end, s.torn), (b.len(), None));
        assert_eq!(s.damage.len(), 1);
        assert_eq!(s.damage[0].start, foreign);
        assert_eq!(*ends.last().unwrap(), foreign);
    }

    /// Cutting a torn tail where the scan says and scanning again finds nothing to cut and
    /// the same damage, whatever byte was flipped or zeroed and wherever the data was cut.
    #[test]
    fn a_cut_at_the_valid_end_is_a_fixed_point() {
        let (mut b, _) = units();
        frame(&mut b, FLAG_BEGIN | FLAG_END, b"last payload");
        for flip in H..b.len() {
            for zero in [false, true] {
                for cut in H..=b.len() {
                    let mut d = b.clone();
                    if zero {
                        d[flip..].fill(0);
                    } else {
                        d[flip] ^= 0x40;
                    }
                    d.truncate(cut);
                    let s = scan(&d, H, SALT);
                    if s.torn.is_none() {
                        continue;
                    }
                    let again = scan(&d[..s.valid_end], H, SALT);
                    assert_eq!(again.torn, None, "flip {flip} cut {cut}: {s:?}");
                    assert_eq!(again.damage, s.damage, "flip {flip} cut {cut}");
                    assert_eq!(again.valid_end, s.valid_end, "flip {flip} cut {cut}");
                }
            }
        }
    }

    /// Damage followed only by an interrupted append: nothing proves the damage torn, so it is
    /// kept, the partial frame with it; nothing after the damage can be cut.
    #[test]
    fn damage_followed_only_by_a_partial_frame_is_kept() {
        let (mut b, ends) = units();
        frame(&mut b, FLAG_BEGIN | FLAG_END, b"last payload");
        b[ends[2] + 1] ^= 1;
        let d = &b[..b.len() - 2];
        let s = scan(d, H, SALT);
        assert_eq!((s.valid_end, s.torn), (d.len(), None));
        assert_eq!(s.damage.len(), 1);
        assert_eq!(s.damage[0].start, ends[2]);
    }

    #[test]
    fn zero_fill_after_frames_is_a_torn_tail() {
        let (mut b, ends) = units();
        b.extend_from_slice(&[0u8; 100]);
        let s = scan(&b, H, SALT);
        assert_eq!(s.valid_end, *ends.last().unwrap());
        assert_eq!(s.torn, Some(TornReason::ZeroFill));
        // Zeros at the first frame too (an append that never landed).
        let mut zeros = vec![0xAAu8; H];
        zeros.extend_from_slice(&[0; 40]);
        assert_eq!(scan(&zeros, H, SALT).torn, Some(TornReason::ZeroFill));
    }

    #[test]
    fn a_damaged_snapshot_is_never_a_torn_tail() {
        let mut b = vec![0xAAu8; H];
        encode_frame(
            &mut b,
            SALT,
            FrameKind::Snapshot,
            FLAG_BEGIN | FLAG_END,
            b"state",
        );
        let mut payload = b.clone();
        let n = payload.len();
        payload[n - 1] ^= 1;
        let s = scan(&payload, H, SALT);
        assert_eq!((s.valid_end, s.torn), (n, None));
        assert_eq!(s.damage.len(), 1);
        let mut header = b.clone();
        header[H] ^= 1;
        let s = scan(&header, H, SALT);
        assert_eq!(
            (s.valid_end, s.torn),
            (n, None),
            "damage at the first frame"
        );
    }

    /// A header whose length runs past the end of the data is a torn append only at the valid
    /// end: inside damage it proves nothing, and the whole units after it are read.
    #[test]
    fn a_header_past_the_end_inside_damage_is_not_a_torn_tail() {
        let (mut b, ends) = units();
        // A frame whose payload holds a header (keyed with the right salt, as if text could
        // know it) claiming 1000 bytes, then a damaged header of that frame.
        let mut forged = Vec::new();
        let mut inner = Vec::new();
        encode_frame(
            &mut inner,
            SALT,
            FrameKind::Record,
            FLAG_BEGIN | FLAG_END,
            &[7; 1000],
        );
        forged.extend_from_slice(b"text ");
        forged.extend_from_slice(&inner[..16]);
        let at = b.len();
        frame(&mut b, FLAG_BEGIN | FLAG_END, &forged);
        frame(&mut b, FLAG_BEGIN | FLAG_END, b"after");
        let after = b.len();
        b[at] ^= 1;
        let s = scan(&b, H, SALT);
        assert_eq!((s.valid_end, s.torn), (after, None), "{s:?}");
        assert_eq!(s.damage.len(), 1);
        assert_eq!(
            (s.damage[0].start, s.damage[0].end),
            (at, at + 16 + forged.len())
        );
        assert_eq!(*ends.last().unwrap(), at);
    }
}
