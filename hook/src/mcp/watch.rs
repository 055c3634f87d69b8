//! Watches the credential files' directories and flags a reload when one of them changes.
//!
//! The flag only speeds things up: the proxy also compares the files' `stat` before every
//! request, so a watcher that cannot start (no inotify, missing directory) loses nothing.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};

/// Starts watching the parent directories of `files` (editors replace files by rename, so the
/// file itself is not watched). Keep the returned watcher alive.
pub fn start(files: Vec<PathBuf>, dirty: Arc<AtomicBool>) -> Option<RecommendedWatcher> {
    let names = files.clone();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(event) = res {
            if event.paths.iter().any(|p| names.iter().any(|f| f == p)) {
                dirty.store(true, Ordering::Release);
            }
        }
    })
    .ok()?;
    let mut watching = false;
    for f in &files {
        if let Some(dir) = f.parent().filter(|d| d.is_dir()) {
            watching |= watcher.watch(dir, RecursiveMode::NonRecursive).is_ok();
        }
    }
    watching.then_some(watcher)
}
