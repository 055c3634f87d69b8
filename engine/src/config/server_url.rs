//! The one parse rule for an OpenViking server URL (and the MCP endpoint's).
//!
//! # Context
//!
//! A server URL is shown in logs, journaled error texts and `doctor` output; a key written
//! into it (`http://KEY@host:1933`) must never be. So the URL is parsed once, where it enters
//! (configuration, [`crate::client::Client::new`]), into a [`ServerUrl`] whose text has no
//! userinfo and whose key is a [`Secret`].
//!
//! # Rule
//!
//! ```text
//!  http[s]://[userinfo@]host[:port][/path]
//!  ──────────────────────────────────────────────────────────────────────────────────────────
//!  around it   leading and trailing white space is ignored
//!  scheme      `http` or `https`, any case (kept lowercase)
//!  authority   up to the first `/`, `?` or `#` after `://`
//!  userinfo    the authority up to its last `@`; the key is the password when there is one
//!              (`user:KEY@`), else the user name (`KEY@`), percent-decoded; empty = no key
//!  host        a name of letters, digits and `-._~%`, or an IPv6 literal `[hex:…]`; not empty
//!  port        digits, at most 65535; `host:` with no digits is no port
//!  path        kept as written, trailing `/` removed (`http://h/` is `http://h`)
//!  refused     a query (`?`) or fragment (`#`): requests append `/api/v1/…` to the URL;
//!              a space or a control character anywhere
//! ```
//!
//! [`UrlError`] never quotes the input: a URL that does not parse may still hold a key.

use std::fmt;
use std::ops::Deref;
use std::str::FromStr;

use super::Secret;

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `http://`.
    Http,
    /// `https://`.
    Https,
}

impl Scheme {
    /// `http` or `https`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

/// Why a text is not a server URL. Never holds any of the text (it may hold a key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// No `http://` or `https://`.
    #[error("not an http:// or https:// URL")]
    Scheme,
    /// Nothing between `://` (or the userinfo) and the port or path.
    #[error("the URL names no host")]
    NoHost,
    /// The host has a character no host name has.
    #[error("the URL's host is not a host name or an IPv6 address in brackets")]
    Host,
    /// The port is not a number up to 65535.
    #[error("the URL's port is not a number from 0 to 65535")]
    Port,
    /// A query or a fragment.
    #[error("a server URL has no query (?) or fragment (#)")]
    QueryOrFragment,
    /// White space or a control character inside.
    #[error("the URL holds a space or a control character")]
    Character,
}

/// A parsed server URL: scheme, host, port, path, and the key its userinfo carried.
///
/// Its text ([`ServerUrl::as_str`], `Display`, `Deref<Target = str>`) never has userinfo;
/// its `Debug` shows the key as `Secret(***)`.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerUrl {
    /// `scheme://host[:port]path`.
    text: String,
    scheme: Scheme,
    host: String,
    port: Option<u16>,
    path: String,
    key: Option<Secret>,
}

impl ServerUrl {
    /// Parses `input` by the rule of this module.
    pub fn parse(input: &str) -> Result<ServerUrl, UrlError> {
        let input = input.trim();
        let (scheme, rest) = input.split_once("://").ok_or(UrlError::Scheme)?;
        let scheme = if scheme.eq_ignore_ascii_case("http") {
            Scheme::Http
        } else if scheme.eq_ignore_ascii_case("https") {
            Scheme::Https
        } else {
            return Err(UrlError::Scheme);
        };
        if rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(UrlError::Character);
        }
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(authority_end);
        if path.contains(['?', '#']) {
            return Err(UrlError::QueryOrFragment);
        }
        let (userinfo, host_port) = split_userinfo(authority);
        let (host, port) = host_and_port(host_port)?;
        let key = userinfo.and_then(key_of);
        Ok(ServerUrl::from_parts(
            scheme,
            host.to_owned(),
            port,
            path.trim_end_matches('/').to_owned(),
            key,
        ))
    }

    fn from_parts(
        scheme: Scheme,
        host: String,
        port: Option<u16>,
        path: String,
        key: Option<Secret>,
    ) -> ServerUrl {
        let mut text = format!("{}://{host}", scheme.as_str());
        if let Some(p) = port {
            text.push_str(&format!(":{p}"));
        }
        text.push_str(&path);
        ServerUrl {
            text,
            scheme,
            host,
            port,
            path,
            key,
        }
    }

    /// True for the words that, where a server URL is expected, mean no server at all: `off`
    /// and `none`, any case.
    pub fn means_off(text: &str) -> bool {
        matches!(text.trim().to_ascii_lowercase().as_str(), "off" | "none")
    }

    /// The URL without userinfo: `scheme://host[:port]path`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The host as written (an IPv6 literal with its brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, when the URL names one.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The path: empty, or `/…` without a trailing `/`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The key the userinfo carried.
    pub fn key(&self) -> Option<&Secret> {
        self.key.as_ref()
    }

    /// The URL without its key, and the key.
    pub fn split_key(mut self) -> (ServerUrl, Option<Secret>) {
        let key = self.key.take();
        (self, key)
    }

    /// The URL with `segment` appended to its path (`/mcp` of a server URL); no key.
    pub fn join(&self, segment: &str) -> Result<ServerUrl, UrlError> {
        let segment = segment.trim_matches('/');
        if segment.contains(['?', '#']) {
            return Err(UrlError::QueryOrFragment);
        }
        if segment.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(UrlError::Character);
        }
        let path = if segment.is_empty() {
            self.path.clone()
        } else {
            format!("{}/{segment}", self.path)
        };
        Ok(ServerUrl::from_parts(
            self.scheme,
            self.host.clone(),
            self.port,
            path,
            None,
        ))
    }
}

/// The userinfo of an authority (everything up to its last `@`) and the rest. The same split
/// serves a git remote ([`super::peer::normalize_remote_url`]), whose span differs.
pub(crate) fn split_userinfo(authority: &str) -> (Option<&str>, &str) {
    match authority.rsplit_once('@') {
        Some((userinfo, rest)) => (Some(userinfo), rest),
        None => (None, authority),
    }
}

/// The key of a userinfo: the password when not empty, else the user name; percent-decoded.
fn key_of(userinfo: &str) -> Option<Secret> {
    let raw = match userinfo.split_once(':') {
        Some((_, password)) if !password.is_empty() => password,
        Some((user, _)) => user,
        None => userinfo,
    };
    let key = percent_decode(raw);
    (!key.is_empty()).then(|| Secret::new(key))
}

fn host_and_port(host_port: &str) -> Result<(&str, Option<u16>), UrlError> {
    let (host, port) = if host_port.starts_with('[') {
        let close = host_port.find(']').ok_or(UrlError::Host)?;
        let (host, after) = host_port.split_at(close + 1);
        let inner = host.trim_start_matches('[').trim_end_matches(']');
        if inner.is_empty()
            || !inner
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return Err(UrlError::Host);
        }
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':').ok_or(UrlError::Host)?)),
        }
    } else {
        match host_port.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host_port, None),
        }
    };
    if host.is_empty() {
        return Err(UrlError::NoHost);
    }
    if !host.starts_with('[')
        && !host
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '%'))
    {
        return Err(UrlError::Host);
    }
    let port = match port {
        None | Some("") => None,
        Some(p) if p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p.parse::<u16>().map_err(|_| UrlError::Port)?)
        }
        Some(_) => return Err(UrlError::Port),
    };
    Ok((host, port))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl FromStr for ServerUrl {
    type Err = UrlError;
    fn from_str(s: &str) -> Result<ServerUrl, UrlError> {
        ServerUrl::parse(s)
    }
}

impl Deref for ServerUrl {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerUrl")
            .field("url", &self.text)
            .field("key", &self.key)
            .finish()
    }
}

impl PartialEq<str> for ServerUrl {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for ServerUrl {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rstest::rstest]
    #[case::plain("http://h:1933", "http://h:1933", None)]
    #[case::user_is_the_key("http://KEY@h:1933", "http://h:1933", Some("KEY"))]
    #[case::password_is_the_key("https://u:s%2Fecret@h/x/", "https://h/x", Some("s/ecret"))]
    #[case::empty_password("http://u:@h", "http://h", Some("u"))]
    #[case::empty_userinfo("http://@h", "http://h", None)]
    #[case::at_in_path("http://h/a@b", "http://h/a@b", None)]
    #[case::last_at_wins("http://a@b@h", "http://h", Some("a@b"))]
    #[case::scheme_any_case("HTTPS://H:1/", "https://H:1", None)]
    #[case::empty_port("http://h:/", "http://h", None)]
    #[case::ipv6("http://[::1]:1933", "http://[::1]:1933", None)]
    #[case::spaces_around("  http://h  ", "http://h", None)]
    fn accepted(#[case] input: &str, #[case] text: &str, #[case] key: Option<&str>) {
        let u = ServerUrl::parse(input).expect("accepted");
        assert_eq!((u.as_str(), u.key().map(Secret::expose)), (text, key));
    }

    #[rstest::rstest]
    #[case::no_scheme("h:1933", UrlError::Scheme)]
    #[case::file("file:///etc/passwd", UrlError::Scheme)]
    #[case::off("off", UrlError::Scheme)]
    #[case::no_host("http://KEY@:1", UrlError::NoHost)]
    #[case::slash_in_key("http://u:ab/cd@h", UrlError::Port)]
    #[case::port_too_big("http://h:65536", UrlError::Port)]
    #[case::query("https://h/x?y=1", UrlError::QueryOrFragment)]
    #[case::fragment("https://h#x", UrlError::QueryOrFragment)]
    #[case::space_inside("http://h /x", UrlError::Character)]
    #[case::bad_ipv6("http://[zz]:1", UrlError::Host)]
    fn refused(#[case] input: &str, #[case] want: UrlError) {
        assert_eq!(ServerUrl::parse(input), Err(want));
    }

    #[test]
    fn the_local_default_parses() {
        let u = ServerUrl::parse(crate::config::LOCAL_DEFAULT_URL).expect("parses");
        assert_eq!(u.as_str(), crate::config::LOCAL_DEFAULT_URL);
    }

    #[test]
    fn join_appends_a_segment_and_drops_the_key() {
        let u = ServerUrl::parse("http://KEY@h:1/base/").expect("url");
        let mcp = u.join("/mcp").expect("join");
        assert_eq!(mcp.as_str(), "http://h:1/base/mcp");
        assert_eq!(mcp.key(), None);
        assert_eq!(u.join("x?y").err(), Some(UrlError::QueryOrFragment));
    }
}
