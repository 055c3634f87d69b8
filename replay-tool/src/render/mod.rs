//! Human rendering shared by the inspection commands: times, durations and quoted text here;
//! one-line event summaries ([`event`]), `dump` lines and JSON of frames ([`entry`]), the state
//! summary ([`state`]), and the stderr progress bar.

mod entry;
mod event;
mod state;

use std::io::IsTerminal;

use ov_engine::turn::DedupKey;

pub use entry::{entry_json, entry_line};
pub use state::{message_lines, state_summary};

/// `ms` since the Unix epoch as UTC ISO 8601 with milliseconds (`2026-01-02T03:04:05.678Z`).
pub fn time(ms: u64) -> String {
    ov_engine::time::format_ms(ms)
}

/// A duration in ms as `850ms`, `30s`, `5m`, `2h5m`.
pub fn duration(ms: u64) -> String {
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 if s.is_multiple_of(60) => format!("{}m", s / 60),
        60..=3599 => format!("{}m{}s", s / 60, s % 60),
        _ if (s % 3600) / 60 == 0 => format!("{}h", s / 3600),
        _ => format!("{}h{}m", s / 3600, (s % 3600) / 60),
    }
}

/// Text on one line (newlines shown as `⏎`), cut at `max` chars with `…`, quoted.
pub fn quote(text: &str, max: usize) -> String {
    let one: String = text.replace('\n', "⏎");
    if one.chars().count() > max {
        let cut: String = one.chars().take(max).collect();
        format!("\"{cut}…\"")
    } else {
        format!("\"{one}\"")
    }
}

/// Dedup keys as `[k1, k2]`.
pub(crate) fn keys(keys: &[DedupKey]) -> String {
    let v: Vec<&str> = keys.iter().map(DedupKey::as_str).collect();
    format!("[{}]", v.join(", "))
}

/// ` label=v`, or nothing without a value.
pub(crate) fn opt(label: &str, v: Option<&str>) -> String {
    v.map(|v| format!(" {label}={v}")).unwrap_or_default()
}

/// A progress bar on stderr, only when stderr is a terminal.
pub fn progress_bar() -> Option<indicatif::ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc_iso() {
        assert_eq!(time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(time(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(time(1_796_212_624_251), "2026-12-02T11:57:04.251Z");
    }

    #[test]
    fn durations() {
        assert_eq!(duration(850), "850ms");
        assert_eq!(duration(30_000), "30s");
        assert_eq!(duration(300_000), "5m");
        assert_eq!(duration(7_500_000), "2h5m");
    }
}
