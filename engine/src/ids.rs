//! Session and turn identity, and safe file names derived from ids.

/// Longest file-name component derived from an id.
pub const MAX_SAFE_LEN: usize = 128;

/// Makes `raw` safe to use as one file-name component.
///
/// Every character outside `[A-Za-z0-9._-]` becomes `-`; the result is never
/// empty, `.` or `..`, and at most [`MAX_SAFE_LEN`] bytes. A long id keeps a
/// prefix and gets an xxh3 suffix so two long ids never collide silently.
pub fn safe_part(raw: &str) -> String {
    let mut out: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if out.len() > MAX_SAFE_LEN {
        let h = xxhash_rust::xxh3::xxh3_64(raw.as_bytes());
        out.truncate(MAX_SAFE_LEN - 17);
        out.push('-');
        out.push_str(&format!("{h:016x}"));
    }
    if out.is_empty() || out.chars().all(|c| c == '.') {
        out = format!("unknown{}", "-".repeat(out.len()));
    }
    out
}

/// The OpenViking session id of a harness session: `<harness prefix><safe id>`
/// (ZCode's prefix is `zc-`, so `sess_42` becomes `zc-sess_42`).
pub fn remote_session_id(prefix: &str, native: &str) -> String {
    format!("{prefix}{}", safe_part(native))
}

/// Where a session id came from, when the payload carried none directly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionIdSource {
    /// `session_id` / `sessionId` / `conversation_id` in the payload.
    Payload,
    /// A UUID found in the transcript path.
    TranscriptPath,
    /// A hash of the working directory (last resort).
    Cwd,
}

/// Resolves the native session id from the payload fields, following the
/// anchor's fallbacks: an explicit id, else a UUID in the transcript path
/// (else its hash), else a hash of the cwd.
pub fn resolve_session_id(
    explicit: Option<&str>,
    transcript_path: Option<&str>,
    cwd: &str,
) -> (String, SessionIdSource) {
    if let Some(id) = explicit.map(str::trim).filter(|s| !s.is_empty()) {
        return (id.to_string(), SessionIdSource::Payload);
    }
    if let Some(t) = transcript_path.filter(|s| !s.is_empty()) {
        if let Some(uuid) = find_uuid(t) {
            return (uuid.to_string(), SessionIdSource::TranscriptPath);
        }
        return (hex24(t), SessionIdSource::TranscriptPath);
    }
    (format!("cwd-{}", &hex24(cwd)[..20]), SessionIdSource::Cwd)
}

fn hex24(s: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(s.as_bytes());
    let mut out = String::with_capacity(24);
    for b in digest.iter().take(12) {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Finds the first `8hex-…` UUID-like run (at least 29 chars of hex and dashes).
fn find_uuid(s: &str) -> Option<&str> {
    let bytes = s.as_bytes();
    let is_hex = |b: u8| b.is_ascii_hexdigit();
    let mut i = 0;
    while i + 9 <= bytes.len() {
        let head_ok = bytes
            .get(i..i + 8)
            .is_some_and(|h| h.iter().all(|&b| is_hex(b)))
            && bytes.get(i + 8) == Some(&b'-');
        if head_ok {
            let mut j = i + 9;
            while j < bytes.len() && bytes.get(j).is_some_and(|&b| is_hex(b) || b == b'-') {
                j += 1;
            }
            if j - (i + 9) >= 20 {
                return s.get(i..j);
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_part_blocks_traversal_and_odd_chars() {
        assert_eq!(safe_part("sess_abc/def"), "sess_abc-def");
        assert_eq!(safe_part("sess_abc:1"), "sess_abc-1");
        assert_eq!(safe_part(".."), "unknown--");
        assert_eq!(safe_part("."), "unknown-");
        assert_eq!(safe_part(""), "unknown");
        assert_eq!(safe_part("../../etc/passwd"), "..-..-etc-passwd");
        let long = "x".repeat(500);
        let a = safe_part(&long);
        assert!(a.len() <= MAX_SAFE_LEN);
        assert_ne!(a, safe_part(&"x".repeat(501)));
    }

    #[test]
    fn session_id_fallbacks_follow_the_anchor() {
        assert_eq!(
            resolve_session_id(Some("sess_1"), None, "/x").0,
            "sess_1".to_string()
        );
        let (id, src) = resolve_session_id(
            None,
            Some("/tmp/x/0a1b2c3d-1111-2222-3333-444455556666.jsonl"),
            "/x",
        );
        assert_eq!(id, "0a1b2c3d-1111-2222-3333-444455556666");
        assert_eq!(src, SessionIdSource::TranscriptPath);
        assert_eq!(
            resolve_session_id(None, Some("/tmp/x/foo.jsonl"), "/x").0,
            "b2cdd85c17d9184c963ce02c"
        );
        assert_eq!(
            resolve_session_id(None, None, "/home/u/proj").0,
            "cwd-9c09f8055a26c27736dd"
        );
    }

    #[test]
    fn openviking_id_is_prefixed_and_safe() {
        assert_eq!(remote_session_id("zc-", "sess_42"), "zc-sess_42");
        assert_eq!(remote_session_id("zc-", "a/b"), "zc-a-b");
    }
}
