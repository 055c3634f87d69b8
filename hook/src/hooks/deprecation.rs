//! A server endpoint that says it is deprecated is logged once a day, not on every prompt.
//!
//! The day of the last notice (days since the epoch, UTC) is kept in
//! `<state root>/deprecation-notice`, shared by every session; a notice is logged when the
//! file holds another day (or nothing). A file that cannot be read or written only means
//! the notice may come again.

use std::path::Path;

use ov_engine::client::Deprecated;
use ov_engine::retention::DAY_MS;

const NOTICE_FILE: &str = "deprecation-notice";

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
    // Never opened for writing: a FIFO planted under the name must not hold the prompt hook.
    if let Err(e) = ov_engine::regular_file::replace_private(&path, today.as_bytes()) {
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

    #[test]
    fn a_fifo_under_the_notice_name_is_replaced_not_waited_on() {
        let tmp = tempfile::tempdir().expect("tmp");
        let fifo = tmp.path().join(NOTICE_FILE);
        let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let d = Deprecated {
            endpoint: "/api/v1/search/recall".into(),
            successor: None,
        };
        // Opening the FIFO for writing with no reader would block this test forever.
        notice_once_a_day(tmp.path(), &d, 20_000 * DAY_MS);
        assert!(std::fs::metadata(&fifo).expect("notice").is_file());
        assert_eq!(std::fs::read_to_string(&fifo).expect("notice"), "20000");
    }
}
