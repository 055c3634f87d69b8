//! Server-sent events framing of a streamable-HTTP reply (`docs/anchor-behaviours.md` §2.6).
//!
//! Lines end with `\n` or `\r\n`; a blank line ends an event; `:` lines are comments; only
//! `data` fields count (one leading space after the colon is stripped); the data lines of an
//! event are joined with `\n` and trimmed; `[DONE]` and empty events are skipped; any other
//! payload must be JSON, or the whole reply is an error.

use serde_json::Value;

/// An event whose data is not JSON.
#[derive(Debug, PartialEq, Eq)]
pub struct SseError(pub String);

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid SSE event data: {}", self.0)
    }
}

impl std::error::Error for SseError {}

/// Incremental parser: feed it one line at a time (with or without the line ending).
#[derive(Default)]
pub struct SseParser {
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Feeds one line; returns the message of the event this line completed, if any.
    pub fn line(&mut self, line: &str) -> Result<Option<Value>, SseError> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(value);
            self.has_data = true;
        }
        Ok(None)
    }

    /// Ends the stream: an event without its closing blank line still counts.
    pub fn finish(&mut self) -> Result<Option<Value>, SseError> {
        self.dispatch()
    }

    fn dispatch(&mut self) -> Result<Option<Value>, SseError> {
        if !self.has_data {
            return Ok(None);
        }
        self.has_data = false;
        let data = std::mem::take(&mut self.data);
        let payload = data.trim();
        if payload.is_empty() || payload == "[DONE]" {
            return Ok(None);
        }
        serde_json::from_str(payload)
            .map(Some)
            .map_err(|e| SseError(format!("{e}")))
    }
}

/// Parses a whole SSE body.
#[cfg(test)]
pub fn parse_all(body: &str) -> Result<Vec<Value>, SseError> {
    let mut p = SseParser::default();
    let mut out = Vec::new();
    for line in body.split('\n') {
        out.extend(p.line(line)?);
    }
    out.extend(p.finish()?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::real_server("event: message\ndata: {\"id\":1}\n\n", vec![json!({"id":1})])]
    #[case::crlf("event: message\r\ndata: {\"id\":1}\r\n\r\n", vec![json!({"id":1})])]
    #[case::no_space("data:{\"id\":1}\n\n", vec![json!({"id":1})])]
    #[case::comments(": ping\n\n: x\ndata: {\"id\":1}\n\n", vec![json!({"id":1})])]
    #[case::multiline("data: {\"id\":\ndata:  1}\n\n", vec![json!({"id":1})])]
    #[case::two_events("data: 1\n\ndata: 2\n\n", vec![json!(1), json!(2)])]
    #[case::done("data: [DONE]\n\ndata: 3\n\n", vec![json!(3)])]
    #[case::empty_data("data:\n\ndata: \n\n", vec![])]
    #[case::no_final_blank("id: 7\ndata: {\"a\":true}", vec![json!({"a":true})])]
    #[case::other_fields_ignored("event: x\nid: 1\nretry: 5\ndata: 4\n\n", vec![json!(4)])]
    #[case::empty("", vec![])]
    fn parses(#[case] body: &str, #[case] want: Vec<Value>) {
        assert_eq!(parse_all(body).expect("parses"), want);
    }

    #[test]
    fn invalid_json_fails_the_reply() {
        assert!(parse_all("data: {\"id\":1}\n\ndata: {oops\n\n").is_err());
    }
}
