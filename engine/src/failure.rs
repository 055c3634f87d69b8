//! The one classification of a failed server call: what it means for the messages or the
//! commit it carried.
//!
//! # Design
//!
//! Derived only from what the journal records of a failure (HTTP status, the server's
//! `retryable` flag, whether the request body had left), so the worker deciding what to do
//! next, the fold deciding where each message stands, and every tool reading a journal
//! afterwards (`ovreplay why`) agree by construction.
//!
//! | status | request left | class |
//! |---|---|---|
//! | 0 (no reply: refused, reset, timeout, not OpenViking) | no | [`Failure::Unreachable`] |
//! | 0 | yes | [`Failure::InDoubt`] |
//! | 5xx | yes | [`Failure::InDoubt`] |
//! | 401, 403 | any | [`Failure::Credentials`] |
//! | 404, 405 | any | [`Failure::NoEndpoint`] |
//! | 408, 429, 5xx, any the server marks retryable | any | [`Failure::Transient`] |
//! | every other (400, 413, 422, …) | any | [`Failure::Refused`] |

/// What a failed send or commit means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Nothing reached the server: no connection, or an answer that was not OpenViking's.
    /// Everything waits for the back-off.
    Unreachable,
    /// The request had left and no answer says whether it was applied (a transport error
    /// or timeout after sending, a 5xx): in doubt until reconciled with the server.
    InDoubt,
    /// Refused before being applied, worth retrying as is (408, 429, a retryable 409).
    Transient,
    /// The credentials were refused (401, 403): nothing goes through until the user fixes
    /// them; every message waits.
    Credentials,
    /// The endpoint does not exist (404, 405): a batch falls back to single sends.
    NoEndpoint,
    /// The server refused the content for good (400, 413, 422, …): a batch is split to find
    /// the message at fault; a message sent alone is set aside.
    Refused,
}

impl Failure {
    /// Classifies a failure from what the journal records of it.
    pub fn classify(status: u16, retryable: bool, request_sent: bool) -> Failure {
        match status {
            0 if request_sent => Failure::InDoubt,
            0 => Failure::Unreachable,
            s if s >= 500 && request_sent => Failure::InDoubt,
            401 | 403 => Failure::Credentials,
            404 | 405 => Failure::NoEndpoint,
            408 | 429 => Failure::Transient,
            s if s >= 500 || retryable => Failure::Transient,
            _ => Failure::Refused,
        }
    }

    /// Whether the messages of the failed send stay to be sent as they are: only a refusal
    /// of the content itself says anything about a message.
    pub fn keeps_messages(self) -> bool {
        self != Failure::Refused
    }

    /// What the failure means, as a clause for the story of a turn.
    pub fn meaning(self) -> &'static str {
        match self {
            Failure::Unreachable => {
                "the server could not be reached; the messages wait in the outbox for the back-off"
            }
            Failure::InDoubt => {
                "the request had left, so the send is in doubt until reconciled with the server"
            }
            Failure::Transient => "worth retrying: the messages went back to the outbox",
            Failure::Credentials => {
                "the server refused the credentials; the messages wait in the outbox until the key or account is fixed"
            }
            Failure::NoEndpoint => {
                "the server has no such endpoint; the messages wait and are sent one by one"
            }
            Failure::Refused => "refused for good",
        }
    }
}

/// Whether a failed reply is worth retrying as is (the client's `retryable` flag): a
/// transport failure (status 0), 408, 429, every 5xx, and a 409 whose
/// `error.details.retryable` the server set to `true`.
pub fn status_is_retryable(status: u16, server_says_retryable: Option<bool>) -> bool {
    match status {
        0 | 408 | 429 => true,
        s if s >= 500 => true,
        409 => server_says_retryable.unwrap_or(false),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table() {
        use Failure::*;
        for (status, retryable, sent, want) in [
            (0, true, false, Unreachable),
            (0, true, true, InDoubt),
            (500, true, true, InDoubt),
            (503, true, false, Transient),
            (401, false, true, Credentials),
            (403, false, false, Credentials),
            (404, false, true, NoEndpoint),
            (405, false, true, NoEndpoint),
            (408, true, true, Transient),
            (429, true, true, Transient),
            (409, true, true, Transient),
            (409, false, true, Refused),
            (400, false, true, Refused),
            (413, false, true, Refused),
            (422, false, true, Refused),
        ] {
            assert_eq!(
                Failure::classify(status, retryable, sent),
                want,
                "{status} retryable={retryable} sent={sent}"
            );
        }
        assert!(!Refused.keeps_messages());
        assert!(Credentials.keeps_messages() && NoEndpoint.keeps_messages());
    }

    #[test]
    fn retryable_statuses() {
        for (status, want) in [
            (0, true),
            (400, false),
            (401, false),
            (403, false),
            (404, false),
            (408, true),
            (409, false),
            (422, false),
            (429, true),
            (500, true),
            (503, true),
        ] {
            assert_eq!(status_is_retryable(status, None), want, "{status}");
        }
        assert!(status_is_retryable(409, Some(true)));
        assert!(!status_is_retryable(409, Some(false)));
    }
}
