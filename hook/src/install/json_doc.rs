//! A JSON configuration file that an install edits in place: read once, checked by its
//! [`PlaceFormat`](super::target::PlaceFormat), changed in memory, written back only when its
//! rendering differs from the bytes read.
//!
//! Writing keeps the previous bytes as `<file>.bak` (0600), replaces the file atomically, keeps
//! the mode of an existing file and creates a new one 0600 in 0700 folders. Key order is
//! preserved (`serde_json` with `preserve_order`), so a re-install rewrites a file byte for byte.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::{Map, Value};

use super::atomic;

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
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(JsonDoc {
                    path: path.to_path_buf(),
                    root: Map::new(),
                    original: None,
                })
            }
            Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
        };
        let root = parse_object(&bytes).with_context(|| refusal(path, describe))?;
        Ok(JsonDoc {
            path: path.to_path_buf(),
            root,
            original: Some(bytes),
        })
    }

    /// The file as it would be written: pretty JSON and a final newline.
    pub fn render(&self) -> Vec<u8> {
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

    /// Writes the file if it [changed](Self::changed). Returns whether it wrote.
    pub fn save(&self) -> anyhow::Result<bool> {
        if !self.changed() {
            return Ok(false);
        }
        let dir = self
            .path
            .parent()
            .with_context(|| format!("{} has no parent folder", self.path.display()))?;
        atomic::create_dir(dir, 0o700)?;
        let mode = atomic::mode_of(&self.path).unwrap_or(0o600);
        if let Some(old) = &self.original {
            atomic::write(&self.backup_path(), old, 0o600)?;
        }
        atomic::write(&self.path, &self.render(), mode)?;
        Ok(true)
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
