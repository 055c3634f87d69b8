//! Wall-clock windows that survive a clock jump.
//!
//! # Context
//!
//! Back-offs, debounces and retry windows are stored as wall-clock times (unix ms) in
//! journals and in the shared back-off file, and read back by later processes. A clock that
//! was a day ahead when a window was written (or that moved back since) would otherwise keep
//! that window running for a day after the clock is right again.
//!
//! # Design
//!
//! One rule, asked by every window:
//!
//! | window | open at `now` when |
//! |---|---|
//! | started at `start`, lasts `len` ([`open_since`]) | `start <= now < start + len` |
//! | ends at `until`, lasts at most `max` ([`open_until`]) | `now < until <= now + max` |
//!
//! A start after `now`, or an end further than the window's maximum from `now`, was written by
//! a clock that disagrees with this one: the window is over. Every back-off is also capped when
//! it starts ([`backoff_len`]), so no configuration makes one last longer than
//! [`MAX_BACKOFF_MS`].

/// The longest any back-off runs (10 minutes), whatever the configuration says.
pub const MAX_BACKOFF_MS: u64 = 10 * 60 * 1000;

/// A window that opened at `start_ms` and lasts `len_ms` is open at `now_ms`. A start after
/// `now_ms` (the clock moved back since, or was ahead then) means it is over.
pub fn open_since(start_ms: u64, len_ms: u64, now_ms: u64) -> bool {
    start_ms <= now_ms && now_ms - start_ms < len_ms
}

/// A window that ends at `until_ms`, and that cannot have been opened for longer than
/// `max_ms`, is open at `now_ms`. An end more than `max_ms` after `now_ms` was set by a clock
/// ahead of this one: the window is over.
pub fn open_until(until_ms: u64, max_ms: u64, now_ms: u64) -> bool {
    now_ms < until_ms && until_ms - now_ms <= max_ms
}

/// A back-off of `ms`, capped to [`MAX_BACKOFF_MS`].
pub fn backoff_len(ms: u64) -> u64 {
    ms.min(MAX_BACKOFF_MS)
}

/// A back-off that ends at `until_ms` is running at `now_ms` ([`open_until`] with
/// [`MAX_BACKOFF_MS`]).
pub fn backing_off(until_ms: u64, now_ms: u64) -> bool {
    open_until(until_ms, MAX_BACKOFF_MS, now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: u64 = 24 * 3600 * 1000;

    #[test]
    fn a_window_from_a_clock_a_day_ahead_is_over() {
        let now = 1_800_000_000_000;
        assert!(open_since(now - 100, 2000, now));
        assert!(!open_since(now - 2000, 2000, now));
        assert!(!open_since(now + DAY, 2000, now), "started in the future");
        assert!(backing_off(now + 30_000, now));
        assert!(!backing_off(now, now));
        assert!(!backing_off(now + DAY + 30_000, now), "ends a day ahead");
        assert_eq!(backoff_len(DAY), MAX_BACKOFF_MS);
        assert_eq!(backoff_len(30_000), 30_000);
    }
}
