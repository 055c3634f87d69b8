//! A JSON configuration file that an install edits in place: read once, checked by its
//! [`PlaceFormat`](super::target::PlaceFormat), changed in memory, written back only when its
//! rendering differs from the bytes read.
//!
//! Reading refuses anything but a regular file without ever blocking (a FIFO is refused before
//! it is opened) and follows symlinks. Writing goes through [`atomic::write`] (through a
//! symlink, never onto a read-only file); it keeps the previous bytes as `<file>.bak` (0600)
//! and, the first time ovhook changes a file, the user's own bytes as `<file>.ovhook-orig`
//! ([`original`]), keeps the mode of an existing file and creates a new one
//! 0600 in 0700 folders. Key order is preserved (`serde_json` with `preserve_order`) and every
//! top-level member not changed keeps its bytes ([`json_splice`](super::json_splice)), so a
//! re-install rewrites a file byte for byte.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::{Map, Value};

use super::{atomic, original};

/// Largest settings file read: far above any real one (`~/.claude.json`, which Claude Code
/// grows with every project, reaches a few MiB), low enough to refuse a file that is not one.
pub const MAX_BYTES: u64 = 256 << 20;

/// The parsed file.
#[derive(Debug, Clone)]
pub struct JsonDoc {
    /// Where it lives.
    pub path: PathBuf,
    /// The top-level object (key order preserved).
    pub root: Map<String, Value>,
    /// The exact bytes read; `None` when the file did not exist.
    pub original: Option<Vec<u8>>,
}

impl JsonDoc {
    /// Reads `path`, a `describe` (for the error). A missing or blank file is an empty object;
    /// anything but a JSON object is an error naming the path (the file is never touched).
    pub fn read(path: &Path, describe: &str) -> anyhow::Result<JsonDoc> {
        let bytes = match ov_engine::regular_file::read(path, MAX_BYTES) {
            Ok(Some(b)) => b,
            Ok(None) => {
                return Ok(JsonDoc {
                    path: path.to_path_buf(),
                    root: Map::new(),
                    original: None,
                })
            }
            Err(ov_engine::regular_file::RegularFileError::NotRegular { kind, .. }) => bail!(
                "{} is a {kind}, not a regular file: ovhook edits only regular files; move it \
                 away and re-run",
                path.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
        };
        let root = parse_object(&bytes).with_context(|| refusal(path, describe))?;
        Ok(JsonDoc {
            path: path.to_path_buf(),
            root,
            original: Some(bytes),
        })
    }

    /// The file as it would be written: over the original text, every top-level member not
    /// changed keeps its bytes ([`json_splice`](super::json_splice)); a new file (or text that
    /// cannot be followed) is pretty JSON with a final newline.
    pub fn render(&self) -> Vec<u8> {
        if let Some(out) = self
            .original
            .as_deref()
            .and_then(|o| super::json_splice::splice(o, &self.root))
        {
            return out;
        }
        let mut out = serde_json::to_vec_pretty(&Value::Object(self.root.clone()))
            .unwrap_or_else(|_| b"{}".to_vec());
        out.push(b'\n');
        out
    }

    /// True when writing would change the file. A file that does not exist and would be an
    /// empty object is not created.
    pub fn changed(&self) -> bool {
        match &self.original {
            None => !self.root.is_empty(),
            Some(bytes) => bytes.as_slice() != self.render().as_slice(),
        }
    }

    /// `<file>.bak`.
    pub fn backup_path(&self) -> PathBuf {
        backup_path(&self.path)
    }

    /// Install's write: the file if it [changed](Self::changed), the user's own bytes kept in
    /// `<file>.ovhook-orig` unless an earlier install kept them. Returns whether it wrote.
    pub fn save(&self) -> anyhow::Result<bool> {
        if !self.changed() {
            return Ok(false);
        }
        if let Some(old) = &self.original {
            original::keep(&self.path, old)?;
        }
        self.write_bytes(&self.render())?;
        Ok(true)
    }

    /// Replaces the file with `bytes`, the previous bytes kept as `<file>.bak`.
    pub fn write_bytes(&self, bytes: &[u8]) -> anyhow::Result<()> {
        let dir = self
            .path
            .parent()
            .with_context(|| format!("{} has no parent folder", self.path.display()))?;
        atomic::create_dir(dir, 0o700)?;
        let mode = atomic::mode_of(&self.path).unwrap_or(0o600);
        if let Some(old) = &self.original {
            atomic::write(&self.backup_path(), old, 0o600)?;
        }
        atomic::write(&self.path, bytes, mode)
    }
}

/// The error line for a file we will not edit.
pub fn refusal(path: &Path, describe: &str) -> String {
    format!(
        "{} is not a valid {describe}; fix it (or move it away) and re-run",
        path.display()
    )
}

/// Parses a JSON object; blank input is an empty object.
pub fn parse_object(bytes: &[u8]) -> anyhow::Result<Map<String, Value>> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    let value: Value = serde_json::from_slice(bytes).context("malformed JSON")?;
    let Value::Object(root) = value else {
        bail!("the top level is not a JSON object");
    };
    Ok(root)
}

/// `<file>.bak` next to `path`.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".bak");
    path.with_file_name(name)
}

/// `parent[key]` as an object, created (or replaced, if not an object) as needed.
pub fn object_at<'a>(parent: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = parent
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(m) => m,
        _ => unreachable!("just made an object"),
    }
}
