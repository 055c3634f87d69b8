//! Replacing a user's file without harming it: the one place every install write goes through.
//!
//! ```text
//!  path ── a symlink? ── follow it (and every link after it) ──► the file it names
//!  the file exists and is not a regular file (FIFO, device, folder) ──► refused, never opened
//!  the file exists and we may not write it (mode bits, checked) ──────► refused
//!  temp file next to the file, fsync, rename onto the file, fsync the folder
//! ```
//!
//! A symlink (a dotfiles repository's) therefore stays a symlink: the file it points to is
//! replaced. A read-only file is the user saying "do not edit": the mode bits are checked
//! explicitly, because a rename replaces a read-only file and root may write any file.
//! [`check_replaceable`] is what install and uninstall call on every file before writing any.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// Symbolic links followed before giving up (the kernel's own limit).
const MAX_LINKS: usize = 40;

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

/// The file `path` names once every symbolic link is followed (`path` itself when it is not a
/// link). The file need not exist: a dangling link resolves to where it points.
pub fn resolve(path: &Path) -> anyhow::Result<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&at)
                    .with_context(|| format!("could not read the link {}", at.display()))?;
                // A relative target is relative to the link's folder; an absolute one replaces.
                at = match at.parent() {
                    Some(dir) => dir.join(to),
                    None => to,
                };
            }
            _ => return Ok(at),
        }
    }
    bail!(
        "{}: more than {MAX_LINKS} symbolic links to follow",
        path.display()
    )
}

/// Checks that the file at `path` (links followed) may be replaced: it does not exist, or it
/// is a regular file we may write. Never opens the file.
pub fn check_replaceable(path: &Path) -> anyhow::Result<()> {
    let target = resolve(path)?;
    let meta = match fs::metadata(&target) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("could not stat {}", target.display())),
    };
    if !meta.file_type().is_file() {
        bail!(
            "{} is not a regular file: ovhook edits only regular files; move it away and re-run",
            path.display()
        );
    }
    if !may_write(&target, &meta) {
        let shown = if target == path {
            path.display().to_string()
        } else {
            format!("{} (-> {})", path.display(), target.display())
        };
        bail!(
            "{shown} is read-only (mode {:o}): ovhook does not edit a file you made read-only; \
             make it writable (chmod u+w) and re-run, or edit it yourself",
            meta.mode() & 0o7777
        );
    }
    Ok(())
}

/// True when the mode bits let this process write `meta`'s file: the owner's write bit when
/// we own it, else some write bit and `access(W_OK)` (root passes `access` for any file).
fn may_write(path: &Path, meta: &fs::Metadata) -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if meta.uid() == euid {
        return meta.mode() & 0o200 != 0;
    }
    if meta.mode() & 0o022 == 0 {
        return false;
    }
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path; access only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// Replaces the file at `path` with `bytes` atomically: through a symlink, the file it points
/// to (the link stays); a new file gets `mode`. Refuses what [`check_replaceable`] refuses.
pub fn write(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    check_replaceable(path)?;
    replace(&resolve(path)?, bytes, mode)
}

/// Puts `bytes` at `target` itself (a link there is replaced, not followed): a temp file in the
/// same folder with `mode`, fsync, rename onto `target`, fsync the folder. A process that has
/// the old file open or running keeps its inode. Callers decide what may be replaced; install
/// writes go through [`write()`].
pub fn replace(target: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    let dir = target
        .parent()
        .with_context(|| format!("{} has no parent folder", target.display()))?;
    let name = target
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
        fs::rename(&tmp, target).with_context(|| {
            format!("could not rename {} to {}", tmp.display(), target.display())
        })?;
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

/// The mode of an existing file (links followed), if any.
pub fn mode_of(path: &Path) -> Option<u32> {
    fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}
