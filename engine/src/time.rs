//! Wall-clock times as OpenViking and the agents write them: RFC 3339 in UTC.
//!
//! One rule each way: [`format_ms`] writes `YYYY-MM-DDTHH:MM:SS.mmmZ` (what the server
//! stores as a message's `created_at` and what `ovreplay` prints); [`parse_ms`] reads the
//! timestamps agents put in their transcripts (`2026-07-03T03:02:56.413Z`, any number of
//! fraction digits, `Z` or a `±HH:MM` offset) and, as ZCode and Copilot hooks also do,
//! milliseconds since the epoch given as a number.
//!
//! Times before 1970 or after year 9999 are not times an agent writes: they parse to
//! `None`.

/// Days from 1970-01-01 to the civil date `y-m-d` (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count from 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `ms` since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, milliseconds).
pub fn format_ms(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        ms % 1000
    )
}

/// Digits `s[at..at+n]` as a number; `None` unless they are all ASCII digits.
fn digits(s: &[u8], at: usize, n: usize) -> Option<i64> {
    let part = s.get(at..at + n)?;
    part.iter().try_fold(0i64, |acc, b| {
        b.is_ascii_digit().then(|| acc * 10 + i64::from(b - b'0'))
    })
}

/// An RFC 3339 time (`2026-07-03T03:02:56.413Z`, `2026-07-03 03:02:56+08:00`, fraction
/// optional, cut to milliseconds) as milliseconds since the epoch; `None` when it is not
/// one, or is before 1970 or after 9999.
pub fn parse_ms(text: &str) -> Option<u64> {
    let s = text.trim().as_bytes();
    let sep = |at: usize, want: &[u8]| s.get(at).is_some_and(|b| want.contains(b));
    let (y, mo, d) = (digits(s, 0, 4)?, digits(s, 5, 2)?, digits(s, 8, 2)?);
    let (h, mi, sec) = (digits(s, 11, 2)?, digits(s, 14, 2)?, digits(s, 17, 2)?);
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let days_in_month = match mo {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    };
    if !(1..=days_in_month).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut at = 19;
    let mut millis = 0i64;
    if sep(at, b".,") {
        at += 1;
        let start = at;
        while s.get(at).is_some_and(u8::is_ascii_digit) {
            if at - start < 3 {
                millis = millis * 10 + i64::from(s.get(at).copied().unwrap_or(b'0') - b'0');
            }
            at += 1;
        }
        if at == start {
            return None;
        }
        for _ in (at - start)..3 {
            millis *= 10;
        }
    }
    let offset_min = match s.get(at..)? {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), ..] if s.len() == at + 6 && sep(at + 3, b":") => {
            let (oh, om) = (digits(s, at + 1, 2)?, digits(s, at + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let m = oh * 60 + om;
            if *sign == b'+' {
                m
            } else {
                -m
            }
        }
        _ => return None,
    };
    let secs =
        days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec.min(59) - offset_min * 60;
    u64::try_from(secs * 1000 + millis).ok()
}

/// A JSON timestamp as agents write it: an RFC 3339 string ([`parse_ms`]) or a number of
/// milliseconds since the epoch; `None` for anything else.
pub fn json_ms(value: &serde_json::Value) -> Option<u64> {
    match value {
        serde_json::Value::String(s) => parse_ms(s),
        serde_json::Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn formats_utc_with_milliseconds() {
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(format_ms(1_796_212_624_251), "2026-12-02T11:57:04.251Z");
    }

    #[test]
    fn parses_what_agents_write() {
        let base = 1_782_961_376_413; // 2026-07-02T03:02:56.413Z
        assert_eq!(format_ms(base), "2026-07-02T03:02:56.413Z");
        assert_eq!(parse_ms("2026-07-02T03:02:56.413Z"), Some(base));
        assert_eq!(parse_ms("2026-07-02T03:02:56.413456789Z"), Some(base));
        assert_eq!(parse_ms("2026-07-02T03:02:56.4Z"), Some(base - 13));
        assert_eq!(parse_ms("2026-07-02T03:02:56Z"), Some(base - 413));
        assert_eq!(parse_ms("2026-07-02 11:02:56.413+08:00"), Some(base));
        assert_eq!(parse_ms("2026-07-01T23:02:56.413-04:00"), Some(base));
        assert_eq!(parse_ms(" 2026-07-02T03:02:56.413z "), Some(base));
    }

    #[test]
    fn refuses_what_is_not_a_time() {
        for bad in [
            "",
            "yesterday",
            "2026-07-02",
            "2026-07-02T03:02:56",
            "2026-13-02T03:02:56Z",
            "2026-02-30T03:02:56Z",
            "2026-07-02T24:02:56Z",
            "2026-07-02T03:02:56.Z",
            "2026-07-02T03:02:56+0800",
            "2026-07-02T03:02:56Zjunk",
            "1969-12-31T23:59:59Z",
            "2026-07-02T03:02:56.413ZZ",
        ] {
            assert_eq!(parse_ms(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn json_timestamps() {
        assert_eq!(
            json_ms(&serde_json::json!(1_782_961_376_413u64)),
            Some(1_782_961_376_413)
        );
        assert_eq!(
            json_ms(&serde_json::json!("2026-07-02T03:02:56.413Z")),
            Some(1_782_961_376_413)
        );
        assert_eq!(json_ms(&serde_json::json!(null)), None);
        assert_eq!(json_ms(&serde_json::json!(-5)), None);
    }

    proptest! {
        /// Every time up to year 9999 survives a format and parse unchanged.
        #[test]
        fn format_then_parse_is_identity(ms in 0u64..253_402_300_799_999) {
            prop_assert_eq!(parse_ms(&format_ms(ms)), Some(ms));
        }
    }
}
