//! Shared helpers.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use ov_journal::{Error, FrameKind, Journal, Options, Reader};

/// A committed golden journal directory.
pub fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/journal-frames")
        .join(name)
}

/// Copies the files of `src` into a new directory `dst`.
pub fn copy_dir(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
}

/// A copy of golden journal `name` in a fresh temp dir (tests must not repair committed files).
pub fn golden_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join(name);
    copy_dir(&golden(name), &d);
    (t, d)
}

pub type Frames = Vec<(FrameKind, Vec<u8>)>;

/// Every frame of `r` until the first error.
pub fn collect(r: &Reader) -> (Frames, Option<Error>) {
    let mut out = Vec::new();
    for f in r.frames() {
        match f {
            Ok(f) => out.push((f.kind, f.payload.to_vec())),
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

/// Opens `dir` and reads every frame.
pub fn open_and_read(dir: &Path, opts: Options) -> Result<(Frames, Option<Error>), Error> {
    let j = Journal::open(dir, opts)?;
    let r = j.reader()?;
    Ok(collect(&r))
}

/// Options with a long lock wait (the test machine is shared and slow).
pub fn patient() -> Options {
    Options {
        lock_timeout: std::time::Duration::from_secs(60),
        ..Options::default()
    }
}

/// A command that re-runs this test binary as a child with `role`.
pub fn child(role: &str, dir: &Path) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "child_entry",
        "--exact",
        "--nocapture",
        "--test-threads",
        "1",
        "-q",
    ])
    .env("OVJ_CHILD_ROLE", role)
    .env("OVJ_CHILD_DIR", dir);
    c
}

/// A small deterministic PRNG (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub fn from_time() -> (Rng, u64) {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        (Rng::new(seed), seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Filler bytes determined by `(a, b)`, `len` long: lets a reader verify a payload is intact.
pub fn filler(a: u64, b: u64, len: usize) -> Vec<u8> {
    let mut r = Rng::new(a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_add(1));
    (0..len).map(|_| r.next() as u8).collect()
}

/// Records `log` output so tests can check warnings.
pub struct Capture(pub Mutex<Vec<String>>);

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        self.0
            .lock()
            .unwrap()
            .push(format!("{} {}", record.level(), record.args()));
    }
    fn flush(&self) {}
}

pub static LOG: Capture = Capture(Mutex::new(Vec::new()));

/// Installs [`LOG`] (once).
pub fn capture_logs() {
    let _ = log::set_logger(&LOG);
    log::set_max_level(log::LevelFilter::Warn);
}

/// Captured lines that contain `needle`.
pub fn logged(needle: &str) -> Vec<String> {
    LOG.0
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains(needle))
        .cloned()
        .collect()
}
