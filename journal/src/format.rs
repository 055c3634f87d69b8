//! On-disk encoding: segment header and frame layout (see `journal/FORMAT.md`).
//!
//! Everything here is pure: bytes in, bytes out. All integers are little-endian.

use crate::error::CorruptionKind;
use crate::FrameKind;

/// Magic at the start of every segment file.
pub const MAGIC: [u8; 8] = *b"OVJRNL\r\n";
/// The format version this build writes.
pub const FORMAT_VERSION: u32 = 2;
/// Oldest format version this build reads.
pub const MIN_READ_VERSION: u32 = 1;
/// Size of the segment header in bytes; the first frame starts here.
pub const SEGMENT_HEADER_LEN: u64 = 32;
/// Size of a frame header in bytes (the payload follows it).
pub const FRAME_HEADER_LEN: u64 = 16;
/// Largest payload a frame may carry (64 MiB). Checked before anything is allocated or read.
pub const MAX_PAYLOAD_LEN: u32 = 64 * 1024 * 1024;

/// Xor-ed into the segment header crc ("OVJS").
const SEGMENT_CRC_MASK: u32 = 0x534A_564F;
/// Xor-ed into the frame header crc ("OVJH"), so that zero bytes never validate.
const HEADER_CRC_MASK: u32 = 0x484A_564F;
/// Xor-ed into the frame crc ("OVJF").
const FRAME_CRC_MASK: u32 = 0x464A_564F;

/// Frame flag: this frame starts a unit (a single frame or the first frame of a batch).
pub const FLAG_BEGIN: u8 = 0x01;
/// Frame flag: this frame ends a unit (a single frame or the last frame of a batch).
pub const FLAG_END: u8 = 0x02;
const KNOWN_FLAGS: u8 = FLAG_BEGIN | FLAG_END;

const KIND_RECORD: u8 = 1;
const KIND_SNAPSHOT: u8 = 2;

/// The secret of one segment that keys its frames' checksums: the low 32 bits seed the header
/// crc, the high 32 bits the frame crc. Version 1 segments have none ([`Salt::NONE`]: both crcs
/// start from 0, plain CRC-32). A version 2 salt has both halves non-zero, so no frame of a
/// version 1 segment, and no frame computed with plain CRC-32, verifies under it (but by chance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Salt(pub u64);

impl Salt {
    /// The salt of a version 1 segment: plain CRC-32.
    pub const NONE: Salt = Salt(0);

    fn head_seed(self) -> u32 {
        self.0 as u32
    }

    fn frame_seed(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// Whether a version 2 segment may carry this salt (both halves non-zero).
    pub fn is_valid_v2(self) -> bool {
        self.head_seed() != 0 && self.frame_seed() != 0
    }
}

/// A segment header that verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    /// The segment id.
    pub id: u64,
    /// Its format version.
    pub version: u32,
    /// The salt of its frames' checksums ([`Salt::NONE`] in version 1).
    pub salt: Salt,
}

/// The kind byte stored for `kind`.
pub fn kind_byte(kind: FrameKind) -> u8 {
    match kind {
        FrameKind::Record => KIND_RECORD,
        FrameKind::Snapshot => KIND_SNAPSHOT,
    }
}

fn kind_from_byte(b: u8) -> Option<FrameKind> {
    match b {
        KIND_RECORD => Some(FrameKind::Record),
        KIND_SNAPSHOT => Some(FrameKind::Snapshot),
        _ => None,
    }
}

fn crc(parts: &[&[u8]]) -> u32 {
    crc_seeded(0, parts)
}

/// CRC-32 (IEEE) of `parts` starting from state `seed` (0: plain CRC-32).
fn crc_seeded(seed: u32, parts: &[&[u8]]) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(seed);
    for p in parts {
        h.update(p);
    }
    h.finalize()
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(s.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(s.try_into().ok()?))
}

/// Appends a segment header to `out`, in the layout of `h.version` (1 or 2; a version 1 header
/// has no salt and is only written by tests and fixture generators).
// Format v2: { magic:[u8;8] | version:u32 (2) | segment_id:u64 | salt:u64 | crc:u32 }
// Format v1: { magic:[u8;8] | version:u32 (1) | header_len:u32 (32) | segment_id:u64 | reserved:u32 (0) | crc:u32 }
//            crc = crc32(bytes 0..28) ^ 0x534A564F
pub fn encode_segment_header(out: &mut Vec<u8>, h: SegmentHeader) {
    let start = out.len();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&h.version.to_le_bytes());
    if h.version == 1 {
        out.extend_from_slice(&(SEGMENT_HEADER_LEN as u32).to_le_bytes());
        out.extend_from_slice(&h.id.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
    } else {
        out.extend_from_slice(&h.id.to_le_bytes());
        out.extend_from_slice(&h.salt.0.to_le_bytes());
    }
    let c = crc(&[out.get(start..).unwrap_or_default()]) ^ SEGMENT_CRC_MASK;
    out.extend_from_slice(&c.to_le_bytes());
}

/// Why a segment header was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer than [`SEGMENT_HEADER_LEN`] bytes.
    Short,
    /// The magic does not match: not a journal segment.
    BadMagic,
    /// A format version this build cannot read.
    Version(u32),
    /// The header does not verify.
    Corrupt(CorruptionKind),
}

/// Decodes and verifies a segment header.
///
/// The magic and the version (bytes 0..12) keep their place in every format version, so a future
/// version is always refused as such rather than as corruption.
pub fn decode_segment_header(b: &[u8]) -> Result<SegmentHeader, HeaderError> {
    if (b.len() as u64) < SEGMENT_HEADER_LEN {
        // A short prefix of a valid magic is a torn header; anything else is not ours.
        let n = b.len().min(MAGIC.len());
        if b.get(..n) != MAGIC.get(..n) {
            return Err(HeaderError::BadMagic);
        }
        return Err(HeaderError::Short);
    }
    if b.get(..8) != Some(&MAGIC[..]) {
        return Err(damaged_or(b, HeaderError::BadMagic));
    }
    let version = u32_at(b, 8).ok_or(HeaderError::Short)?;
    if !(MIN_READ_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(damaged_or(b, HeaderError::Version(version)));
    }
    let stored = u32_at(b, 28).ok_or(HeaderError::Short)?;
    if crc(&[b.get(..28).unwrap_or_default()]) ^ SEGMENT_CRC_MASK != stored {
        return Err(HeaderError::Corrupt(CorruptionKind::SegmentHeaderChecksum));
    }
    let field = HeaderError::Corrupt(CorruptionKind::SegmentHeaderField);
    if version == 1 {
        if u32_at(b, 12) != Some(SEGMENT_HEADER_LEN as u32) || u32_at(b, 24) != Some(0) {
            return Err(field);
        }
        let id = u64_at(b, 16).ok_or(HeaderError::Short)?;
        return Ok(SegmentHeader {
            id,
            version,
            salt: Salt::NONE,
        });
    }
    let id = u64_at(b, 12).ok_or(HeaderError::Short)?;
    let salt = Salt(u64_at(b, 20).ok_or(HeaderError::Short)?);
    if !salt.is_valid_v2() {
        return Err(field);
    }
    Ok(SegmentHeader { id, version, salt })
}

/// The salt to try on the frames of a segment whose header does not verify: the one its bytes
/// hold where a version 2 header keeps it, with the one flipped bit that makes the header's
/// checksum verify again when there is one (CRC-32 tells a single flipped bit apart), when both
/// halves are non-zero (a version 1 header holds zeros in the high half there); else none. A
/// wrong guess verifies no frame (but by chance), so the frames then read as damage, as they
/// would without a guess.
pub fn salt_of_damaged_header(b: &[u8]) -> Salt {
    let (Some(stored), Some(mut head), Some(crc_stored)) = (
        u64_at(b, 20),
        b.get(..28).and_then(|h| <[u8; 28]>::try_from(h).ok()),
        u32_at(b, 28),
    ) else {
        return Salt::NONE;
    };
    let verifies = |h: &[u8; 28]| crc(&[h]) ^ SEGMENT_CRC_MASK == crc_stored;
    let mut salt = Salt(stored);
    if !verifies(&head) {
        for bit in 0..64u32 {
            let fixed = stored ^ (1u64 << bit);
            if let Some(field) = head.get_mut(20..28) {
                field.copy_from_slice(&fixed.to_le_bytes());
            }
            if verifies(&head) {
                salt = Salt(fixed);
                break;
            }
        }
    }
    if salt.is_valid_v2() && u32_at(b, 8) != Some(1) {
        salt
    } else {
        Salt::NONE
    }
}

/// `refusal`, unless the header is one of ours with its magic or version damaged: its checksum
/// verifies once our magic and a version this build reads are put back in place. A foreign
/// file, or a header a newer build wrote (its checksum verifies as it is), is refused.
fn damaged_or(b: &[u8], refusal: HeaderError) -> HeaderError {
    let Some(rest) = b.get(12..28) else {
        return refusal;
    };
    let stored = u32_at(b, 28);
    let as_is = crc(&[b.get(..28).unwrap_or_default()]) ^ SEGMENT_CRC_MASK;
    let ours = (MIN_READ_VERSION..=FORMAT_VERSION)
        .any(|v| Some(crc(&[&MAGIC[..], &v.to_le_bytes(), rest]) ^ SEGMENT_CRC_MASK) == stored);
    if ours && stored != Some(as_is) {
        HeaderError::Corrupt(CorruptionKind::SegmentHeaderField)
    } else {
        refusal
    }
}

/// Appends one frame to `out`, its checksums keyed with the segment's `salt` (see
/// [`frame_header`]). Public for tools and tests that build frames by hand (fixtures, fault
/// injection); a journal appends through [`crate::Journal`].
pub fn encode_frame(out: &mut Vec<u8>, salt: Salt, kind: FrameKind, flags: u8, payload: &[u8]) {
    // Callers check the cap first; the cast cannot truncate below it.
    debug_assert!(payload.len() as u64 <= u64::from(MAX_PAYLOAD_LEN));
    let head = frame_header(salt, kind, flags, payload.len() as u32, payload);
    out.reserve(FRAME_HEADER_LEN as usize + payload.len());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
}

/// The header of a frame that says its payload is `len` bytes, its checksums keyed with `salt`;
/// the frame crc covers `payload`. [`encode_frame`] passes the payload and its length; a header
/// built on its own may claim a length it is not followed by (a torn or forged frame).
// Format: { len:u32 | kind:u8 | flags:u8 | reserved:u16 (0) | head_crc:u32 | crc:u32 | payload:[u8; len] }
//         head_crc = crc32_from(salt.lo, bytes 0..8) ^ 0x484A564F
//         crc      = crc32_from(salt.hi, bytes 0..8 ++ payload) ^ 0x464A564F
pub fn frame_header(
    salt: Salt,
    kind: FrameKind,
    flags: u8,
    len: u32,
    payload: &[u8],
) -> [u8; FRAME_HEADER_LEN as usize] {
    let mut head = [0u8; 8];
    head[..4].copy_from_slice(&len.to_le_bytes());
    head[4] = kind_byte(kind);
    head[5] = flags;
    let head_crc = crc_seeded(salt.head_seed(), &[&head]) ^ HEADER_CRC_MASK;
    let frame_crc = crc_seeded(salt.frame_seed(), &[&head, payload]) ^ FRAME_CRC_MASK;
    let mut out = [0u8; FRAME_HEADER_LEN as usize];
    out[..8].copy_from_slice(&head);
    out[8..12].copy_from_slice(&head_crc.to_le_bytes());
    out[12..].copy_from_slice(&frame_crc.to_le_bytes());
    out
}

/// The bytes a frame with `payload_len` bytes of payload occupies on disk.
pub fn frame_size(payload_len: usize) -> u64 {
    FRAME_HEADER_LEN + payload_len as u64
}

/// A frame that verified.
#[derive(Debug, Clone, Copy)]
pub struct Decoded<'a> {
    /// Its kind.
    pub kind: FrameKind,
    /// Its flags ([`FLAG_BEGIN`], [`FLAG_END`]).
    pub flags: u8,
    /// Its payload.
    pub payload: &'a [u8],
    /// Offset just past it.
    pub next: usize,
}

/// Why no frame could be decoded at an offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The data ends inside the frame (what a truncation looks like). The header, when
    /// complete, verified.
    Truncated,
    /// The bytes are not a valid frame.
    Bad(CorruptionKind),
}

/// A frame header that verified: its length, kind and flags can be trusted.
#[derive(Debug, Clone, Copy)]
pub struct Header {
    /// Its kind.
    pub kind: FrameKind,
    /// Its flags ([`FLAG_BEGIN`], [`FLAG_END`]).
    pub flags: u8,
    /// Offset of its payload.
    pub payload_at: usize,
    /// Offset just past its payload (may lie past the end of the data).
    pub next: usize,
}

/// Decodes and verifies the 16-byte header of the frame at `at` (not its payload). The length is
/// checked against the cap; nothing is allocated.
pub fn decode_header(data: &[u8], at: usize, salt: Salt) -> Result<Header, DecodeError> {
    let hdr_end = at
        .checked_add(FRAME_HEADER_LEN as usize)
        .ok_or(DecodeError::Truncated)?;
    let Some(hdr) = data.get(at..hdr_end) else {
        return Err(DecodeError::Truncated);
    };
    let head = hdr.get(..8).unwrap_or_default();
    let head_crc = u32_at(hdr, 8).ok_or(DecodeError::Truncated)?;
    if crc_seeded(salt.head_seed(), &[head]) ^ HEADER_CRC_MASK != head_crc {
        return Err(DecodeError::Bad(CorruptionKind::HeaderChecksum));
    }
    let len = u32_at(hdr, 0).ok_or(DecodeError::Truncated)?;
    if len > MAX_PAYLOAD_LEN {
        return Err(DecodeError::Bad(CorruptionKind::LengthOverCap { len }));
    }
    let kind_b = hdr.get(4).copied().unwrap_or(0);
    let Some(kind) = kind_from_byte(kind_b) else {
        return Err(DecodeError::Bad(CorruptionKind::UnknownKind(kind_b)));
    };
    let flags = hdr.get(5).copied().unwrap_or(0);
    if flags & !KNOWN_FLAGS != 0 || hdr.get(6..8) != Some(&[0, 0][..]) {
        return Err(DecodeError::Bad(CorruptionKind::UnknownFlags(flags)));
    }
    let next = hdr_end
        .checked_add(len as usize)
        .ok_or(DecodeError::Truncated)?;
    Ok(Header {
        kind,
        flags,
        payload_at: hdr_end,
        next,
    })
}

/// Decodes and verifies the frame at `at`. Never allocates; the length is checked against the
/// cap and the header crc before the payload is touched.
pub fn decode_frame(data: &[u8], at: usize, salt: Salt) -> Result<Decoded<'_>, DecodeError> {
    let h = decode_header(data, at, salt)?;
    let Some(payload) = data.get(h.payload_at..h.next) else {
        return Err(DecodeError::Truncated);
    };
    let head = data.get(at..at + 8).unwrap_or_default();
    let stored = u32_at(data, at + 12).ok_or(DecodeError::Truncated)?;
    if crc_seeded(salt.frame_seed(), &[head, payload]) ^ FRAME_CRC_MASK != stored {
        return Err(DecodeError::Bad(CorruptionKind::FrameChecksum));
    }
    Ok(Decoded {
        kind: h.kind,
        flags: h.flags,
        payload,
        next: h.next,
    })
}

#[cfg(test)]
#[expect(clippy::indexing_slicing, reason = "tests")]
mod tests {
    use super::*;

    const SALT: Salt = Salt(0x0123_4567_89ab_cdef);

    fn header(id: u64) -> SegmentHeader {
        SegmentHeader {
            id,
            version: FORMAT_VERSION,
            salt: SALT,
        }
    }

    #[test]
    fn zeros_never_decode() {
        let z = vec![0u8; 4096];
        for salt in [Salt::NONE, SALT] {
            for at in 0..64 {
                assert!(matches!(
                    decode_frame(&z, at, salt),
                    Err(DecodeError::Bad(_))
                ));
            }
        }
        assert_eq!(decode_segment_header(&z), Err(HeaderError::BadMagic));
    }

    #[test]
    fn frame_round_trip_and_layout() {
        let mut b = Vec::new();
        encode_frame(
            &mut b,
            SALT,
            FrameKind::Snapshot,
            FLAG_BEGIN | FLAG_END,
            b"hello",
        );
        assert_eq!(b.len() as u64, frame_size(5));
        assert_eq!(&b[..4], &5u32.to_le_bytes());
        assert_eq!(b[4], 2);
        assert_eq!(b[5], 3);
        let d = decode_frame(&b, 0, SALT).unwrap();
        assert_eq!(d.payload, b"hello");
        assert_eq!(d.kind, FrameKind::Snapshot);
        assert_eq!(d.next, b.len());
        assert_eq!(
            decode_frame(&b[..b.len() - 1], 0, SALT).unwrap_err(),
            DecodeError::Truncated
        );
        assert_eq!(
            decode_frame(&b[..15], 0, SALT).unwrap_err(),
            DecodeError::Truncated
        );
    }

    /// A frame verifies only under the salt it was written with: plain CRC-32 (what text that
    /// cannot read the salt can compute, and what version 1 wrote) never verifies under a
    /// version 2 salt, and the reverse.
    #[test]
    fn a_frame_verifies_only_under_its_own_salt() {
        let mut plain = Vec::new();
        encode_frame(&mut plain, Salt::NONE, FrameKind::Record, 3, b"forged");
        let mut salted = Vec::new();
        encode_frame(&mut salted, SALT, FrameKind::Record, 3, b"forged");
        assert!(decode_frame(&plain, 0, Salt::NONE).is_ok());
        assert!(decode_frame(&salted, 0, SALT).is_ok());
        for (bytes, salt) in [
            (&plain, SALT),
            (&salted, Salt::NONE),
            (&salted, Salt(SALT.0 ^ 1)),
        ] {
            assert_eq!(
                decode_header(bytes, 0, salt).unwrap_err(),
                DecodeError::Bad(CorruptionKind::HeaderChecksum)
            );
        }
        // Only the frame seed differs: the header verifies, the frame does not.
        let other = Salt(SALT.0 ^ (1 << 40));
        assert!(decode_header(&salted, 0, other).is_ok());
        assert_eq!(
            decode_frame(&salted, 0, other).unwrap_err(),
            DecodeError::Bad(CorruptionKind::FrameChecksum)
        );
    }

    #[test]
    fn segment_header_round_trip() {
        let mut b = Vec::new();
        encode_segment_header(&mut b, header(0x1234));
        assert_eq!(b.len() as u64, SEGMENT_HEADER_LEN);
        assert_eq!(decode_segment_header(&b), Ok(header(0x1234)));
        assert_eq!(decode_segment_header(&b[..10]), Err(HeaderError::Short));
        let v1 = SegmentHeader {
            id: 7,
            version: 1,
            salt: Salt::NONE,
        };
        let mut old = Vec::new();
        encode_segment_header(&mut old, v1);
        assert_eq!(decode_segment_header(&old), Ok(v1));
        assert_eq!(&old[12..16], &32u32.to_le_bytes(), "version 1 layout");
        // A version 2 header whose salt has a zero half is refused (it would verify plain
        // CRC-32 frames).
        for salt in [Salt(0), Salt(1), Salt(1 << 32)] {
            let mut z = Vec::new();
            encode_segment_header(&mut z, SegmentHeader { salt, ..header(1) });
            assert_eq!(
                decode_segment_header(&z),
                Err(HeaderError::Corrupt(CorruptionKind::SegmentHeaderField))
            );
        }
        // A header a newer build wrote verifies as it is: refused for its version.
        let mut v = b.clone();
        v[8] = 9;
        let c = crc(&[&v[..28]]) ^ SEGMENT_CRC_MASK;
        v[28..].copy_from_slice(&c.to_le_bytes());
        assert_eq!(decode_segment_header(&v), Err(HeaderError::Version(9)));
        // Ours with its version or magic damaged: damage, not a refusal (either version).
        for ours in [&b, &old] {
            let mut v = ours.clone();
            v[8] = 9;
            assert_eq!(
                decode_segment_header(&v),
                Err(HeaderError::Corrupt(CorruptionKind::SegmentHeaderField))
            );
            let mut m = ours.clone();
            m[0] ^= 0x40;
            assert_eq!(
                decode_segment_header(&m),
                Err(HeaderError::Corrupt(CorruptionKind::SegmentHeaderField))
            );
        }
        // A damaged header still gives its salt to try, even with a bit of the salt itself
        // flipped; a version 1 one gives none.
        let mut d = b.clone();
        d[0] ^= 1;
        assert_eq!(salt_of_damaged_header(&d), SALT);
        for bit in 0..64 {
            let mut d = b.clone();
            d[20 + bit / 8] ^= 1 << (bit % 8);
            assert_eq!(salt_of_damaged_header(&d), SALT, "salt bit {bit}");
        }
        let mut d = old.clone();
        d[0] ^= 1;
        assert_eq!(salt_of_damaged_header(&d), Salt::NONE);
        // A foreign file with our length is not ours.
        assert_eq!(
            decode_segment_header(&[7u8; 32]),
            Err(HeaderError::BadMagic)
        );
    }

    #[test]
    fn oversized_length_is_refused_before_reading_payload() {
        let mut head = [0u8; 8];
        head[..4].copy_from_slice(&(MAX_PAYLOAD_LEN + 1).to_le_bytes());
        head[4] = 1;
        head[5] = 3;
        let mut b = head.to_vec();
        b.extend_from_slice(
            &(crc_seeded(SALT.head_seed(), &[&head]) ^ HEADER_CRC_MASK).to_le_bytes(),
        );
        b.extend_from_slice(&[0; 4]);
        assert_eq!(
            decode_frame(&b, 0, SALT).unwrap_err(),
            DecodeError::Bad(CorruptionKind::LengthOverCap {
                len: MAX_PAYLOAD_LEN + 1
            })
        );
    }
}
