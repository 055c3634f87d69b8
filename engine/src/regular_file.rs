//! Reading files that someone else may have planted: only regular files, bounded in size,
//! never blocking.
//!
//! # Context
//!
//! Hooks read files whose owner is not the user: a cloned repository's `.openviking/config.json`
//! and `.git/config`, ZCode's rollout. A plain `File::open` + `read_to_end` blocks forever on a
//! FIFO or a terminal (`config.json -> /proc/self/fd/1`, `/dev/tty`), and reads a 200 MB file
//! whole. Every read here:
//!
//! ```text
//!  stat (follows symlinks) ── not a regular file ──► NotRegular   (no open at all)
//!  open(O_RDONLY | O_NONBLOCK | O_CLOEXEC)          (a FIFO swapped in meanwhile opens at once)
//!  fstat the open descriptor ── not regular ──────► NotRegular   (the race is closed here)
//!  size > cap ────────────────────────────────────► TooLarge     (`read`; `read_prefix` stops)
//!  read at most cap bytes
//! ```
//!
//! Invariant: no call in this module can wait on another process.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Replaces `path` with `bytes` (mode 0600) without ever opening `path` itself: a new temp
/// file beside it (`O_EXCL`, so nothing planted under that name is opened), then a rename over
/// `path`. A FIFO or a link at `path` is replaced, never written through or waited on. For
/// ovhook's own small state files; a failure leaves no temp file behind.
pub fn replace_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegularFileError {
    /// The path names a FIFO, a device, a socket or a directory.
    #[error("{path}: not a regular file ({kind})")]
    NotRegular {
        /// The path as given.
        path: PathBuf,
        /// What it is instead (`fifo`, `character device`, …).
        kind: &'static str,
    },
    /// Larger than the cap.
    #[error("{path}: {size} bytes, more than the {max} allowed")]
    TooLarge {
        /// The path as given.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The cap.
        max: u64,
    },
    /// Any other I/O failure.
    #[error("{path}: {source}")]
    Io {
        /// The path as given.
        path: PathBuf,
        /// The failure.
        source: io::Error,
    },
}

fn kind_of(ft: std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "directory"
    } else if ft.is_fifo() {
        "fifo"
    } else if ft.is_char_device() {
        "character device"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// Opens `path` for reading when it is a regular file, without ever blocking. `Ok(None)` when
/// it does not exist. The returned file is in blocking mode again (reads of a regular file
/// never wait) and its length is returned with it.
pub fn open(path: &Path) -> Result<Option<(File, u64)>, RegularFileError> {
    let io_err = |source: io::Error| RegularFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(e)),
    };
    if !meta.file_type().is_file() {
        return Err(RegularFileError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of(meta.file_type()),
        });
    }
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(e)),
    };
    let meta = file.metadata().map_err(io_err)?;
    if !meta.file_type().is_file() {
        return Err(RegularFileError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of(meta.file_type()),
        });
    }
    clear_nonblock(&file).map_err(io_err)?;
    Ok(Some((file, meta.len())))
}

/// [`open`] for streaming readers that speak `io::Result`: the file alone, `Ok(None)` when it
/// does not exist, and a FIFO, device or directory as an `InvalidInput` error naming the path.
pub fn open_stream(path: &Path) -> io::Result<Option<File>> {
    match open(path) {
        Ok(f) => Ok(f.map(|(f, _)| f)),
        Err(RegularFileError::Io { source, .. }) => Err(source),
        Err(e) => Err(io::Error::new(io::ErrorKind::InvalidInput, e.to_string())),
    }
}

fn clear_nonblock(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function's caller owns; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The whole file, when it is a regular file of at most `max` bytes. `Ok(None)` when it does
/// not exist.
pub fn read(path: &Path, max: u64) -> Result<Option<Vec<u8>>, RegularFileError> {
    let Some((file, len)) = open(path)? else {
        return Ok(None);
    };
    if len > max {
        return Err(RegularFileError::TooLarge {
            path: path.to_path_buf(),
            size: len,
            max,
        });
    }
    let bytes = read_at_most(file, max, path)?;
    if bytes.len() as u64 > max {
        return Err(RegularFileError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            max,
        });
    }
    Ok(Some(bytes))
}

/// At most the first `max` bytes of a regular file (a larger file is not an error: its head
/// is returned). `Ok(None)` when it does not exist.
pub fn read_prefix(path: &Path, max: u64) -> Result<Option<Vec<u8>>, RegularFileError> {
    let Some((file, _)) = open(path)? else {
        return Ok(None);
    };
    let mut bytes = read_at_most(file, max, path)?;
    bytes.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    Ok(Some(bytes))
}

/// [`read`] as UTF-8 text (invalid sequences replaced).
pub fn read_text(path: &Path, max: u64) -> Result<Option<String>, RegularFileError> {
    Ok(read(path, max)?.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// Up to `max + 1` bytes (one more than allowed, so that a file grown since `fstat` shows).
fn read_at_most(file: File, max: u64, path: &Path) -> Result<Vec<u8>, RegularFileError> {
    let mut out = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|source| RegularFileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(p: &Path) {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(p.as_os_str().as_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn regular_files_are_read_whole_or_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("f");
        assert!(read(&p, 10).expect("absent").is_none());
        std::fs::write(&p, b"hello").expect("write");
        assert_eq!(read(&p, 10).expect("read").as_deref(), Some(&b"hello"[..]));
        assert!(matches!(
            read(&p, 4),
            Err(RegularFileError::TooLarge {
                size: 5,
                max: 4,
                ..
            })
        ));
        assert_eq!(
            read_prefix(&p, 4).expect("prefix").as_deref(),
            Some(&b"hell"[..])
        );
    }

    #[test]
    fn fifos_devices_and_directories_are_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tmp");
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).expect("symlink");
        for p in [
            fifo.as_path(),
            link.as_path(),
            Path::new("/dev/null"),
            dir.path(),
        ] {
            assert!(
                matches!(read(p, 1 << 20), Err(RegularFileError::NotRegular { .. })),
                "{}",
                p.display()
            );
            assert!(matches!(
                read_prefix(p, 1 << 20),
                Err(RegularFileError::NotRegular { .. })
            ));
        }
    }
}
