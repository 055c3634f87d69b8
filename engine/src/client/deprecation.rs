//! An endpoint the server says is deprecated: its `Deprecation` header (RFC 9745; any value
//! but `false`) and the `Link` to its successor (`rel="successor-version"`, RFC 8594).
//! OpenViking 0.5.2 answers `POST /api/v1/search/recall` (recall's tier 2) with
//! `Deprecation: true` and `Link: </api/v1/search/search>; rel="successor-version"`.

use reqwest::header::HeaderMap;

/// What the server said about a deprecated endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deprecated {
    /// The path that was called.
    pub endpoint: String,
    /// The successor's URI reference, when the server named one.
    pub successor: Option<String>,
}

impl std::fmt::Display for Deprecated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.successor {
            Some(s) => write!(f, "{} is deprecated (successor {s})", self.endpoint),
            None => write!(f, "{} is deprecated", self.endpoint),
        }
    }
}

/// The successor named by a `Link` header value (`<uri>; rel="successor-version"`, one of
/// several comma-separated links, `rel` quoted or not, any case).
fn successor_of(link: &str) -> Option<String> {
    link.split(',').find_map(|one| {
        let mut parts = one.split(';');
        let uri = parts.next()?.trim().strip_prefix('<')?.strip_suffix('>')?;
        parts
            .filter_map(|p| p.trim().split_once('='))
            .any(|(k, v)| {
                k.trim().eq_ignore_ascii_case("rel")
                    && v.trim()
                        .trim_matches('"')
                        .split_whitespace()
                        .any(|r| r.eq_ignore_ascii_case("successor-version"))
            })
            .then(|| uri.to_owned())
    })
}

/// `Some` when the reply to `endpoint` carries a `Deprecation` header other than `false`.
pub(crate) fn deprecated(endpoint: &str, headers: &HeaderMap) -> Option<Deprecated> {
    let flag = headers.get("deprecation")?.to_str().ok()?.trim();
    if flag.eq_ignore_ascii_case("false") {
        return None;
    }
    let successor = headers
        .get_all("link")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(successor_of);
    Some(Deprecated {
        endpoint: endpoint.to_owned(),
        successor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn openvikings_recall_reply_names_its_successor() {
        let h = headers(&[
            ("deprecation", "true"),
            ("link", "</api/v1/search/search>; rel=\"successor-version\""),
        ]);
        let d = deprecated("/api/v1/search/recall", &h).expect("deprecated");
        assert_eq!(d.successor.as_deref(), Some("/api/v1/search/search"));
        assert_eq!(
            d.to_string(),
            "/api/v1/search/recall is deprecated (successor /api/v1/search/search)"
        );
    }

    #[test]
    fn other_headers_and_links() {
        assert_eq!(deprecated("/x", &headers(&[])), None);
        assert_eq!(
            deprecated("/x", &headers(&[("deprecation", "false")])),
            None
        );
        let dated = headers(&[
            ("deprecation", "@1688169599"),
            (
                "link",
                "</docs>; rel=\"deprecation\", </v2/x>; REL=successor-version",
            ),
        ]);
        let d = deprecated("/x", &dated).expect("deprecated");
        assert_eq!(d.successor.as_deref(), Some("/v2/x"));
        let none = headers(&[("deprecation", "true"), ("link", "</docs>; rel=alternate")]);
        assert_eq!(deprecated("/x", &none).and_then(|d| d.successor), None);
    }
}
