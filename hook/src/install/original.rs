//! The user's own bytes of every file ovhook edits, and when uninstall gives them back.
//!
//! # Design
//!
//! ```text
//!  install (the file changes)   <file>.ovhook-orig absent ── write it: the bytes before ovhook
//!                               present ── keep it (a second install must not overwrite it)
//!  uninstall                    the file is the original plus our entries only ── write the
//!                                   original bytes back, byte for byte
//!                               anything else changed since ── remove only our entries
//!                               either way ── delete <file>.ovhook-orig
//! ```
//!
//! "The original plus our entries only" is decided on the parsed files, by the place's own
//! format: the original holds nothing of ours, and the current file with ours removed equals
//! the original with ours merged and removed again (so whatever a merge adds around our
//! entries, like the containers it creates, counts as ours). A user edit after install makes
//! them differ, and that edit is kept. Install re-renders the entries it changes (numbers such
//! as `1.0e2` and `\u` escapes inside them come back normalised), so the original bytes are
//! what make an install then uninstall give back the same file.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::{Map, Value};

use super::atomic;
use super::json_doc::parse_object;
use super::target::Place;

/// `<file>.ovhook-orig` next to `file`.
pub fn path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".ovhook-orig");
    file.with_file_name(name)
}

/// Keeps `bytes` (the file before install changes it) unless an original is already kept.
pub fn keep(file: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let orig = path(file);
    if std::fs::symlink_metadata(&orig).is_ok() {
        return Ok(());
    }
    atomic::write(&orig, bytes, 0o600)
}

/// The kept original of `file`, if any.
pub fn read(file: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    let orig = path(file);
    ov_engine::regular_file::read(&orig, super::json_doc::MAX_BYTES)
        .with_context(|| format!("could not read {}", orig.display()))
}

/// Deletes the kept original of `file` (nothing when there is none).
pub fn discard(file: &Path) -> anyhow::Result<()> {
    let orig = path(file);
    match std::fs::remove_file(&orig) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("could not remove {}", orig.display())),
    }
}

/// True when `current` (the file as uninstall found it, ours still in it) is the `original`
/// with only our entries added, so that writing `original` back loses nothing of the user's.
pub fn restorable(place: &Place, current: &Map<String, Value>, original: &[u8]) -> bool {
    let format = place.format;
    let Ok(mut orig) = parse_object(original) else {
        return false;
    };
    if format.validate(&orig).is_err() || format.remove(&mut orig.clone()) > 0 {
        // Entries of ours (or the Node plugin's, which install replaced) are in it: giving it
        // back would put them back.
        return false;
    }
    let exe = format
        .binaries(current)
        .into_iter()
        .next()
        .map_or_else(|| PathBuf::from("/ovhook"), PathBuf::from);
    format.merge(&mut orig, &exe, format.present(current).and(place.holds));
    format.remove(&mut orig);
    let mut stripped = current.clone();
    format.remove(&mut stripped);
    orig == stripped
}
