//! A recorded Claude Code session transcript (`~/.claude/projects/<project>/<id>.jsonl`), cut
//! into the turns Claude Code played.
//!
//! A turn is the run of lines from a user prompt entry (a new `promptId` whose text is the
//! user's words, by the engine's own line rule) to the next one; lines before the first form
//! the prelude. Its expected answer and completeness come from the engine's transcript reader
//! over the whole recording (one rule: what the worker will read), so a turn whose model call
//! failed is incomplete (Claude Code fires no Stop for it). The Stop payload carries what
//! Claude Code puts in `last_assistant_message`: the last text block of the answer.

use std::collections::HashMap;
use std::path::Path;

use ov_engine::transcript::claude_code::{parse_entry, read_chunk, Entry};
use serde_json::Value;

use super::session::{Harness, Line, Session, ToolCall, Turn};

/// True when `text` looks like a Claude Code transcript (a user or assistant entry with a
/// `promptId` or a `message`).
pub fn is_claude_transcript(text: &str) -> bool {
    text.lines().take(200).any(|l| {
        serde_json::from_str::<Value>(l).is_ok_and(|v| {
            matches!(
                v.get("type").and_then(Value::as_str),
                Some("user" | "assistant")
            ) && v.get("uuid").is_some()
                && v.get("message").is_some()
        })
    })
}

/// Parses the recording at `path` (already read into `text`), rewriting its session id to
/// `new_id`.
pub fn parse(path: &Path, text: &str, new_id: &str) -> anyhow::Result<Session> {
    let recorded_id = text.lines().find_map(|l| {
        serde_json::from_str::<Value>(l)
            .ok()?
            .get("sessionId")?
            .as_str()
            .map(str::to_owned)
    });
    // Read by the engine's reader, piece after piece as the worker does.
    let mut fragments: HashMap<String, (Option<String>, bool)> = HashMap::new();
    let mut resume = None;
    let mut last_turn: Option<String> = None;
    while let Some(c) = read_chunk(path, resume, last_turn.as_deref())? {
        for f in c.fragments {
            last_turn = Some(f.turn_id.clone());
            let seen = fragments.entry(f.turn_id).or_default();
            if f.final_text.is_some() {
                *seen = (f.final_text, f.finished);
            }
        }
        if c.end <= c.start || c.end >= c.file_len {
            break;
        }
        resume = Some((c.identity, c.end));
    }
    let mut session = Session {
        harness: Harness::ClaudeCode,
        recorded_id: recorded_id.clone(),
        prelude: Vec::new(),
        turns: Vec::new(),
    };
    for piece in text.split_inclusive('\n') {
        let (body, complete) = match piece.strip_suffix('\n') {
            Some(b) => (b, true),
            None => (piece, false),
        };
        if body.trim().is_empty() {
            continue;
        }
        let raw = match &recorded_id {
            Some(old) if old.len() >= 16 => body.replace(old.as_str(), new_id),
            _ => body.to_owned(),
        };
        let entry = if complete {
            parse_entry(body.as_bytes()).ok()
        } else {
            None
        };
        let mut line = Line {
            raw,
            complete,
            tool_calls: Vec::new(),
        };
        match entry {
            Some(Entry::Prompt {
                prompt_id, text, ..
            }) if session.turns.last().map(|t| &t.turn_id) != Some(&prompt_id) => {
                let (final_text, done) = fragments.get(&prompt_id).cloned().unwrap_or_default();
                session.turns.push(Turn {
                    index: session.turns.len(),
                    turn_id: prompt_id,
                    trace_id: None,
                    user_message: ov_engine::turnbook::user_message(Some(&text), []),
                    prompt: Some(text),
                    final_text,
                    complete: done,
                    stop_text: None,
                    lines: Vec::new(),
                });
            }
            Some(Entry::Assistant(a)) if !a.api_error => {
                line.tool_calls = tool_uses(body);
                if let (Some(t), Some(last)) = (session.turns.last_mut(), a.texts.last()) {
                    t.stop_text = Some(last.clone());
                }
            }
            _ => {}
        }
        match session.turns.last_mut() {
            Some(t) => t.lines.push(line),
            None => session.prelude.push(line),
        }
    }
    Ok(session)
}

/// The `tool_use` blocks of an assistant line.
fn tool_uses(body: &str) -> Vec<ToolCall> {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    v.pointer("/message/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|b| ToolCall {
            id: b
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            name: b
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            input: b
                .get("input")
                .cloned()
                .unwrap_or(Value::Object(Default::default())),
        })
        .collect()
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_session_gives_its_turns() -> anyhow::Result<()> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/agents/claude-code/recorded/transcript.jsonl");
        let text = std::fs::read_to_string(&path)?;
        assert!(is_claude_transcript(&text));
        let s = parse(&path, &text, "11111111-2222-4333-8444-555555555555")?;
        let prompts: Vec<(&str, bool)> = s
            .turns
            .iter()
            .map(|t| (t.prompt.as_deref().unwrap_or(""), t.complete))
            .collect();
        assert_eq!(
            prompts,
            [
                ("Please read my notes", true),
                ("yes", true),
                ("yes", true),
                ("this one fails", false),
                ("next", true),
                ("after compact prompt", true),
            ]
        );
        let first = &s.turns[0];
        assert!(first
            .final_text
            .as_deref()
            .is_some_and(|t| t.starts_with("Block one.\n\nBlock two.")));
        assert!(first
            .stop_text
            .as_deref()
            .is_some_and(|t| t.starts_with("Block two.")));
        assert_eq!(first.tool_call_count(), 1);
        assert!(s
            .turns
            .iter()
            .flat_map(|t| &t.lines)
            .all(|l| !l.raw.contains("a3508959")));
        Ok(())
    }
}
