//! A recorded ZCode session, cut into the turns ZCode played.
//!
//! # Design
//!
//! The rollout has one line per model call (`type:"model_io"`). A *turn* is a maximal run of
//! lines whose `main_turn` lines share one `turnId` (else `traceId`); lines of other query
//! sources (`session_title`, `subagent`) and non-`model_io` lines belong to the run they sit
//! in and are replayed at their position. Lines before the first `main_turn` line form the
//! prelude. This is an emulator of ZCode, not a hot path: every line is parsed with
//! serde_json.
//!
//! A turn is *complete* when its last complete `main_turn` line has a terminal
//! `finishReason` (present and not `tool-calls`); only complete turns are expected on the
//! server. A partial last line (no trailing newline) never completes a turn.

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

/// Size of a `huge-answer` answer: over half the journal's 64 MiB frame cap.
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
    /// The prompt given to UserPromptSubmit (injected blocks removed). `None` when no line of
    /// the turn carries any user text (e.g. only a partial line was recorded).
    pub prompt: Option<String>,
    /// True when `prompt` is the real prompt (last non-injected user message) rather than the
    /// fallback (first user text found).
    pub prompt_is_real: bool,
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
        // Raw user texts per turn, to pick the prompt once the turn's lines are all known.
        let mut real_prompts: Vec<Option<String>> = Vec::new();
        let mut any_user: Vec<Option<String>> = Vec::new();
        for ((body, complete), json) in pieces.iter().zip(parsed) {
            let main = json.as_ref().is_some_and(is_main);
            let line_turn = if main {
                json.as_ref().and_then(turn_id_of)
            } else if !complete {
                // A partial line cannot be parsed; find its turn id textually.
                sniff_string(body, "turnId").filter(|_| body.contains("\"main_turn\""))
            } else {
                None
            };
            let line = Line {
                raw: rewrite.apply(body, json.as_ref()),
                complete: *complete,
                tool_calls: if main {
                    json.as_ref().map(tool_calls).unwrap_or_default()
                } else {
                    Vec::new()
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
                    prompt_is_real: false,
                    final_text: None,
                    complete: false,
                    stop_text: None,
                    lines: Vec::new(),
                });
                real_prompts.push(None);
                any_user.push(None);
            }
            let Some(turn) = session.turns.last_mut() else {
                session.prelude.push(line);
                continue;
            };
            if let Some(v) = json.as_ref().filter(|_| main) {
                if turn.trace_id.is_none() {
                    turn.trace_id = v.get("traceId").and_then(Value::as_str).map(str::to_owned);
                }
                let slot = turn.index;
                if real_prompts[slot].is_none() {
                    real_prompts[slot] = real_prompt(v);
                }
                if any_user[slot].is_none() {
                    any_user[slot] = first_user_text(v);
                }
                // Invariant: `complete` and `final_text` describe the last complete main line.
                match finish_reason(v) {
                    Some(reason) if reason != "tool-calls" => {
                        turn.complete = true;
                        turn.final_text = Some(
                            v.pointer("/response/text")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                        );
                    }
                    _ => turn.complete = false,
                }
            }
            turn.lines.push(line);
        }
        for (turn, (real, any)) in session
            .turns
            .iter_mut()
            .zip(real_prompts.into_iter().zip(any_user))
        {
            turn.prompt_is_real = real.is_some();
            turn.prompt = real.or(any);
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
            Some(v) if v.get("sessionId").is_some() => {
                let mut v = v.clone();
                v["sessionId"] = Value::String(self.new_id.clone());
                v.to_string()
            }
            _ => body.to_owned(),
        }
    }
}

fn is_main(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("model_io")
        && v.get("querySource").and_then(Value::as_str) == Some("main_turn")
}

fn turn_id_of(v: &Value) -> Option<String> {
    ["turnId", "traceId"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
        .map(str::to_owned)
}

fn finish_reason(v: &Value) -> Option<&str> {
    v.pointer("/response/finishReason").and_then(Value::as_str)
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

/// The text of a message's `content`: a string, or the `text` parts of an array joined by
/// newlines.
pub fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

fn user_texts(v: &Value) -> impl DoubleEndedIterator<Item = String> + '_ {
    v.pointer("/request/messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .filter_map(|m| m.get("content").and_then(content_text))
}

/// The last user message that is not made only of injected blocks, cleaned.
fn real_prompt(v: &Value) -> Option<String> {
    user_texts(v)
        .rev()
        .map(|t| clean_injected(&t))
        .find(|t| !t.is_empty())
}

/// Fallback prompt: the first user text of the line (cleaned when that leaves something).
fn first_user_text(v: &Value) -> Option<String> {
    user_texts(v).next().map(|t| {
        let cleaned = clean_injected(&t);
        if cleaned.is_empty() {
            t.trim().to_owned()
        } else {
            cleaned
        }
    })
}

/// The blocks ZCode and memory plugins inject into user messages.
const INJECTED: [&str; 3] = ["system-reminder", "openviking-context", "relevant-memories"];

/// Removes `<system-reminder>…</system-reminder>`, `<openviking-context …>…</openviking-context>`
/// and `<relevant-memories>…</relevant-memories>` blocks, then trims. An unclosed block runs to
/// the end of the text. Mirrors `ov_engine::text::clean_injected` (kept local so the harness
/// judges ovhook by an independent reading of the format).
pub fn clean_injected(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while !rest.is_empty() {
        let mut earliest: Option<(usize, &str)> = None;
        for tag in INJECTED {
            let open = format!("<{tag}");
            let mut from = 0;
            while let Some(i) = rest[from..].find(&open) {
                let at = from + i;
                // `<tag>` or `<tag attr…>`, not `<tagsuffix>`.
                let next = rest[at + open.len()..].chars().next();
                if matches!(next, Some('>' | ' ' | '\t' | '\n' | '\r' | '/')) {
                    if earliest.is_none_or(|(e, _)| at < e) {
                        earliest = Some((at, tag));
                    }
                    break;
                }
                from = at + open.len();
            }
        }
        let Some((at, tag)) = earliest else {
            out.push_str(rest);
            break 'scan;
        };
        out.push_str(&rest[..at]);
        let close = format!("</{tag}>");
        match rest[at..].find(&close) {
            Some(end) => rest = &rest[at + end + close.len()..],
            None => rest = "",
        }
    }
    out.trim().to_owned()
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
    fn clean_injected_strips_blocks() {
        assert_eq!(clean_injected("<system-reminder>x</system-reminder>\n"), "");
        assert_eq!(
            clean_injected("<openviking-context source=\"s\">a</openviking-context> hi <relevant-memories>m</relevant-memories>"),
            "hi"
        );
        assert_eq!(
            clean_injected("<system-reminders>keep</system-reminders>"),
            "<system-reminders>keep</system-reminders>"
        );
        assert_eq!(clean_injected("ask <system-reminder>open"), "ask");
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
        assert!(a.complete && a.prompt_is_real);
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
