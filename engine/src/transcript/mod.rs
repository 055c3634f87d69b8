//! The transcript files agents write, one reader per agent: [`zcode`] (ZCode's rollout),
//! [`claude_code`], [`copilot`], [`gemini`].
//!
//! Each reader turns a byte range of its agent's file into the same
//! [`crate::turn::TranscriptChunk`], so the turn book, the journal and the planner never
//! learn which agent wrote the file. The line walk they share (resume, bounded memory, a
//! line still being written) is [`tail`]; the turns they fill, and the chunk they return, are
//! [`turns`].

pub mod claude_code;
pub mod copilot;
pub mod gemini;
pub mod tail;
pub mod turns;
pub mod zcode;

/// What a JSON error says about a transcript line, without any of the line's text: its kind,
/// line and column. `serde_json`'s own message quotes string values ("invalid type: string
/// \"…\""), and a transcript's strings are the user's conversation, which reaches logs and
/// journaled problems only through the privacy rule.
pub fn json_error_shape(e: &serde_json::Error) -> String {
    let kind = match e.classify() {
        serde_json::error::Category::Io => "i/o error",
        serde_json::error::Category::Syntax => "malformed JSON",
        serde_json::error::Category::Data => "unexpected JSON shape",
        serde_json::error::Category::Eof => "JSON cut short",
    };
    format!("{kind} at line {} column {}", e.line(), e.column())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_json_error_says_nothing_of_the_lines_text() {
        let e = serde_json::from_str::<Vec<u8>>(r#""my password is hunter2""#).expect_err("shape");
        assert!(
            e.to_string().contains("hunter2"),
            "serde quotes the value: {e}"
        );
        let shape = super::json_error_shape(&e);
        assert!(!shape.contains("hunter2"), "{shape}");
        assert!(shape.starts_with("unexpected JSON shape"), "{shape}");
    }
}
