//! The redirect rule of every HTTP client that talks to OpenViking (the hooks' [`Client`] and
//! `ovhook mcp`'s proxy): no redirect is followed.
//!
//! A followed redirect would carry the request body (a prompt, a query, a tool call) and the
//! key, account, user and peer headers to wherever `Location` points, and its answer would be
//! taken as OpenViking's. OpenViking itself answers no request with a redirect, so refusing
//! every one (another origin's above all) loses nothing; the refusal names the target's origin
//! so the user sees where the configured URL tried to send them.
//!
//! [`Client`]: super::Client

/// The policy to build every OpenViking HTTP client with: follow nothing.
pub fn policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::none()
}

/// The message for an answer with `status` and `Location` header `location` to a request for
/// `url`; `None` when `status` is not a redirect (3xx).
pub fn refusal(status: u16, location: Option<&str>, url: &reqwest::Url) -> Option<String> {
    if !(300..400).contains(&status) {
        return None;
    }
    let target = location.and_then(|l| url.join(l).ok()).map_or_else(
        || "nowhere".to_owned(),
        |u| u.origin().ascii_serialization(),
    );
    Some(format!("redirect ({status}) to {target}, not followed"))
}

/// [`refusal`] for a received response.
pub fn refusal_of(resp: &reqwest::blocking::Response) -> Option<String> {
    let location = resp
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|l| l.to_str().ok());
    refusal(resp.status().as_u16(), location, resp.url())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_3xx_is_refused_and_the_target_origin_is_named() -> Result<(), Box<dyn std::error::Error>>
    {
        let url = reqwest::Url::parse("http://127.0.0.1:1933/mcp")?;
        assert_eq!(refusal(200, Some("http://x"), &url), None);
        assert_eq!(refusal(404, None, &url), None);
        assert_eq!(
            refusal(307, Some("http://evil.example:8080/a?q=1"), &url).as_deref(),
            Some("redirect (307) to http://evil.example:8080, not followed")
        );
        assert_eq!(
            refusal(301, Some("/elsewhere"), &url).as_deref(),
            Some("redirect (301) to http://127.0.0.1:1933, not followed")
        );
        assert_eq!(
            refusal(302, None, &url).as_deref(),
            Some("redirect (302) to nowhere, not followed")
        );
        Ok(())
    }
}
