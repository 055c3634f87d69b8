//! Session and turn identity, and safe file names derived from ids.

/// Longest file-name component derived from an id.
pub const MAX_SAFE_LEN: usize = 128;

/// Hex digits of the SHA-256 suffix that [`safe_part`] gives an id that is not already safe.
const HASH_HEX: usize = 20;

/// Whether `raw` is used as is: lowercase ASCII letters, digits, `.`, `_`, `-`, not empty,
/// not starting with `.`, at most [`MAX_SAFE_LEN`] bytes. Uppercase is excluded because the
/// file system may fold case (`Sess` and `sess` would share a journal).
fn is_plain(raw: &str) -> bool {
    !raw.is_empty()
        && raw.len() <= MAX_SAFE_LEN
        && !raw.starts_with('.')
        && raw.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        })
}

/// Makes `raw` safe to use as one file-name component and as the readable part of a remote
/// session id, injectively: two different ids never share a journal or a remote session.
///
/// A plain id (see `is_plain`: `sess_<uuid>` is one) is its own name. Any other id becomes
/// `<readable>~<20 hex of SHA-256(raw)>`, where `<readable>` is the id lowercased with every
/// other character replaced by `-`, leading dots removed, cut to fit [`MAX_SAFE_LEN`]
/// (`unknown` when nothing is left). `~` never occurs in a plain id, so a hashed name cannot
/// be the name of a plain one; `proj/x`, `proj x` and `proj-x` get three names.
pub fn safe_part(raw: &str) -> String {
    if is_plain(raw) {
        return raw.to_owned();
    }
    let mut readable: String = raw
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let dots = readable.len() - readable.trim_start_matches('.').len();
    readable.drain(..dots);
    readable.truncate(MAX_SAFE_LEN - HASH_HEX - 1);
    if readable.is_empty() {
        readable.push_str("unknown");
    }
    format!("{readable}~{}", sha256_hex(raw, HASH_HEX))
}

/// Whether `name` is a value [`safe_part`] returns: a journal directory name handed from one
/// process to another (`ovhook worker --session <name>`) is used as is, never mapped again.
pub fn is_safe_part(name: &str) -> bool {
    match name.rsplit_once('~') {
        None => is_plain(name),
        Some((readable, hash)) => {
            hash.len() == HASH_HEX
                && hash
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                && (readable.is_empty() || is_plain(readable))
                && readable.len() < MAX_SAFE_LEN - HASH_HEX
        }
    }
}

/// `raw` when it can name a file on its own (no separator or NUL, not `.` or `..`, not
/// empty, at most 200 bytes); ZCode names its rollout file after the raw session id.
pub fn file_component(raw: &str) -> Option<&str> {
    (!raw.is_empty()
        && raw.len() <= 200
        && raw != "."
        && raw != ".."
        && !raw.contains(['/', '\\', '\0']))
    .then_some(raw)
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
        return (sha256_hex(t, 24), SessionIdSource::TranscriptPath);
    }
    (format!("cwd-{}", sha256_hex(cwd, 20)), SessionIdSource::Cwd)
}

/// The first `n` (even, at most 64) hex digits of the SHA-256 of `s`.
fn sha256_hex(s: &str, n: usize) -> String {
    use sha2::{Digest, Sha256};
    use std::fmt::Write as _;
    let digest = Sha256::digest(s.as_bytes());
    let mut out = String::with_capacity(n);
    for b in digest.iter().take(n / 2) {
        let _ = write!(out, "{b:02x}");
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
        for raw in [
            "sess_abc/def",
            "sess_abc:1",
            "..",
            ".",
            "",
            "../../etc/passwd",
            ".hidden",
        ] {
            let p = safe_part(raw);
            assert!(is_safe_part(&p), "{raw:?} -> {p:?}");
            assert!(
                !p.contains('/') && p != "." && p != ".." && !p.starts_with('.'),
                "{p}"
            );
        }
        assert!(safe_part("sess_abc/def").starts_with("sess_abc-def~"));
        assert!(safe_part("").starts_with("unknown~"));
        let long = "x".repeat(500);
        let a = safe_part(&long);
        assert!(a.len() <= MAX_SAFE_LEN);
        assert_ne!(a, safe_part(&"x".repeat(501)));
    }

    #[test]
    fn distinct_ids_get_distinct_names() {
        let ids = [
            "proj/x", "proj x", "proj-x", "Proj-x", "PROJ-X", "proj:x", "proj\\x", "proj-x~0",
        ];
        let names: std::collections::BTreeSet<String> = ids.iter().map(|i| safe_part(i)).collect();
        assert_eq!(names.len(), ids.len(), "{names:?}");
        // Case-folding file systems: no two names differ only by case.
        let folded: std::collections::BTreeSet<String> =
            names.iter().map(|n| n.to_ascii_lowercase()).collect();
        assert_eq!(folded.len(), ids.len());
        assert_eq!(safe_part("proj-x"), "proj-x");
        assert_eq!(safe_part("sess_0a1b-2c"), "sess_0a1b-2c");
    }

    #[test]
    fn a_name_is_never_mapped_again() {
        for raw in ["proj/x", "sess_1", "Ab", "", "a~b"] {
            let n = safe_part(raw);
            assert!(is_safe_part(&n), "{n}");
        }
        assert!(!is_safe_part("proj/x"));
        assert!(!is_safe_part("a~b"));
        assert!(!is_safe_part(".."));
        assert_eq!(file_component("sess_1"), Some("sess_1"));
        assert_eq!(file_component("proj x"), Some("proj x"));
        assert_eq!(file_component("a/b"), None);
        assert_eq!(file_component(".."), None);
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
        assert!(remote_session_id("zc-", "a/b").starts_with("zc-a-b~"));
    }
}
