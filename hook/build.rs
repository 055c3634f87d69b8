//! Embeds the git commit of the build as `OVHOOK_GIT_COMMIT` for `ovhook --version`.
//!
//! The commit comes from `$OVHOOK_GIT_COMMIT` when set (release scripts, builds from a source
//! archive), else from `git rev-parse` in the source tree, else it is `unknown` (no git, or not a
//! checkout). A tree with uncommitted changes gets a `-dirty` suffix.

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn main() {
    println!("cargo:rerun-if-env-changed=OVHOOK_GIT_COMMIT");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let commit = match std::env::var("OVHOOK_GIT_COMMIT") {
        Ok(c) if !c.trim().is_empty() => c.trim().to_owned(),
        _ => match git(dir, &["rev-parse", "--short=12", "HEAD"]) {
            Some(c) if !c.is_empty() => {
                // Rebuild when HEAD moves or the branch it names does.
                for p in ["HEAD", "index"] {
                    if let Some(path) = git(dir, &["rev-parse", "--git-path", p]) {
                        let path = dir.join(path);
                        println!("cargo:rerun-if-changed={}", path.display());
                    }
                }
                if let Some(reference) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
                    if let Some(path) = git(dir, &["rev-parse", "--git-path", &reference]) {
                        println!("cargo:rerun-if-changed={}", dir.join(path).display());
                    }
                }
                let dirty = git(dir, &["status", "--porcelain", "--untracked-files=no"])
                    .is_some_and(|s| !s.is_empty());
                if dirty {
                    format!("{c}-dirty")
                } else {
                    c
                }
            }
            _ => "unknown".to_owned(),
        },
    };
    println!("cargo:rustc-env=OVHOOK_GIT_COMMIT={commit}");
}
