//! The unreachable-server back-off shared by every session of the machine.
//!
//! # Context
//!
//! A session's journal records when its hooks found the server unreachable, but a second
//! session (or a new one) has its own journal and would wait on the same dead or slow server
//! again. So the window also lives in one small file under the state root, read by every hook
//! before it touches the network.
//!
//! # Design
//!
//! `<state root>/server-backoff.json`, 0600, replaced atomically (temp file + rename):
//! `{"url": <server base URL>, "until_ms": <unix ms>, "reason": <one line>}`. It applies only
//! to the URL it names (a reconfigured server is tried at once). A missing, unreadable or
//! foreign file means "no back-off": the file can only make hooks skip the network, never
//! make them wait. A window lasts at most [`crate::clock::MAX_BACKOFF_MS`], and one that ends
//! further away than that was written by a clock ahead of ours: it is over
//! ([`crate::clock::backing_off`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedBackoff {
    /// The server it applies to.
    pub url: String,
    /// Until when (unix ms) hooks skip that server.
    pub until_ms: u64,
    /// Why (the failure, one line).
    pub reason: String,
}

/// Where the shared back-off lives.
pub fn path(root: &Path) -> PathBuf {
    root.join("server-backoff.json")
}

/// The recorded back-off, if any (whether or not it is still running).
pub fn read(root: &Path) -> Option<SharedBackoff> {
    let bytes = crate::regular_file::read(&path(root), 64 << 10)
        .ok()
        .flatten()?;
    serde_json::from_slice(&bytes).ok()
}

/// True when hooks must skip `url` at `now_ms`.
pub fn active(root: &Path, url: &str, now_ms: u64) -> bool {
    read(root).is_some_and(|b| b.url == url && crate::clock::backing_off(b.until_ms, now_ms))
}

/// Starts (or extends) the window for `url`, for `for_ms` capped to
/// [`crate::clock::MAX_BACKOFF_MS`]. Best effort: a failure to write only means the next
/// session tries the server again.
pub fn start(root: &Path, url: &str, now_ms: u64, for_ms: u64, reason: &str) {
    let for_ms = crate::clock::backoff_len(for_ms);
    if for_ms == 0 {
        return;
    }
    let reason: String = reason
        .chars()
        .filter(|c| !c.is_control())
        .take(300)
        .collect();
    let b = SharedBackoff {
        url: url.to_owned(),
        until_ms: now_ms.saturating_add(for_ms),
        reason,
    };
    let Ok(text) = serde_json::to_vec(&b) else {
        return;
    };
    if crate::paths::create_private_dir(root).is_err() {
        return;
    }
    if crate::regular_file::replace_private(&path(root), &text).is_err() {
        log::warn!(
            "could not record the server back-off under {}",
            root.display()
        );
    }
}

/// Ends the window for `url` (the server answered). Leaves another URL's window alone.
pub fn clear(root: &Path, url: &str) {
    if read(root).is_some_and(|b| b.url == url) {
        let _ = std::fs::remove_file(path(root));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_window_per_url_started_and_cleared() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path().join("state");
        assert!(!active(&root, "http://a", 10));
        start(&root, "http://a", 10, 100, "refused\nat once");
        assert!(active(&root, "http://a", 50));
        assert!(!active(&root, "http://a", 110));
        assert!(!active(&root, "http://b", 50));
        assert_eq!(read(&root).expect("file").reason, "refusedat once");
        clear(&root, "http://b");
        assert!(active(&root, "http://a", 50));
        clear(&root, "http://a");
        assert!(!active(&root, "http://a", 50));
        start(&root, "http://a", 10, 0, "no window");
        assert!(read(&root).is_none());
    }

    #[test]
    fn a_window_written_by_a_clock_a_day_ahead_is_over() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path().join("state");
        let now = 1_800_000_000_000;
        let day = 24 * 3600 * 1000;
        start(&root, "http://a", now + day, 30_000, "down");
        assert!(!active(&root, "http://a", now), "the clock is right again");
        assert!(
            active(&root, "http://a", now + day),
            "the clock that wrote it"
        );
        start(&root, "http://a", now, 7 * day, "configured for a week");
        let b = read(&root).expect("file");
        assert_eq!(b.until_ms, now + crate::clock::MAX_BACKOFF_MS, "capped");
        assert!(active(&root, "http://a", now + 1000));
    }
}
