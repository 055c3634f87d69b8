//! ovreplay's integration tests: one binary (one test binary per crate).
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic there is a failed test"
)]
#![expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]

mod cli;
mod compact;
mod dump;
mod fake_ovhook;
mod follow;
mod golden;
mod plan;
mod privacy;
mod sessions;
mod simulate_embedded;
mod simulate_server;
mod state;
mod verify;
mod why;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use assert_cmd::Command;

/// The ovreplay under test.
pub fn ovreplay() -> Command {
    Command::cargo_bin("ovreplay").expect("ovreplay is built")
}

/// A committed fixture under `tests/it/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures")
        .join(name)
}

/// A committed golden journal under `testdata/journal-sessions/` (see its README).
pub fn golden(name: &str) -> PathBuf {
    workspace().join("testdata/journal-sessions").join(name)
}

/// Runs ovreplay with `args`; returns (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = ovreplay()
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("ovreplay ran");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs ovreplay on a golden journal (`{j}` in `args` is replaced by its path) and returns its
/// stdout, asserting exit 0.
pub fn on_golden(name: &str, args: &[&str]) -> String {
    let j = golden(name);
    let j = j.to_str().expect("utf-8 path");
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "{j}" { j } else { a })
        .collect();
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "ovreplay {args:?} failed: {err}");
    out
}

/// Copies a journal directory (segments and lock file) to `to`.
pub fn copy_journal(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy");
    for e in std::fs::read_dir(from).expect("read the journal") {
        let p = e.expect("entry").path();
        if p.is_file() {
            std::fs::copy(&p, to.join(p.file_name().expect("a name"))).expect("copy");
        }
    }
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The real ovhook, next to ovreplay; built once with `cargo build -p ovhook` when missing
/// (`cargo test -p ovreplay` alone does not build other packages' binaries).
pub fn ovhook() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let ovreplay = assert_cmd::cargo::cargo_bin("ovreplay");
        let bin = ovreplay.with_file_name("ovhook");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "-p", "ovhook", "--bin", "ovhook"])
            .current_dir(workspace())
            .status()
            .expect("could not run cargo build -p ovhook");
        assert!(status.success(), "cargo build -p ovhook failed");
        assert!(
            bin.is_file(),
            "ovhook not found at {} after building it",
            bin.display()
        );
        bin
    })
}

/// The URL of the test server, or `None` when server tests are explicitly skipped
/// (`OVHOOK_SKIP_SERVER_TESTS=1`). Panics when neither is set: a missing server must not
/// look like a pass.
pub fn server_url() -> Option<String> {
    if let Some(url) = std::env::var("OVHOOK_TEST_URL")
        .ok()
        .filter(|u| !u.is_empty())
    {
        return Some(url);
    }
    if std::env::var("OVHOOK_SKIP_SERVER_TESTS").as_deref() == Ok("1") {
        eprintln!("skipped: OVHOOK_SKIP_SERVER_TESTS=1");
        return None;
    }
    panic!(
        "OVHOOK_TEST_URL is not set: start a dev-mode OpenViking server (scripts/openviking-server.sh) \
         and export OVHOOK_TEST_URL, or set OVHOOK_SKIP_SERVER_TESTS=1"
    );
}

/// Runs `ovreplay simulate … --json` and returns (exit code, parsed report, stderr).
pub fn simulate(args: &[&str]) -> (i32, serde_json::Value, String) {
    let out = ovreplay()
        .arg("simulate")
        .args(args)
        .arg("--json")
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .expect("ovreplay ran");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("simulate printed no JSON ({e}):\nstdout: {stdout}\nstderr: {stderr}")
    });
    (out.status.code().unwrap_or(-1), report, stderr)
}

/// Every file in `tests/it` is a declared module, and nothing is left in `tests/` itself.
#[test]
fn no_forgotten_test_files() {
    let problems =
        ov_testdata::test_layout::forgotten_test_files(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(problems.is_empty(), "{problems:#?}");
}
