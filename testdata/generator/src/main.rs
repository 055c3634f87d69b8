//! `gen-sessions`: writes the committed test sessions, or the benchmark input.
//!
//! ```text
//! gen-sessions [--out DIR]             # DIR defaults to testdata/sessions
//! gen-sessions --big PATH [--bytes N]  # the 240-turn benchmark rollout, about N bytes (225 MB)
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use ov_testdata::{big, committed, expected_json, write_session, SessionSpec};

/// Counts bytes, writes nothing.
struct Sink(u64);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn size_of(spec: &SessionSpec) -> Result<u64> {
    let mut sink = Sink(0);
    write_session(spec, &mut sink)?;
    Ok(sink.0)
}

/// The benchmark rollout: the tool output size is solved linearly for `target` bytes.
fn write_big(path: &Path, target: u64) -> Result<()> {
    let (x0, x1) = (0usize, 4000usize);
    let s0 = size_of(&big(x0))?;
    let s1 = size_of(&big(x1))?;
    let per = (s1.saturating_sub(s0)) as f64 / (x1 - x0) as f64;
    let x = ((target.saturating_sub(s0)) as f64 / per.max(1.0)).round() as usize;
    let spec = big(x);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("could not create {}", dir.display()))?;
    }
    let file =
        File::create(path).with_context(|| format!("could not create {}", path.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let written = write_session(&spec, &mut out)
        .with_context(|| format!("could not write {}", path.display()))?;
    out.flush()?;
    let expected = spec.expected(&written.turn_ids);
    println!(
        "{}: {} bytes, {} lines, {} turns, {} expected messages, {} messages by the anchor's algorithm",
        path.display(),
        written.bytes,
        written.lines,
        spec.turns.len(),
        expected.len(),
        written.anchor_messages
    );
    Ok(())
}

fn write_committed(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    for spec in committed() {
        let path = dir.join(format!("{}.jsonl", spec.name));
        let mut buf = Vec::new();
        let written = write_session(&spec, &mut buf)?;
        std::fs::write(&path, &buf)
            .with_context(|| format!("could not write {}", path.display()))?;
        let exp = dir.join(format!("{}.expected.json", spec.name));
        let mut json = expected_json(&spec, &written);
        json.push('\n');
        std::fs::write(&exp, json).with_context(|| format!("could not write {}", exp.display()))?;
        println!(
            "{}: {} bytes, {} lines, {} expected messages, {} by the anchor's algorithm",
            path.display(),
            written.bytes,
            written.lines,
            spec.expected(&written.turn_ids).len(),
            written.anchor_messages
        );
    }
    Ok(())
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let mut out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../sessions");
    let mut big_path: Option<PathBuf> = None;
    let mut bytes: u64 = 225_000_000;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = args.next().context("--out needs a directory")?.into(),
            "--big" => big_path = Some(args.next().context("--big needs a path")?.into()),
            "--bytes" => bytes = args.next().context("--bytes needs a number")?.parse()?,
            "-h" | "--help" => {
                println!("gen-sessions [--out DIR] | gen-sessions --big PATH [--bytes N]");
                return Ok(());
            }
            other => bail!("unknown argument {other:?} (try --help)"),
        }
    }
    match big_path {
        Some(p) => write_big(&p, bytes),
        None => write_committed(&out),
    }
}
