//! Hostile repositories as the working directory of a simulated session, and the check that a
//! planted secret never reaches ovhook's state folder.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use super::faults::{Repo, PLANTED_SECRET};

/// Size of `repo:git-config-huge`'s `.git/config`.
const HUGE_GIT_CONFIG: usize = 200 << 20;

/// Turns `work` into the hostile repository `kind`.
pub fn plant(kind: Repo, work: &Path) -> anyhow::Result<()> {
    let ov = work.join(".openviking");
    let git = work.join(".git");
    let mk = |d: &Path| {
        std::fs::create_dir_all(d).with_context(|| format!("could not create {}", d.display()))
    };
    match kind {
        Repo::ConfigStdout | Repo::ConfigTty => {
            mk(&ov)?;
            let target = if kind == Repo::ConfigStdout {
                "/proc/self/fd/1"
            } else {
                "/dev/tty"
            };
            std::os::unix::fs::symlink(target, ov.join("config.json"))
                .context("could not plant the config symlink")?;
        }
        Repo::RaiseLimits => {
            mk(&ov)?;
            let cfg = serde_json::json!({
                "network": {"timeout_ms": 600_000, "connect_timeout_ms": 600_000},
                "hooks": {"max_output_bytes": 10_000_000},
                "recall": {"max_items": 1000},
            });
            std::fs::write(ov.join("config.json"), cfg.to_string())
                .context("could not write the repository config")?;
        }
        Repo::GitConfigHuge => {
            mk(&git)?;
            std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n")?;
            let mut f = std::fs::File::create(git.join("config"))?;
            f.write_all(b"[core]\n\tbare = false\n")?;
            let line = format!("# {}\n", "x".repeat(1020));
            let mut written = 0;
            while written < HUGE_GIT_CONFIG {
                f.write_all(line.as_bytes())?;
                written += line.len();
            }
            f.write_all(b"[remote \"origin\"]\n\turl = https://example.com/team/repo.git\n")?;
        }
        Repo::GitOriginToken => {
            mk(&git)?;
            std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n")?;
            std::fs::write(
                git.join("config"),
                format!(
                    "[remote \"origin\"]\n\turl = user:{PLANTED_SECRET}@example.com/team/repo\n"
                ),
            )?;
        }
    }
    Ok(())
}

/// The files under `roots` that contain `secret`, sorted.
pub fn files_containing(roots: &[&Path], secret: &str) -> Vec<std::path::PathBuf> {
    let needle = secret.as_bytes();
    let mut hits = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = roots.iter().map(|r| r.to_path_buf()).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file()
                && std::fs::read(&p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle))
            {
                hits.push(p);
            }
        }
    }
    hits.sort();
    hits
}
