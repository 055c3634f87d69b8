//! Faults done to the session's journal between or during turns: flipped bytes (in the first
//! frame, the middle of the active segment, a snapshot), compaction, a compaction racing the
//! hooks, the journal lock held by another process, and text that carries a forged frame (or
//! a forged frame header) followed by a flipped bit in the header of the frame that holds it.
//!
//! Offsets follow `journal/FORMAT.md`: a segment's first frame starts at byte 32 and has a
//! 16-byte header; a compacted journal's newest segment starts with its snapshot frame.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use ov_journal::{FrameKind, Salt};

/// The segment files of the journal in `dir`, oldest first.
fn segments(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("could not list {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| ov_journal::segment_id(p).is_some())
        .collect();
    v.sort_by_key(|p| ov_journal::segment_id(p));
    Ok(v)
}

/// Inverts the byte at `offset` of `file` (clamped inside the file).
fn flip(file: &Path, offset: u64) -> anyhow::Result<()> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(file)
        .with_context(|| format!("could not open {}", file.display()))?;
    let len = f.metadata()?.len();
    anyhow::ensure!(len > 0, "{} is empty", file.display());
    let at = offset.min(len - 1);
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at)?;
    b[0] ^= 0xff;
    f.write_all_at(&b, at)?;
    f.sync_all()?;
    Ok(())
}

/// A byte inside the payload of the first frame of the oldest segment.
pub fn flip_first(dir: &Path) -> anyhow::Result<()> {
    let first = segments(dir)?
        .into_iter()
        .next()
        .context("the journal has no segment")?;
    flip(
        &first,
        ov_journal::SEGMENT_HEADER_LEN + ov_journal::FRAME_HEADER_LEN + 4,
    )
}

/// A byte in the middle of the newest (active) segment.
pub fn flip_mid(dir: &Path) -> anyhow::Result<()> {
    let last = segments(dir)?.pop().context("the journal has no segment")?;
    let len = std::fs::metadata(&last)?.len();
    flip(&last, len / 2)
}

/// `ovreplay compact` on the journal.
pub fn compact(dir: &Path) -> anyhow::Result<()> {
    crate::cmd::compact::compact(dir).map(drop)
}

/// Compacts, then flips a byte inside the snapshot that now starts the newest segment.
pub fn flip_snapshot(dir: &Path) -> anyhow::Result<()> {
    compact(dir)?;
    let last = segments(dir)?.pop().context("the journal has no segment")?;
    flip(
        &last,
        ov_journal::SEGMENT_HEADER_LEN + ov_journal::FRAME_HEADER_LEN + 8,
    )
}

/// Compacts over and over until the returned flag is set (errors are expected while hooks
/// hold the journal, and ignored).
pub fn compact_loop(dir: PathBuf) -> (Arc<AtomicBool>, JoinHandle<()>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        while !flag.load(Ordering::SeqCst) {
            let _ = compact(&dir);
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    (stop, handle)
}

/// Holds the journal's exclusive lock for `hold` from another thread; returns once it is held.
pub fn hold_lock(dir: &Path, hold: Duration) -> anyhow::Result<JoinHandle<()>> {
    let path = dir.join(ov_journal::LOCK_FILE);
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let lock = ov_journal::FileLock::try_exclusive(&path, Duration::from_secs(10));
        let _ = tx.send(());
        if let Ok(Some(_held)) = lock {
            std::thread::sleep(hold);
        }
    });
    rx.recv_timeout(Duration::from_secs(15))
        .context("could not take the journal lock")?;
    Ok(handle)
}

/// Marks the text a forging fault plants, so the frame that holds it can be found.
const FORGE_MARK: &str = "ovsim-forged-";

/// The assistant message a forged frame would plan (it must never reach the server).
pub const FORGED_ANSWER: &str = "ovsim-forged-answer";

/// The header of a record frame (flags `BEGIN|END`) claiming `len` bytes of `payload`, with
/// unsalted checksums ([`Salt::NONE`], plain CRC-32): what text that cannot read a segment's salt
/// computes (and what journal format version 1 stored).
fn unsalted_header(len: u32, payload: &[u8]) -> [u8; 16] {
    ov_journal::frame_header(Salt::NONE, FrameKind::Record, UNIT, len, payload)
}

/// A whole record frame of `payload` with unsalted checksums.
fn unsalted_frame(payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::new();
    ov_journal::encode_frame(&mut frame, Salt::NONE, FrameKind::Record, UNIT, payload);
    frame
}

/// A single frame: it begins and ends its unit.
const UNIT: u8 = ov_journal::FLAG_BEGIN | ov_journal::FLAG_END;

/// Text (bytes below 0x80, so valid UTF-8 and valid JSON once escaped) holding a whole journal
/// frame with unsalted checksums whose payload is an encoded `MessagesPlanned` of an
/// assistant message [`FORGED_ANSWER`]: read as a frame, it would be sent to the server.
pub fn forged_frame_text() -> anyhow::Result<String> {
    use ov_engine::event::{Envelope, Event, PlannedMessage};
    use ov_engine::turn::{DedupKey, Role};
    // Every number below 128 and every string shorter than 128 bytes encodes to bytes below
    // 0x80 (bincode varints), so the payload is text; so is its length, kept under 128.
    let payload_of = |pad: usize, at_ms: u64, pid: u32| -> anyhow::Result<Vec<u8>> {
        let content = format!("{FORGED_ANSWER}{}", "-".repeat(pad));
        let env = Envelope {
            at_ms,
            pid,
            event: Event::MessagesPlanned {
                messages: vec![PlannedMessage {
                    key: DedupKey::for_turn("f", Role::Assistant),
                    turn_id: Some("f".into()),
                    role: Role::Assistant,
                    raw_len: content.len() as u64,
                    content,
                    interrupted: false,
                    created_at_ms: None,
                }],
            },
        };
        let mut payload = Vec::new();
        ov_engine::codec::encode_event(&env, &mut payload)?;
        Ok(payload)
    };
    // The header crc depends on the length only: pick a length whose header is text, pad the
    // answer to it, then try times and pids (which keep the length) for the frame crc.
    let base = payload_of(0, 1, 1)?.len();
    for len in base..128 {
        let head_is_text = unsalted_header(u32::try_from(len)?, &[])
            .get(..12)
            .is_some_and(<[u8]>::is_ascii);
        if !head_is_text {
            continue;
        }
        for (at_ms, pid) in (1..128u64).flat_map(|t| (1..128u32).map(move |p| (t, p))) {
            let frame = unsalted_frame(&payload_of(len - base, at_ms, pid)?);
            if frame.is_ascii() {
                return Ok(format!("{FORGE_MARK}frame[{}]", String::from_utf8(frame)?));
            }
        }
    }
    anyhow::bail!("no forged frame of ASCII bytes found")
}

/// Text (bytes below 0x80) holding a forged frame header with unsalted checksums whose
/// length, about 16 MiB, runs past the end of any journal of a simulated session.
pub fn forged_header_text() -> anyhow::Result<String> {
    for low in 0..0x7f_u32 {
        for mid in 0..0x7f_u32 {
            let head = unsalted_header(0x0100_0000 | (mid << 8) | low, &[]);
            if head.is_ascii() {
                return Ok(format!(
                    "{FORGE_MARK}header[{}]",
                    String::from_utf8(head.to_vec())?
                ));
            }
        }
    }
    anyhow::bail!("no forged header of ASCII bytes found")
}

/// Flips one bit of the length in the header of the first frame whose payload holds forged
/// text (the frame a scan then resynchronises through).
pub fn flip_forged_holder(dir: &Path) -> anyhow::Result<()> {
    let reader = ov_journal::Reader::open(dir, Duration::from_secs(10))
        .with_context(|| format!("could not read {}", dir.display()))?;
    let mark = FORGE_MARK.as_bytes();
    let at = reader
        .frames()
        .filter_map(Result::ok)
        .find(|f| f.payload.windows(mark.len()).any(|w| w == mark))
        .map(|f| f.position)
        .context("no frame holds the forged text")?;
    drop(reader);
    let seg = ov_journal::segment_path(dir, at.segment);
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&seg)
        .with_context(|| format!("could not open {}", seg.display()))?;
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at.offset)?;
    b[0] ^= 0x01;
    f.write_all_at(&b, at.offset)?;
    f.sync_all()?;
    Ok(())
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    /// The bytes after `<mark>` in `text`.
    fn after<'a>(text: &'a str, mark: &str) -> &'a [u8] {
        let at = text.find(mark).expect("the mark") + mark.len();
        &text.as_bytes()[at..]
    }

    /// The forged frame is text (bytes below 0x80) and a whole frame with unsalted checksums
    /// (the journal's own encoding under `Salt::NONE`) whose payload decodes to the planned
    /// forged answer: what a version 1 reader would have taken for a frame.
    #[test]
    fn the_forged_frame_is_text_and_a_frame() {
        let text = forged_frame_text().unwrap();
        assert!(text.is_ascii());
        let b = after(&text, "frame[");
        let len = u32::from_le_bytes(b[..4].try_into().unwrap()) as usize;
        let payload = &b[16..16 + len];
        assert_eq!(unsalted_frame(payload)[..], b[..16 + len]);
        let env = ov_engine::codec::decode_event(payload).unwrap();
        match env.event {
            ov_engine::event::Event::MessagesPlanned { messages } => {
                assert!(messages[0].content.starts_with(FORGED_ANSWER));
            }
            other => panic!("{other:?}"),
        }
    }

    /// The forged header is text, is the journal's unsalted header of its length, and claims
    /// about 16 MiB.
    #[test]
    fn the_forged_header_is_text_and_a_header() {
        let text = forged_header_text().unwrap();
        assert!(text.is_ascii());
        let b = after(&text, "header[");
        let len = u32::from_le_bytes(b[..4].try_into().unwrap());
        assert!(len >= 0x0100_0000);
        assert_eq!(unsalted_header(len, &[])[..], b[..16]);
    }
}
