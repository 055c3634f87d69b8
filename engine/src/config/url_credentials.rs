//! Credentials written into a server URL (`http://KEY@host:1933`) are taken out of it.
//!
//! The URL is shown in logs, journaled error texts and `doctor` output; the key must never
//! be. So the key is split off once, where the URL enters (configuration, client), and the
//! URL kept from then on has no userinfo.

/// Splits `url` into the URL without its userinfo and the key the userinfo held: the
/// password when there is one (`user:KEY@`), else the user name (`KEY@`), percent-decoded.
/// A URL without userinfo comes back unchanged with `None`.
pub fn split_url_credentials(url: &str) -> (String, Option<String>) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_owned(), None);
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return (url.to_owned(), None);
    };
    let key = match userinfo.split_once(':') {
        Some((_, password)) if !password.is_empty() => password,
        Some((user, _)) => user,
        None => userinfo,
    };
    let key = percent_decode(key);
    (
        format!("{scheme}://{host}{tail}"),
        (!key.is_empty()).then_some(key),
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_split_off() {
        let cases = [
            ("http://h:1933", "http://h:1933", None),
            ("http://KEY@h:1933", "http://h:1933", Some("KEY")),
            (
                "https://u:s%2Fecret@h/x?y=1",
                "https://h/x?y=1",
                Some("s/ecret"),
            ),
            ("http://u:@h", "http://h", Some("u")),
            ("http://@h", "http://h", None),
            ("http://h/a@b", "http://h/a@b", None),
            ("not a url", "not a url", None),
        ];
        for (url, clean, key) in cases {
            let (u, k) = split_url_credentials(url);
            assert_eq!((u.as_str(), k.as_deref()), (clean, key), "{url}");
        }
    }
}
