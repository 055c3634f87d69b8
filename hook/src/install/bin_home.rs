//! The binaries' stable home: `~/.openviking/ovhook/bin/ovhook` and `ovreplay` next to it.
//!
//! Hooks, plugins and MCP entries name their binary by absolute path. The binary a user runs
//! `ovhook install` with may live anywhere (an unpacked bundle, npm's or npx's cache, a cargo
//! target folder) and may move or vanish, so install copies it here and every entry it writes
//! names this copy. The folder is fixed under the home folder (not moved by `OVHOOK_STATE_DIR`
//! or `OPENVIKING_HOME`): a plugin manifest can name it as `$HOME/.openviking/ovhook/bin/ovhook`.
//!
//! Invariants:
//! * A copy is atomic: written to a temporary file in the same folder, synced, then renamed over
//!   the old one. A hook that started the old binary keeps running its inode; a hook that starts
//!   during the upgrade runs either the old or the new binary, never a partial file.
//! * A copy whose bytes are already in place writes nothing (a re-install changes nothing).
//! * `ovreplay` is copied when it sits next to the running `ovhook` (a bundle's `bin/`, an npm
//!   platform package, a cargo target folder); otherwise the home keeps what it had.
//! * Uninstall removes the folder's two binaries last, and only once nothing installed names them.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The binaries the home holds.
pub const BINARIES: [&str; 2] = ["ovhook", "ovreplay"];

/// `<home>/.openviking/ovhook/bin` ([`ov_engine::paths::bin_dir`]).
pub fn dir(home: &Path) -> PathBuf {
    ov_engine::paths::bin_dir(home)
}

/// `<home>/.openviking/ovhook/bin/ovhook`: the path every entry install writes names.
pub fn ovhook(home: &Path) -> PathBuf {
    dir(home).join("ovhook")
}

/// The stable home's `ovhook` as a plugin's hook command names it: the agent runs hook commands
/// through a shell, which expands `$HOME`; the double quotes keep a home folder with a space in
/// it one word.
pub const SHELL_WORD: &str = "\"$HOME/.openviking/ovhook/bin/ovhook\"";

/// A plugin's hook command running the stable home's binary for `harness`'s `sub`.
pub fn plugin_command(harness: &str, sub: &str) -> String {
    format!("{SHELL_WORD} --harness {harness} {sub}")
}

/// The binary a hook command `cmd` runs, as the agent's shell would expand its first word:
/// a double-quoted or bare word, `$HOME` / `${HOME}` the home folder, each `(name, value)` of
/// `vars` (a plugin root: `${CLAUDE_PLUGIN_ROOT}`) its value. A single-quoted word (what
/// config-file installs write) is read literally.
pub fn command_binary(home: &Path, cmd: &str, vars: &[(&str, &Path)]) -> PathBuf {
    let word = match cmd.trim_start().strip_prefix('"') {
        Some(rest) => rest.split('"').next().unwrap_or_default().to_owned(),
        None => super::hook_groups::first_word(cmd),
    };
    let mut expanded = word;
    for (name, value) in vars {
        expanded = expanded.replace(&format!("${{{name}}}"), &value.to_string_lossy());
    }
    let home = home.to_string_lossy();
    PathBuf::from(expanded.replace("${HOME}", &home).replace("$HOME", &home))
}

/// What [`place`] did with one binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placed {
    /// Copied from this path (new or upgraded).
    Copied(PathBuf),
    /// Already in place, byte for byte (or the running binary is the home's own).
    Unchanged,
}

/// Puts the running binary `exe` (canonical) and the `ovreplay` next to it into the home.
/// Returns what happened to each, in [`BINARIES`] order (`None`: no `ovreplay` next to `exe`).
pub fn place(home: &Path, exe: &Path) -> anyhow::Result<Vec<(PathBuf, Option<Placed>)>> {
    let dir = dir(home);
    super::atomic::create_dir(&dir, 0o755)?;
    let mut out = Vec::new();
    for name in BINARIES {
        let dest = dir.join(name);
        let src = if name == "ovhook" {
            Some(exe.to_path_buf())
        } else {
            exe.parent().map(|d| d.join(name)).filter(|p| p.is_file())
        };
        let placed = match src {
            None => None,
            Some(src) => Some(copy_one(&src, &dest)?),
        };
        out.push((dest, placed));
    }
    Ok(out)
}

/// Copies `src` to `dest` atomically unless `dest` already holds the same bytes.
fn copy_one(src: &Path, dest: &Path) -> anyhow::Result<Placed> {
    if fs::canonicalize(dest).ok().as_deref() == Some(src) {
        return Ok(Placed::Unchanged);
    }
    let bytes = fs::read(src).with_context(|| format!("could not read {}", src.display()))?;
    if fs::read(dest).is_ok_and(|old| old == bytes) {
        return Ok(Placed::Unchanged);
    }
    // Renaming over the old binary: a hook running it keeps its inode.
    super::atomic::replace(dest, &bytes, 0o755)?;
    Ok(Placed::Copied(src.to_path_buf()))
}

/// Removes the home's binaries and the files written beside them (`beside`: plugin shims),
/// and the `bin` folder when it is then empty. Returns the files removed.
pub fn remove(home: &Path, beside: &[&str]) -> anyhow::Result<Vec<PathBuf>> {
    let dir = dir(home);
    let mut removed = Vec::new();
    for name in BINARIES.iter().chain(beside) {
        let p = dir.join(name);
        match fs::remove_file(&p) {
            Ok(()) => removed.push(p),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("could not remove {}", p.display())),
        }
    }
    // Only an empty folder goes.
    let _ = fs::remove_dir(&dir);
    Ok(removed)
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::fs::PermissionsExt;

    fn bins(dir: &Path, tag: &str) -> PathBuf {
        fs::create_dir_all(dir).expect("dir");
        fs::write(dir.join("ovhook"), format!("ovhook {tag}")).expect("w");
        fs::write(dir.join("ovreplay"), format!("ovreplay {tag}")).expect("w");
        dir.join("ovhook")
    }

    #[test]
    fn places_both_replaces_atomically_and_keeps_running_inodes() {
        let t = tempfile::tempdir().expect("tmp");
        let home = t.path().join("home");
        let v1 = bins(&t.path().join("v1"), "1");
        let placed = place(&home, &v1).expect("place");
        assert_eq!(placed[0], (ovhook(&home), Some(Placed::Copied(v1.clone()))));
        assert_eq!(fs::read_to_string(ovhook(&home)).expect("r"), "ovhook 1");
        assert_eq!(
            fs::read_to_string(dir(&home).join("ovreplay")).expect("r"),
            "ovreplay 1"
        );
        let mode = fs::metadata(ovhook(&home)).expect("m").permissions().mode();
        assert_eq!(mode & 0o777, 0o755);

        // Same bytes: nothing written (the inode stays).
        let ino = fs::metadata(ovhook(&home)).expect("m").ino();
        let again = place(&home, &v1).expect("place");
        assert!(again.iter().all(|(_, p)| *p == Some(Placed::Unchanged)));
        assert_eq!(fs::metadata(ovhook(&home)).expect("m").ino(), ino);

        // An upgrade while "running": an open handle keeps reading the old bytes.
        let held = fs::File::open(ovhook(&home)).expect("open");
        let v2 = bins(&t.path().join("v2"), "2");
        place(&home, &v2).expect("place");
        assert_eq!(fs::read_to_string(ovhook(&home)).expect("r"), "ovhook 2");
        assert_ne!(fs::metadata(ovhook(&home)).expect("m").ino(), ino);
        assert_eq!(held.metadata().expect("m").ino(), ino);
        let mut old = String::new();
        std::io::Read::read_to_string(&mut &held, &mut old).expect("read");
        assert_eq!(old, "ovhook 1");
        // No temporary file is left behind.
        let names: Vec<_> = fs::read_dir(dir(&home))
            .expect("ls")
            .map(|e| e.expect("e").file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");

        // The home's own binary placing itself is unchanged.
        let own = fs::canonicalize(ovhook(&home)).expect("canon");
        assert_eq!(
            place(&home, &own).expect("place")[0].1,
            Some(Placed::Unchanged)
        );

        // A binary alone (no ovreplay next to it) leaves the home's ovreplay as it was.
        let lone = t.path().join("lone/ovhook");
        fs::create_dir_all(lone.parent().expect("p")).expect("dir");
        fs::write(&lone, "ovhook 3").expect("w");
        assert_eq!(place(&home, &lone).expect("place")[1].1, None);
        assert_eq!(
            fs::read_to_string(dir(&home).join("ovreplay")).expect("r"),
            "ovreplay 2"
        );

        assert_eq!(remove(&home, &[]).expect("rm").len(), 2);
        assert!(!dir(&home).exists());
        assert!(remove(&home, &[]).expect("rm").is_empty());
    }
}
