//! Atomic file replacement: temp file in the same directory, fsync, rename, fsync the directory.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use anyhow::Context;

/// Creates `dir` (and parents) with mode `mode` for the folders it creates.
pub fn create_dir(dir: &Path, mode: u32) -> anyhow::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(dir)
        .with_context(|| format!("could not create {}", dir.display()))
}

/// Replaces `path` with `bytes` atomically; the new file gets `mode`.
pub fn write(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .with_context(|| format!("{} has no parent folder", path.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(&tmp)
            .with_context(|| format!("could not create {}", tmp.display()))?;
        // The umask may have narrowed or the file may have existed: set the mode exactly.
        f.set_permissions(fs::Permissions::from_mode(mode))
            .with_context(|| format!("could not chmod {}", tmp.display()))?;
        f.write_all(bytes)
            .with_context(|| format!("could not write {}", tmp.display()))?;
        // Errors from the last write() are reported only on fsync/close.
        f.sync_all()
            .with_context(|| format!("could not sync {}", tmp.display()))?;
        fs::rename(&tmp, path)
            .with_context(|| format!("could not rename {} to {}", tmp.display(), path.display()))?;
        if let Ok(d) = fs::File::open(dir) {
            d.sync_all()
                .with_context(|| format!("could not sync {}", dir.display()))?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The mode of an existing file, if any.
pub fn mode_of(path: &Path) -> Option<u32> {
    fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}
