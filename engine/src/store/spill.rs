//! Spill files: events a process could not journal for want of the lock, written aside and
//! ingested by the next process that opens the journal.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ov_journal::Durability;

use super::{now_ms, SessionStore, StoreError};
use crate::event::{Envelope, Event};

impl SessionStore {
    /// Stamps `events` and writes them to a spill file in `dir` ([`crate::spill`]), for a
    /// process that could not get the journal's lock in time.
    pub fn spill(dir: &Path, events: Vec<Event>) -> Result<PathBuf, crate::spill::SpillError> {
        let at = now_ms();
        let pid = std::process::id();
        let envs: Vec<Envelope> = events
            .into_iter()
            .map(|event| Envelope {
                at_ms: at,
                pid,
                event,
            })
            .collect();
        crate::spill::write(dir, &envs)
    }

    /// Appends the events of every spill file in the journal directory, in name order, and
    /// removes each file once its events are durable; returns how many files were ingested.
    /// Each file's events go in one batch with [`Event::SpillIngested`], and a file whose name
    /// the journal already holds is only removed, so a crash between the append and the
    /// removal never appends twice. A damaged file is renamed `<name>.damaged` and journaled
    /// as a [`Event::Problem`]. Runs on every open; costs one directory read when there is
    /// nothing to ingest.
    pub fn ingest_spills(&self) -> Result<usize, StoreError> {
        let files = crate::spill::pending(self.dir());
        if files.is_empty() {
            return Ok(0);
        }
        let lock_path = self.dir().join(crate::spill::INGEST_LOCK);
        // Another process is ingesting: it will take these too.
        let Some(_ingesting) = ov_journal::FileLock::try_exclusive(&lock_path, Duration::ZERO)
            .map_err(|e| self.err(e))?
        else {
            return Ok(0);
        };
        let done: std::collections::BTreeSet<String> = self
            .events()?
            .into_iter()
            .filter_map(|(_, r)| match r.ok()?.event {
                Event::SpillIngested { name, .. } => Some(name),
                _ => None,
            })
            .collect();
        let mut ingested = 0;
        // Files that appeared after the listing above are left to the next writer.
        for path in crate::spill::pending(self.dir()) {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if !done.contains(&name) {
                match crate::spill::read(&path) {
                    Ok(mut envs) => {
                        let count = u32::try_from(envs.len()).unwrap_or(u32::MAX);
                        envs.push(self.stamp(Event::SpillIngested {
                            name: name.clone(),
                            events: count,
                        }));
                        self.append_envelopes(&envs, Durability::Sync)?;
                        ingested += 1;
                    }
                    Err(e) => {
                        log::error!("{e}");
                        let aside = crate::spill::set_aside_path(&path);
                        std::fs::rename(&path, &aside).map_err(|source| StoreError::Io {
                            path: path.clone(),
                            source,
                        })?;
                        self.append(
                            Event::Problem {
                                context: "spill".into(),
                                message: format!("{e}; kept as {}", aside.display()),
                            },
                            Durability::Sync,
                        )?;
                        continue;
                    }
                }
            }
            if let Err(source) = std::fs::remove_file(&path) {
                if source.kind() != std::io::ErrorKind::NotFound {
                    return Err(StoreError::Io { path, source });
                }
            }
            crate::spill::sync_dir(self.dir());
        }
        Ok(ingested)
    }
}
