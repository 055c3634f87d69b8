//! A recorded ZCode session, cut into the turns ZCode played.
//!
//! # Design
//!
//! The rollout has one line per model call (`type:"model_io"`). Which lines are the main
//! conversation, their turn id, the prompt and whether a call ended its turn are the
//! engine's own rules (`ov_engine::transcript::zcode::parse_line`): simulate never reads the format a
//! second way. A *turn* is a maximal run of lines whose main lines share one turn id; other
//! lines (titles, subagents, compaction, non-`model_io`) belong to the run they sit in and
//! are replayed at their position. Lines before the first main line form the prelude.
//!
//! A turn is *complete* when its last complete main line ended the turn
//! ([`ov_engine::transcript::zcode::LineFacts::is_terminal`]); only complete turns are expected on
//! the server. A partial last line (no trailing newline) never completes a turn.

use std::path::Path;

use anyhow::Context;
use serde_json::Value;

/// One tool call of one model response.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// `toolCallId`.
    pub id: String,
    /// `toolName`.
    pub name: String,
    /// `toolInput`.
    pub input: Value,
}

/// One rollout line, already carrying the simulated session id.
#[derive(Debug, Clone)]
pub struct Line {
    /// The bytes to write, without the newline.
    pub raw: String,
    /// False only for a partial last line of the recording (no trailing newline).
    pub complete: bool,
    /// `response.toolCalls` of this call (main lines only).
    pub tool_calls: Vec<ToolCall>,
}

/// Size of a `huge-answer` answer: over the engine's 8 MiB message limit and over half the
/// journal's 64 MiB frame cap (what broke capture before the limit).
pub const HUGE_ANSWER: usize = 33 << 20;

/// One turn as ZCode played it.
#[derive(Debug, Clone)]
pub struct Turn {
    /// Position in the session, from 0 (the number `--faults` uses).
    pub index: usize,
    /// `turnId` (else `traceId`) of its `main_turn` lines.
    pub turn_id: String,
    /// `traceId` of its first line that has one.
    pub trace_id: Option<String>,
    /// The prompt given to UserPromptSubmit: the user's words of the first line that has
    /// any (`ov_engine::transcript::zcode::parse_line`). `None` when no line carries any (a turn begun
    /// by a task notification, a tail window without the prompt, only a partial line).
    pub prompt: Option<String>,
    /// The user message a capture must send: the prompt, then what the user typed into
    /// the running turn (`ov_engine::turnbook::user_message` of the lines' words, merged
    /// by `ov_engine::turn::TurnFragment::merge`).
    pub user_message: Option<String>,
    /// `response.text` of the last complete main line with a terminal `finishReason`.
    pub final_text: Option<String>,
    /// See the module doc.
    pub complete: bool,
    /// What the harness's Stop payload says the answer is, when it is not `final_text`
    /// (Claude Code: the answer's last text block).
    pub stop_text: Option<String>,
    /// Lines in file order.
    pub lines: Vec<Line>,
}

impl Turn {
    /// Why the turn is not complete, in a sentence; `None` when it is.
    pub fn incomplete_reason(&self, harness: Harness) -> Option<&'static str> {
        if self.complete {
            return None;
        }
        Some(match harness {
            Harness::ClaudeCode => {
                "its model call failed or was cut short, so Claude Code fired no Stop for it"
            }
            Harness::Zcode if self.lines.last().is_some_and(|l| !l.complete) => {
                "its last rollout line is cut off (no trailing newline): the recording ends mid-write"
            }
            Harness::Zcode => {
                "its last model call never ended the turn (no terminal finishReason): it was \
                 interrupted"
            }
        })
    }

    /// Tool calls over all lines (ZCode's `toolCallCount`).
    pub fn tool_call_count(&self) -> usize {
        self.lines.iter().map(|l| l.tool_calls.len()).sum()
    }

    /// `huge-answer`: the final answer becomes one of [`HUGE_ANSWER`] bytes, in the rollout
    /// line that carries it and in the Stop payload.
    pub fn make_answer_huge(&mut self) {
        let Some(old) = self.final_text.clone() else {
            return;
        };
        let mut huge = String::with_capacity(HUGE_ANSWER + 64);
        while huge.len() < HUGE_ANSWER {
            huge.push_str("the same long answer line, over and over. ");
        }
        for line in self.lines.iter_mut().rev() {
            let Ok(mut v) = serde_json::from_str::<Value>(&line.raw) else {
                continue;
            };
            if v.pointer("/response/text").and_then(Value::as_str) == Some(old.as_str()) {
                if let Some(t) = v.pointer_mut("/response/text") {
                    *t = Value::String(huge.clone());
                }
                line.raw = v.to_string();
                break;
            }
        }
        self.final_text = Some(huge);
    }
}

/// The agent that wrote a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Harness {
    /// A ZCode rollout.
    Zcode,
    /// A Claude Code session transcript.
    ClaudeCode,
}

impl Harness {
    /// The `ovhook --harness` name.
    pub fn name(self) -> &'static str {
        match self {
            Harness::Zcode => "zcode",
            Harness::ClaudeCode => "claude-code",
        }
    }

    /// The prefix of the OpenViking session id ovhook uses.
    pub fn remote_prefix(self) -> &'static str {
        match self {
            Harness::Zcode => "zc-",
            Harness::ClaudeCode => "cc-",
        }
    }
}

/// A parsed recording.
#[derive(Debug, Clone)]
pub struct Session {
    /// Who wrote it.
    pub harness: Harness,
    /// The `sessionId` of the recording, if any line has one.
    pub recorded_id: Option<String>,
    /// Lines before the first `main_turn` line.
    pub prelude: Vec<Line>,
    /// Turns in file order.
    pub turns: Vec<Turn>,
}

impl Session {
    /// Reads `path` and rewrites its session id to `new_id`.
    pub fn load(path: &Path, new_id: &str) -> anyhow::Result<Session> {
        let bytes =
            std::fs::read(path).with_context(|| format!("could not read {}", path.display()))?;
        let text = String::from_utf8(bytes)
            .with_context(|| format!("could not read {}: not UTF-8", path.display()))?;
        if super::claude_session::is_claude_transcript(&text) {
            return super::claude_session::parse(path, &text, new_id);
        }
        Ok(Session::parse(&text, new_id))
    }

    /// Parses a recording held in memory (see [`Session::load`]).
    pub fn parse(text: &str, new_id: &str) -> Session {
        let mut pieces: Vec<(&str, bool)> = text
            .split_inclusive('\n')
            .map(|l| match l.strip_suffix('\n') {
                Some(body) => (body, true),
                None => (l, false),
            })
            .collect();
        pieces.retain(|(body, complete)| *complete || !body.is_empty());

        let parsed: Vec<Option<Value>> = pieces
            .iter()
            .map(|(body, complete)| {
                if *complete {
                    serde_json::from_str(body).ok()
                } else {
                    None
                }
            })
            .collect();
        let recorded_id = parsed.iter().flatten().find_map(|v| {
            v.get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        let rewrite = IdRewrite::new(recorded_id.as_deref(), new_id);

        let mut session = Session {
            harness: Harness::Zcode,
            recorded_id,
            prelude: Vec::new(),
            turns: Vec::new(),
        };
        let mut words: Vec<ov_engine::turn::TurnFragment> = Vec::new();
        for ((body, complete), json) in pieces.iter().zip(parsed) {
            // The engine's own reading of the line: which lines are the main conversation,
            // the turn id, the prompt (the user's words), the terminal-call rule.
            let facts = if *complete {
                ov_engine::transcript::zcode::parse_line(body.as_bytes())
                    .ok()
                    .flatten()
            } else {
                None
            };
            let line_turn = match &facts {
                Some(f) => Some(f.turn_id.clone()),
                // A partial line cannot be parsed; find its turn id textually.
                None if !complete => {
                    // Main unless it names another query source (absent counts as main).
                    sniff_string(body, "turnId").filter(|_| {
                        sniff_string(body, "querySource").is_none_or(|q| q == "main_turn")
                    })
                }
                None => None,
            };
            let line = Line {
                raw: rewrite.apply(body, json.as_ref()),
                complete: *complete,
                tool_calls: match (&facts, &json) {
                    (Some(_), Some(v)) => tool_calls(v),
                    _ => Vec::new(),
                },
            };
            let starts_turn = match (&line_turn, session.turns.last()) {
                (Some(id), Some(last)) => *id != last.turn_id,
                (Some(_), None) => true,
                (None, _) => false,
            };
            if starts_turn {
                let turn_id = line_turn.clone().unwrap_or_default();
                session.turns.push(Turn {
                    index: session.turns.len(),
                    turn_id,
                    trace_id: None,
                    prompt: None,
                    user_message: None,
                    final_text: None,
                    complete: false,
                    stop_text: None,
                    lines: Vec::new(),
                });
                words.push(ov_engine::turn::TurnFragment::default());
            }
            let Some(turn) = session.turns.last_mut() else {
                session.prelude.push(line);
                continue;
            };
            if let Some(f) = &facts {
                if turn.trace_id.is_none() {
                    turn.trace_id = json
                        .as_ref()
                        .and_then(|v| v.get("traceId"))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                }
                // The engine's merge: the first line carrying words gives the prompt, a
                // later line's words further on in the conversation are steering.
                if let Some(w) = words.get_mut(turn.index) {
                    w.merge(&ov_engine::turn::TurnFragment {
                        prompt: f.prompt.clone(),
                        prompt_at: f.prompt_at,
                        ..ov_engine::turn::TurnFragment::default()
                    });
                    turn.prompt.clone_from(&w.prompt);
                    turn.user_message = ov_engine::turnbook::user_message(
                        w.prompt.as_deref(),
                        w.steering.iter().map(|(_, s)| s.as_str()),
                    );
                }
                // Invariant: `complete` and `final_text` describe the last complete main line.
                turn.complete = f.is_terminal();
                turn.final_text = if f.is_terminal() {
                    Some(f.text.clone().unwrap_or_default())
                } else {
                    None
                };
            }
            turn.lines.push(line);
        }
        session
    }

    /// Number of complete turns: what `expected` counts.
    pub fn complete_turns(&self) -> usize {
        self.turns.iter().filter(|t| t.complete).count()
    }
}

/// Replaces the recorded session id by the simulated one in every line.
///
/// A long recorded id (`sess_<uuid>`) is replaced textually, which keeps every other byte of
/// the line and also rewrites the header `x-session-id` (the uuid without `sess_`). A short id
/// could also occur in content, so it is only replaced in the `sessionId` field of parsed lines.
struct IdRewrite {
    textual: Vec<(String, String)>,
    new_id: String,
}

impl IdRewrite {
    fn new(recorded: Option<&str>, new_id: &str) -> IdRewrite {
        let mut textual = Vec::new();
        if let Some(old) = recorded.filter(|o| o.len() >= 16) {
            let old_bare = old.strip_prefix("sess_").unwrap_or(old);
            let new_bare = new_id.strip_prefix("sess_").unwrap_or(new_id);
            textual.push((old_bare.to_owned(), new_bare.to_owned()));
        }
        IdRewrite {
            textual,
            new_id: new_id.to_owned(),
        }
    }

    fn apply(&self, body: &str, json: Option<&Value>) -> String {
        if !self.textual.is_empty() {
            return self.textual.iter().fold(body.to_owned(), |s, (old, new)| {
                s.replace(old.as_str(), new)
            });
        }
        match json {
            Some(Value::Object(o)) if o.contains_key("sessionId") => {
                let mut o = o.clone();
                o.insert("sessionId".into(), Value::String(self.new_id.clone()));
                Value::Object(o).to_string()
            }
            _ => body.to_owned(),
        }
    }
}

fn tool_calls(v: &Value) -> Vec<ToolCall> {
    let Some(calls) = v.pointer("/response/toolCalls").and_then(Value::as_array) else {
        return Vec::new();
    };
    calls
        .iter()
        .map(|c| ToolCall {
            id: c
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            name: c
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            input: c
                .get("input")
                .cloned()
                .unwrap_or(Value::Object(Default::default())),
        })
        .collect()
}

/// Finds `"key":"value"` (optional spaces) in raw text and returns the value.
fn sniff_string(raw: &str, key: &str) -> Option<String> {
    let pat = format!("\"{key}\"");
    let at = raw.find(&pat)? + pat.len();
    let rest = raw[at..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    let end = rest.find('"')?;
    Some(rest[..end].to_owned())
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(turn: &str, source: &str, msgs: Value, finish: Option<&str>, text: &str) -> String {
        let mut v = json!({
            "type": "model_io", "sessionId": "sess_11111111-2222-3333-4444-555555555555",
            "turnId": turn, "traceId": format!("trace-{turn}"), "requestId": "r", "attempt": 1,
            "querySource": source,
            "request": {"messages": msgs, "headers": {"x-session-id": "11111111-2222-3333-4444-555555555555"}},
            "response": {"text": text, "toolCalls": []}
        });
        if let Some(f) = finish {
            v["response"]["finishReason"] = json!(f);
        }
        if finish == Some("tool-calls") {
            v["response"]["toolCalls"] =
                json!([{"id": "toolu_1", "name": "Bash", "input": {"command": "echo 4"}}]);
        }
        v.to_string()
    }

    #[test]
    fn turns_prompts_and_completeness() {
        let sr = json!({"role": "user", "content": "<system-reminder>skills</system-reminder>"});
        let p1 = json!({"role": "user", "content": [{"type": "text", "text": "compute 2+2"}]});
        let text = [
            line("turn_a", "main_turn", json!([sr, p1]), Some("tool-calls"), ""),
            line("turn_a", "session_title", json!([]), Some("stop"), "Title"),
            line("turn_a", "main_turn", json!([sr, p1, {"role": "assistant", "content": ""}, sr]), Some("stop"), "It is 4."),
            // A tail window without the prompt, then its final line.
            line("turn_b", "main_turn", json!([{"role": "assistant", "content": "x"}]), Some("tool-calls"), ""),
            line("turn_b", "main_turn", json!([{"role": "user", "content": "next please"}]), Some("stop"), "done"),
            // Interrupted.
            line("turn_c", "main_turn", json!([{"role": "user", "content": "third"}]), None, "half"),
        ]
        .join("\n")
            + "\n{\"type\":\"model_io\",\"turnId\":\"turn_d\",\"querySource\":\"main_turn\",\"sessionId\":\"sess_11111111-2222-3333-4444-555555555555\",\"request\":{";
        let s = Session::parse(&text, "sess_99999999-8888-7777-6666-000000000000");
        assert_eq!(
            s.recorded_id.as_deref(),
            Some("sess_11111111-2222-3333-4444-555555555555")
        );
        let ids: Vec<&str> = s.turns.iter().map(|t| t.turn_id.as_str()).collect();
        assert_eq!(ids, ["turn_a", "turn_b", "turn_c", "turn_d"]);
        let a = &s.turns[0];
        assert_eq!(a.lines.len(), 3);
        assert!(a.complete);
        assert_eq!(a.prompt.as_deref(), Some("compute 2+2"));
        assert_eq!(a.final_text.as_deref(), Some("It is 4."));
        assert_eq!(a.tool_call_count(), 1);
        assert!(a
            .lines
            .iter()
            .all(|l| l.raw.contains("99999999-8888") && !l.raw.contains("11111111")));
        let b = &s.turns[1];
        assert!(b.complete);
        assert_eq!(b.prompt.as_deref(), Some("next please"));
        assert!(!s.turns[2].complete);
        let d = &s.turns[3];
        assert!(!d.complete && d.prompt.is_none());
        assert!(!d.lines[0].complete);
        assert!(
            d.lines[0]
                .raw
                .ends_with("sess_99999999-8888-7777-6666-000000000000\",\"request\":{"),
            "{}",
            d.lines[0].raw
        );
        assert_eq!(s.complete_turns(), 2);
    }
}
