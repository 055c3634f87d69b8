//! `<state root>/installs.json`: what `ovhook install` wrote outside the user's own files, so
//! `ovhook uninstall` and a re-install after an upgrade find every place.
//!
//! ```text
//! { "version": 1,
//!   "projects": [ { "harness": "zcode", "root": "/abs/repo" }, ... ],   // project-scope installs
//!   "created":  [ "/abs/file", ... ] }                                   // files install created
//! ```
//!
//! A file listed in `created` that holds nothing but an empty object after uninstall is deleted.
//! The manifest is 0600 in the 0700 state root; it names folders, never credentials.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::atomic;

/// One project-scope install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Project {
    /// The install target's name (`"zcode"`).
    pub harness: String,
    /// The repository root.
    pub root: PathBuf,
}

/// The manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version (1).
    pub version: u32,
    /// Project-scope installs, in the order they were first made.
    #[serde(default)]
    pub projects: Vec<Project>,
    /// Files an install created.
    #[serde(default)]
    pub created: Vec<PathBuf>,
}

/// `<state root>/installs.json`.
pub fn path(state_root: &Path) -> PathBuf {
    state_root.join("installs.json")
}

impl Manifest {
    /// Reads the manifest; a missing file is an empty manifest, a malformed one an error.
    pub fn read(path: &Path) -> anyhow::Result<Manifest> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Manifest {
                    version: 1,
                    ..Manifest::default()
                })
            }
            Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
        };
        let m: Manifest = serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "{} is malformed; fix it or move it away and re-run",
                path.display()
            )
        })?;
        if m.version != 1 {
            bail!(
                "{} has version {}, which this ovhook does not know",
                path.display(),
                m.version
            );
        }
        Ok(m)
    }

    /// Writes the manifest (0600, folders 0700); an empty manifest deletes the file.
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        if self.projects.is_empty() && self.created.is_empty() {
            return match std::fs::remove_file(path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e).with_context(|| format!("could not remove {}", path.display())),
            };
        }
        let dir = path
            .parent()
            .with_context(|| format!("{} has no parent folder", path.display()))?;
        atomic::create_dir(dir, 0o700)?;
        let mut bytes = serde_json::to_vec_pretty(self).context("could not encode the manifest")?;
        bytes.push(b'\n');
        if std::fs::read(path).ok().as_deref() == Some(bytes.as_slice()) {
            return Ok(());
        }
        atomic::write(path, &bytes, 0o600)
    }

    /// Records a project install (once).
    pub fn add_project(&mut self, harness: &str, root: &Path) {
        let p = Project {
            harness: harness.to_owned(),
            root: root.to_path_buf(),
        };
        if !self.projects.contains(&p) {
            self.projects.push(p);
        }
    }

    /// Records a file an install created (once).
    pub fn add_created(&mut self, file: &Path) {
        if !self.created.iter().any(|c| c == file) {
            self.created.push(file.to_path_buf());
        }
    }

    /// The roots of `harness`'s project installs.
    pub fn project_roots(&self, harness: &str) -> Vec<PathBuf> {
        self.projects
            .iter()
            .filter(|p| p.harness == harness)
            .map(|p| p.root.clone())
            .collect()
    }
}
