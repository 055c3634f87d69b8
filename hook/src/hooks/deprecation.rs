//! A server endpoint that says it is deprecated is logged once a day, not on every prompt.
//!
//! The day of the last notice (days since the epoch, UTC) is kept in
//! `<state root>/deprecation-notice`, shared by every session; a notice is logged when the
//! file holds another day (or nothing). A file that cannot be read or written only means
//! the notice may come again.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use ov_engine::client::Deprecated;

const NOTICE_FILE: &str = "deprecation-notice";
const DAY_MS: u64 = 24 * 3600 * 1000;

/// Logs `d` unless a notice was already logged today (`now_ms`).
pub fn notice_once_a_day(root: &Path, d: &Deprecated, now_ms: u64) {
    let path = root.join(NOTICE_FILE);
    let today = (now_ms / DAY_MS).to_string();
    let last = ov_engine::regular_file::read_prefix(&path, 64)
        .ok()
        .flatten()
        .unwrap_or_default();
    if last.trim_ascii() == today.as_bytes() {
        return;
    }
    log::warn!("server: {d}; recall prefers the successor (tier 1: search/search in context mode)");
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut f| f.write_all(today.as_bytes()));
    if let Err(e) = written {
        log::debug!("could not write {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notices(root: &Path, days: &[u64]) -> Vec<bool> {
        let d = Deprecated {
            endpoint: "/api/v1/search/recall".into(),
            successor: Some("/api/v1/search/search".into()),
        };
        days.iter()
            .map(|day| {
                let before = std::fs::read(root.join(NOTICE_FILE)).unwrap_or_default();
                notice_once_a_day(root, &d, day * DAY_MS + 5);
                std::fs::read(root.join(NOTICE_FILE)).unwrap_or_default() != before
            })
            .collect()
    }

    #[test]
    fn one_notice_a_day() {
        let tmp = tempfile::tempdir().expect("tmp");
        assert_eq!(
            notices(tmp.path(), &[20_000, 20_000, 20_000, 20_001, 20_001]),
            [true, false, false, true, false]
        );
    }
}
