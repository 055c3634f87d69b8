//! Built-in secret detectors: what developers really paste, found without configuration.
//!
//! # Design
//!
//! | kind ([`SecretKind::as_str`]) | what | replaced |
//! |---|---|---|
//! | `anthropic-key` | `sk-ant-…` | the key |
//! | `openai-key` | `sk-proj-…`, `sk-svcacct-…`, `sk-admin-…`, a legacy `sk-…T3BlbkFJ…` | the key |
//! | `sk-key` | any other `sk-` key (20+ key characters, letters and digits) | the key |
//! | `github-token` | `ghp_` `gho_` `ghu_` `ghs_` `ghr_` + 30+ alphanumerics, `github_pat_…` | the token |
//! | `aws-access-key-id` | `AKIA` `ASIA` `ABIA` `ACCA` + 16 upper-case letters or digits | the id |
//! | `aws-secret-key` | the value assigned to `…secret_access_key` / `…SecretAccessKey` | the value |
//! | `slack-token` | `xoxb-` `xoxp-` `xoxa-` `xoxr-` `xoxs-` `xoxe-` `xapp-` tokens, `hooks.slack.com/services/…` | the token / path |
//! | `google-api-key` | `AIza` + 35 key characters | the key |
//! | `jwt` | `eyJ….eyJ….<signature>` | the token |
//! | `private-key` | a PEM block whose `BEGIN` line names a `PRIVATE KEY` (to its `END` line, or to the end of the text) | the block |
//! | `url-credentials` | the password of `scheme://user:password@host` | the password |
//! | `bearer-token` | the credential after `Bearer ` or `Authorization: <scheme> ` | the credential |
//! | `password` | the value of an assignment to a name ending in `password`, `passwd`, `passphrase`, `pwd` | the value |
//! | `api-key` | the value of an assignment to a name ending in `secret`, `api_key`, `apikey`, `api-key`, `access_key`, `secret_key`, `private_key`, `access_token`, `auth_token`, `refresh_token`, `api_token`, `client_secret` | the value |
//!
//! An assignment is `name = value`, `name: value`, `name := value`, with or without quotes
//! around the name and the value (`"password": "…"`, `PGPASSWORD=…`, `?api_key=…&`). A value
//! that is a reference or a type, not a secret (`$VAR`, `${…}`, `{{…}}`, `<…>`, `%…%`, a call
//! like `get_secret()`, `None`, `String`, …), is kept.
//!
//! Prefix detectors need a boundary before the prefix (not a letter, digit, `_`, `-`, `+` or
//! `/`), so a prefix inside a base64 or hex string is never a hit: git SHAs, UUIDs and
//! lockfile hashes (`sha512-…`, 64-hex checksums) match nothing. Every detector is a
//! hand-written scan (memchr, no regex), so the whole set is linear in the text and costs
//! nothing to set up: the hooks run it on every prompt.

use memchr::memmem;

use crate::text::find_ci;

/// What a detector found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum SecretKind {
    /// Anthropic API key.
    AnthropicKey,
    /// OpenAI API key.
    OpenaiKey,
    /// Another provider's `sk-` key.
    SkKey,
    /// GitHub token.
    GithubToken,
    /// AWS access key id.
    AwsAccessKeyId,
    /// AWS secret access key.
    AwsSecretKey,
    /// Slack token or webhook.
    SlackToken,
    /// Google API key.
    GoogleApiKey,
    /// JSON Web Token.
    Jwt,
    /// PEM private key block.
    PrivateKey,
    /// Password inside a URL.
    UrlCredentials,
    /// `Authorization` header credential.
    BearerToken,
    /// Password assignment.
    Password,
    /// API key, token or secret assignment.
    ApiKey,
}

impl SecretKind {
    /// Every kind, in table order.
    pub const ALL: [SecretKind; 14] = [
        SecretKind::AnthropicKey,
        SecretKind::OpenaiKey,
        SecretKind::SkKey,
        SecretKind::GithubToken,
        SecretKind::AwsAccessKeyId,
        SecretKind::AwsSecretKey,
        SecretKind::SlackToken,
        SecretKind::GoogleApiKey,
        SecretKind::Jwt,
        SecretKind::PrivateKey,
        SecretKind::UrlCredentials,
        SecretKind::BearerToken,
        SecretKind::Password,
        SecretKind::ApiKey,
    ];

    /// The kind's stable name, used in markers, counts and the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::AnthropicKey => "anthropic-key",
            SecretKind::OpenaiKey => "openai-key",
            SecretKind::SkKey => "sk-key",
            SecretKind::GithubToken => "github-token",
            SecretKind::AwsAccessKeyId => "aws-access-key-id",
            SecretKind::AwsSecretKey => "aws-secret-key",
            SecretKind::SlackToken => "slack-token",
            SecretKind::GoogleApiKey => "google-api-key",
            SecretKind::Jwt => "jwt",
            SecretKind::PrivateKey => "private-key",
            SecretKind::UrlCredentials => "url-credentials",
            SecretKind::BearerToken => "bearer-token",
            SecretKind::Password => "password",
            SecretKind::ApiKey => "api-key",
        }
    }

    /// What replaces a secret of this kind: `[REDACTED:<kind>]`.
    pub fn marker(self) -> String {
        format!("{MARKER_PREFIX}{}]", self.as_str())
    }
}

/// The start of every marker; a value that starts with it is never a secret again.
pub const MARKER_PREFIX: &str = "[REDACTED:";

/// One secret: its byte range in the text and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// What it is.
    pub kind: SecretKind,
}

/// Every secret in `s`, sorted by position, none overlapping (of overlapping hits the one
/// that starts first, then the longer, wins).
pub fn find(s: &str) -> Vec<Hit> {
    let b = s.as_bytes();
    let mut hits = Vec::new();
    sk_keys(b, &mut hits);
    prefixed(b, &mut hits);
    aws_key_ids(b, &mut hits);
    jwts(b, &mut hits);
    private_keys(b, &mut hits);
    url_credentials(b, &mut hits);
    authorization(b, &mut hits);
    assignments(b, &mut hits);
    if hits.len() > 1 {
        hits.sort_by(|x, y| x.start.cmp(&y.start).then(y.end.cmp(&x.end)));
        let mut kept: Vec<Hit> = Vec::with_capacity(hits.len());
        for h in hits {
            if kept.last().is_none_or(|k| h.start >= k.end) {
                kept.push(h);
            }
        }
        hits = kept;
    }
    hits
}

/// A character of a base64, base64url or identifier run.
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'+' | b'/')
}

fn boundary_before(b: &[u8], at: usize) -> bool {
    at == 0 || b.get(at - 1).is_none_or(|c| !is_word(*c))
}

/// End of the run of bytes satisfying `pred` starting at `from`.
fn run(b: &[u8], from: usize, pred: impl Fn(u8) -> bool) -> usize {
    let mut i = from;
    while b.get(i).is_some_and(|c| pred(*c)) {
        i += 1;
    }
    i
}

fn key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

fn sk_keys(b: &[u8], hits: &mut Vec<Hit>) {
    for at in memmem::find_iter(b, b"sk-") {
        if !boundary_before(b, at) {
            continue;
        }
        let end = run(b, at + 3, key_char);
        let body = b.get(at + 3..end).unwrap_or_default();
        if body.len() < 20
            || !body.iter().any(u8::is_ascii_digit)
            || !body.iter().any(u8::is_ascii_alphabetic)
        {
            continue;
        }
        let kind = if body.starts_with(b"ant-") {
            SecretKind::AnthropicKey
        } else if body.starts_with(b"proj-")
            || body.starts_with(b"svcacct-")
            || body.starts_with(b"admin-")
            || memmem::find(body, b"T3BlbkFJ").is_some()
        {
            SecretKind::OpenaiKey
        } else {
            SecretKind::SkKey
        };
        hits.push(Hit {
            start: at,
            end,
            kind,
        });
    }
}

/// Prefix, the characters of its body, the body's least length, the kind.
type Prefixed = (&'static [u8], fn(u8) -> bool, usize, SecretKind);

const PREFIXED: &[Prefixed] = &[
    (b"ghp_", alnum, 30, SecretKind::GithubToken),
    (b"gho_", alnum, 30, SecretKind::GithubToken),
    (b"ghu_", alnum, 30, SecretKind::GithubToken),
    (b"ghs_", alnum, 30, SecretKind::GithubToken),
    (b"ghr_", alnum, 30, SecretKind::GithubToken),
    (
        b"github_pat_",
        alnum_underscore,
        22,
        SecretKind::GithubToken,
    ),
    (b"xoxb-", alnum_dash, 10, SecretKind::SlackToken),
    (b"xoxp-", alnum_dash, 10, SecretKind::SlackToken),
    (b"xoxa-", alnum_dash, 10, SecretKind::SlackToken),
    (b"xoxr-", alnum_dash, 10, SecretKind::SlackToken),
    (b"xoxs-", alnum_dash, 10, SecretKind::SlackToken),
    (b"xoxe-", alnum_dash, 10, SecretKind::SlackToken),
    (b"xapp-", alnum_dash, 10, SecretKind::SlackToken),
    (b"AIza", key_char, 35, SecretKind::GoogleApiKey),
];

fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

fn alnum_underscore(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn alnum_dash(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

fn prefixed(b: &[u8], hits: &mut Vec<Hit>) {
    for (prefix, body, min, kind) in PREFIXED {
        for at in memmem::find_iter(b, prefix) {
            if !boundary_before(b, at) {
                continue;
            }
            let end = run(b, at + prefix.len(), body);
            if end - at - prefix.len() >= *min {
                hits.push(Hit {
                    start: at,
                    end,
                    kind: *kind,
                });
            }
        }
    }
    const WEBHOOK: &[u8] = b"hooks.slack.com/services/";
    for at in memmem::find_iter(b, WEBHOOK) {
        let from = at + WEBHOOK.len();
        let end = run(b, from, |c| c.is_ascii_alphanumeric() || c == b'/');
        if end - from >= 20 {
            hits.push(Hit {
                start: from,
                end,
                kind: SecretKind::SlackToken,
            });
        }
    }
}

fn aws_key_ids(b: &[u8], hits: &mut Vec<Hit>) {
    for prefix in [b"AKIA", b"ASIA", b"ABIA", b"ACCA"] {
        for at in memmem::find_iter(b, prefix) {
            if !boundary_before(b, at) {
                continue;
            }
            let end = run(b, at + 4, |c| c.is_ascii_uppercase() || c.is_ascii_digit());
            if end - at == 20 && b.get(end).is_none_or(|c| !is_word(*c)) {
                hits.push(Hit {
                    start: at,
                    end,
                    kind: SecretKind::AwsAccessKeyId,
                });
            }
        }
    }
}

fn b64url(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

fn jwts(b: &[u8], hits: &mut Vec<Hit>) {
    for at in memmem::find_iter(b, b"eyJ") {
        if !boundary_before(b, at) {
            continue;
        }
        let head_end = run(b, at, b64url);
        if head_end - at < 8 || b.get(head_end) != Some(&b'.') {
            continue;
        }
        let payload = head_end + 1;
        if b.get(payload..payload + 3) != Some(b"eyJ") {
            continue;
        }
        let payload_end = run(b, payload, b64url);
        if payload_end - payload < 8 || b.get(payload_end) != Some(&b'.') {
            continue;
        }
        let end = run(b, payload_end + 1, b64url);
        hits.push(Hit {
            start: at,
            end,
            kind: SecretKind::Jwt,
        });
    }
}

fn private_keys(b: &[u8], hits: &mut Vec<Hit>) {
    const BEGIN: &[u8] = b"-----BEGIN ";
    const DASHES: &[u8] = b"-----";
    for at in memmem::find_iter(b, BEGIN) {
        let label_from = at + BEGIN.len();
        let Some(label_len) = memmem::find(b.get(label_from..).unwrap_or_default(), DASHES) else {
            continue;
        };
        let label = b
            .get(label_from..label_from + label_len)
            .unwrap_or_default();
        if label.contains(&b'\n') || memmem::find(label, b"PRIVATE KEY").is_none() {
            continue;
        }
        let body = label_from + label_len + DASHES.len();
        let end = memmem::find(b.get(body..).unwrap_or_default(), b"-----END ")
            .and_then(|e| {
                let after = body + e + 9;
                memmem::find(b.get(after..).unwrap_or_default(), DASHES)
                    .map(|d| after + d + DASHES.len())
            })
            .unwrap_or(b.len());
        hits.push(Hit {
            start: at,
            end,
            kind: SecretKind::PrivateKey,
        });
    }
}

fn url_credentials(b: &[u8], hits: &mut Vec<Hit>) {
    for at in memmem::find_iter(b, b"://") {
        let scheme_start = {
            let mut i = at;
            while i > 0
                && b.get(i - 1)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'))
            {
                i -= 1;
            }
            i
        };
        if scheme_start == at {
            continue;
        }
        let from = at + 3;
        let stop = run(b, from, |c| {
            !(c.is_ascii_whitespace()
                || matches!(
                    c,
                    b'@' | b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'`'
                ))
        });
        if b.get(stop) != Some(&b'@') {
            continue;
        }
        let userinfo = b.get(from..stop).unwrap_or_default();
        let Some(colon) = memchr::memchr(b':', userinfo) else {
            continue;
        };
        let pass_start = from + colon + 1;
        let pass = b.get(pass_start..stop).unwrap_or_default();
        if pass.is_empty() || is_reference(pass) {
            continue;
        }
        hits.push(Hit {
            start: pass_start,
            end: stop,
            kind: SecretKind::UrlCredentials,
        });
    }
}

fn token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'~' | b'+' | b'/' | b'=' | b'-')
}

fn authorization(b: &[u8], hits: &mut Vec<Hit>) {
    let mut from = 0;
    while let Some(at) = find_ci(b, b"bearer", from) {
        from = at + 6;
        if at > 0 && b.get(at - 1).is_some_and(u8::is_ascii_alphanumeric) {
            continue;
        }
        let tok = run(b, from, |c| c == b' ' || c == b'\t');
        if tok == from {
            continue;
        }
        push_token(b, tok, hits);
    }
    let mut from = 0;
    while let Some(at) = find_ci(b, b"authorization", from) {
        from = at + 13;
        let Some(value) = after_separator(b, from) else {
            continue;
        };
        // `<scheme> <credential>`, or the credential alone.
        let word_end = run(b, value, |c| c.is_ascii_alphabetic());
        let gap = run(b, word_end, |c| c == b' ');
        let cred = if word_end > value && gap > word_end {
            gap
        } else {
            value
        };
        push_token(b, cred, hits);
    }
}

fn push_token(b: &[u8], from: usize, hits: &mut Vec<Hit>) {
    let end = run(b, from, token_char);
    let tok = b.get(from..end).unwrap_or_default();
    if end - from >= 8 && !is_reference(tok) {
        hits.push(Hit {
            start: from,
            end,
            kind: SecretKind::BearerToken,
        });
    }
}

/// Name endings (lower case) that make an assignment's value a secret, and the kind.
const NAMES: &[(&[u8], SecretKind)] = &[
    (b"password", SecretKind::Password),
    (b"passwd", SecretKind::Password),
    (b"passphrase", SecretKind::Password),
    (b"pwd", SecretKind::Password),
    (b"secret_access_key", SecretKind::AwsSecretKey),
    (b"secretaccesskey", SecretKind::AwsSecretKey),
    (b"secret", SecretKind::ApiKey),
    (b"api_key", SecretKind::ApiKey),
    (b"apikey", SecretKind::ApiKey),
    (b"api-key", SecretKind::ApiKey),
    (b"access_key", SecretKind::ApiKey),
    (b"secret_key", SecretKind::ApiKey),
    (b"private_key", SecretKind::ApiKey),
    (b"access_token", SecretKind::ApiKey),
    (b"auth_token", SecretKind::ApiKey),
    (b"refresh_token", SecretKind::ApiKey),
    (b"api_token", SecretKind::ApiKey),
    (b"client_secret", SecretKind::ApiKey),
];

fn name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

fn assignments(b: &[u8], hits: &mut Vec<Hit>) {
    for (name, kind) in NAMES {
        let mut from = 0;
        while let Some(at) = find_ci(b, name, from) {
            from = at + name.len();
            // The name must end here (`max_passwords=` is no assignment to a password).
            if b.get(from).is_some_and(|c| name_char(*c)) {
                continue;
            }
            let Some(value) = after_separator(b, from) else {
                continue;
            };
            let mut name_start = at;
            while name_start > 0 && b.get(name_start - 1).is_some_and(|c| name_char(*c)) {
                name_start -= 1;
            }
            let full = b.get(name_start..from).unwrap_or_default();
            let kind = if find_ci(full, b"secret_access_key", 0).is_some()
                || find_ci(full, b"secretaccesskey", 0).is_some()
            {
                SecretKind::AwsSecretKey
            } else {
                *kind
            };
            if let Some((start, end)) = assigned_value(b, value) {
                hits.push(Hit { start, end, kind });
            }
        }
    }
}

/// After a name ending at `from`: an optional closing quote, then `=`, `:` or `:=` (spaces
/// around), then where the value starts (past an opening quote, which stays text).
fn after_separator(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    if matches!(b.get(i), Some(b'"' | b'\'')) {
        i += 1;
    }
    i = run(b, i, |c| c == b' ' || c == b'\t');
    match b.get(i) {
        Some(b'=') => i += 1,
        Some(b':') => {
            i += 1;
            if b.get(i) == Some(&b'=') {
                i += 1;
            }
        }
        _ => return None,
    }
    Some(run(b, i, |c| c == b' ' || c == b'\t'))
}

/// The value starting at `at`: quoted (to its closing quote on the same line) or bare (to
/// whitespace or a delimiter). `None` when empty, a reference, a call, or a type name.
fn assigned_value(b: &[u8], at: usize) -> Option<(usize, usize)> {
    let (start, end, quoted) = match b.get(at) {
        Some(&q @ (b'"' | b'\'' | b'`')) => {
            let start = at + 1;
            let end = run(b, start, |c| c != q && c != b'\n');
            (start, end, true)
        }
        _ => {
            let end = run(b, at, |c| {
                !(c.is_ascii_whitespace()
                    || matches!(
                        c,
                        b'"' | b'\''
                            | b'`'
                            | b','
                            | b';'
                            | b'&'
                            | b')'
                            | b'}'
                            | b']'
                            | b'>'
                            | b'('
                            | b'['
                    ))
            });
            if matches!(b.get(end), Some(b'(' | b'[')) {
                return None; // a call or an index: code, not a secret
            }
            (at, end, false)
        }
    };
    let v = b.get(start..end)?;
    if v.is_empty() || is_reference(v) || (!quoted && is_type_or_literal(v)) {
        return None;
    }
    Some((start, end))
}

/// A value that names where a secret is, not the secret: a variable, a template, a
/// placeholder, or one of our markers.
fn is_reference(v: &[u8]) -> bool {
    matches!(v.first(), Some(b'$' | b'<' | b'%' | b'*'))
        || v.starts_with(b"{{")
        || v.starts_with(MARKER_PREFIX.as_bytes())
        || v.starts_with(b"process.env")
        || v.starts_with(b"os.environ")
        || v.starts_with(b"env.")
}

fn is_type_or_literal(v: &[u8]) -> bool {
    const WORDS: &[&[u8]] = &[
        b"str",
        b"string",
        b"&str",
        b"secret",
        b"secretstring",
        b"option",
        b"bytes",
        b"int",
        b"number",
        b"any",
        b"none",
        b"null",
        b"nil",
        b"true",
        b"false",
        b"undefined",
    ];
    WORDS.iter().any(|w| v.eq_ignore_ascii_case(w))
        || v.first().is_some_and(|c| matches!(c, b'&' | b'{' | b'\\'))
        || v.contains(&b'<')
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn kinds(s: &str) -> Vec<(&str, &'static str)> {
        find(s)
            .into_iter()
            .map(|h| (&s[h.start..h.end], h.kind.as_str()))
            .collect()
    }

    #[rstest]
    #[case::anthropic(
        "key sk-ant-api03-AbCdEfGh1234567890_xyzXYZ-abcdEFGH rest",
        "sk-ant-api03-AbCdEfGh1234567890_xyzXYZ-abcdEFGH",
        "anthropic-key"
    )]
    #[case::openai_proj(
        "OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90KlMnOpQr",
        "sk-proj-Ab12Cd34Ef56Gh78Ij90KlMnOpQr",
        "openai-key"
    )]
    #[case::openai_legacy(
        "sk-Ab12Cd34Ef56T3BlbkFJGh78Ij90KlMn",
        "sk-Ab12Cd34Ef56T3BlbkFJGh78Ij90KlMn",
        "openai-key"
    )]
    #[case::other_sk(
        "deepseek sk-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
        "sk-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
        "sk-key"
    )]
    #[case::ghp(
        "token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 ok",
        "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "github-token"
    )]
    #[case::gho(
        "gho_16C7e42F292c6912E7710c838347Ae178B4a",
        "gho_16C7e42F292c6912E7710c838347Ae178B4a",
        "github-token"
    )]
    #[case::github_pat(
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "github-token"
    )]
    #[case::aws_id(
        "id AKIAIOSFODNN7EXAMPLE.",
        "AKIAIOSFODNN7EXAMPLE",
        "aws-access-key-id"
    )]
    #[case::aws_secret(
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws-secret-key"
    )]
    #[case::aws_secret_json(
        r#"{"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}"#,
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws-secret-key"
    )]
    #[case::slack(
        "xoxb-1234567890-abcdefghij",
        "xoxb-1234567890-abcdefghij",
        "slack-token"
    )]
    #[case::google(
        "key=AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
        "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
        "google-api-key"
    )]
    #[case::jwt(
        "t eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U x",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "jwt"
    )]
    #[case::pem(
        "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nb",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        "private-key"
    )]
    #[case::pem_unclosed(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn",
        "private-key"
    )]
    #[case::url("postgres://user:hunter2@db:5432/x", "hunter2", "url-credentials")]
    #[case::bearer(
        "curl -H 'Authorization: Bearer abc.def-ghi_jkl' x",
        "abc.def-ghi_jkl",
        "bearer-token"
    )]
    #[case::basic(
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        "dXNlcjpwYXNzd29yZA==",
        "bearer-token"
    )]
    #[case::password_env("PGPASSWORD=s3cr3t! psql", "s3cr3t!", "password")]
    #[case::password_json(r#"{"password": "hunter2 x"}"#, "hunter2 x", "password")]
    #[case::api_key_query("https://x/y?api_key=abc123&z=1", "abc123", "api-key")]
    #[case::client_secret("client_secret: 'qwertyuiop'", "qwertyuiop", "api-key")]
    fn detects(#[case] text: &str, #[case] secret: &str, #[case] kind: &str) {
        assert_eq!(kinds(text), vec![(secret, kind)], "{text}");
    }

    #[rstest]
    #[case::git_sha("commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixes it")]
    #[case::uuid("session 123e4567-e89b-12d3-a456-426614174000 ended")]
    #[case::lock_integrity(
        r#""integrity": "sha512-0sk-AKIAIOSFODNN7EXAMPLEAIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvWeyJhb+Xg==""#
    )]
    #[case::cargo_checksum(
        "checksum = \"4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a\""
    )]
    #[case::kebab("run disk-cleanup and task-scheduler-configuration-helper now")]
    #[case::sklearn("pip install sk-learn-compatible-estimator-wrapper")]
    #[case::type_decl("struct Login { password: String, api_key: Option<Secret> }")]
    #[case::env_ref("password=$DB_PASSWORD api_key: ${API_KEY}")]
    #[case::call("password = get_password() ; secret = os.environ[\"S\"]")]
    #[case::plain_url("https://github.com/org/repo and git@github.com:org/repo.git")]
    #[case::marker("password=[REDACTED:password] [REDACTED:openai-key]")]
    #[case::max_tokens("max_tokens: 100, passwords: 3")]
    fn no_false_alarm(#[case] text: &str) {
        assert_eq!(kinds(text), vec![], "{text}");
    }

    #[test]
    fn overlapping_hits_keep_the_first_and_longest() {
        let s = "api_key=sk-ant-api03-AbCdEfGh1234567890_xyzXYZ";
        let got = kinds(s);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, "sk-ant-api03-AbCdEfGh1234567890_xyzXYZ");
    }
}
