//! Generators for `testdata/`: ZCode rollout sessions in the real `model_io` line format
//! (`docs/zcode-hooks.md`), each with the messages a correct first capture sends.
//!
//! # Design
//!
//! A session is described by a [`SessionSpec`] (turns, calls, windows, faults);
//! [`write_session`] writes it line by line exactly as ZCode does (one line per model
//! call, each repeating the conversation, so files grow O(n²)); [`SessionSpec::expected`]
//! derives the correct capture from the spec itself, never from the file, so it is an
//! independent oracle for the engine's reader. Everything is seeded ([`Rng`]): the same
//! spec gives the same bytes.
#![deny(missing_docs)]

mod scenarios;
mod spec;
pub mod test_layout;
mod write;

pub use scenarios::{big, committed, random};
pub use spec::{
    CallSpec, ExpectedMessage, Finish, Rng, SessionSpec, Text, ToolUse, TurnSpec, Window,
};
pub use write::{write_session, Written};

/// The expected `plan --json` output of a written session.
pub fn expected_json(spec: &SessionSpec, written: &Written) -> String {
    serde_json::to_string(&spec.expected(&written.turn_ids)).unwrap_or_else(|_| "[]".to_owned())
}

/// Counts bytes, writes nothing.
struct Sink(u64);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn size_of(spec: &SessionSpec) -> std::io::Result<u64> {
    let mut sink = Sink(0);
    write_session(spec, &mut sink)?;
    Ok(sink.0)
}

/// Writes the benchmark rollout ([`big`]: 240 turns, 3 calls per tool-using turn) to
/// `path`, its tool outputs sized so the file is about `target` bytes (225 MB for the
/// benchmark). Streams: memory stays small whatever the size.
pub fn write_big(path: &std::path::Path, target: u64) -> std::io::Result<(SessionSpec, Written)> {
    use std::io::Write;
    let (x0, x1) = (0usize, 4000usize);
    let s0 = size_of(&big(x0))?;
    let s1 = size_of(&big(x1))?;
    let per = s1.saturating_sub(s0) as f64 / (x1 - x0) as f64;
    let x = (target.saturating_sub(s0) as f64 / per.max(1.0)).round() as usize;
    let spec = big(x);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("jsonl.tmp");
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
    let written = write_session(&spec, &mut out)?;
    out.flush()?;
    drop(out);
    std::fs::rename(&tmp, path)?;
    Ok((spec, written))
}
