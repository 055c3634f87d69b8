//! Tool calls of a turn (`capture.tools`): what the agent did, sent with its answer.
//!
//! # Context
//!
//! OpenViking 0.5.2 takes a message as `parts`: a `text` part and any number of `tool` parts
//! (`tool_id`, `tool_name`, `tool_input` (an object), `tool_output`, `tool_status`, and, for an
//! output that was cut, `tool_output_truncated` and `tool_output_original_chars`). On commit
//! the server keeps outputs over 20,000 characters aside in the session's `tool-results/` and
//! leaves a preview in the message. ovhook sends the tool calls of a turn as tool parts of the
//! turn's assistant message, when `capture.tools` is on (default off).
//!
//! # Design
//!
//! A tool call enters the engine in one place, [`ToolCall::capture`]: a hook payload
//! (Codex's and Qwen Code's PostToolUse) or a transcript read (the Claude Code, Copilot and
//! ZCode readers give [`TurnTools`], which the worker passes as [`RawToolCall`]s). There every
//! string of it (id, name, every key and string value of the input, the output) passes the
//! capture privacy rule ([`crate::privacy::Policy::capture`],
//! as assistant text), and then it is bounded:
//!
//! | what | bound |
//! |---|---|
//! | output | [`MAX_OUTPUT_CHARS`] characters (the rest cut; the original count kept) |
//! | input | [`MAX_INPUT_CHARS`] characters of compact JSON (over it: the JSON text, cut, as `{"truncated_input": …}`) |
//! | name, id | [`MAX_NAME_CHARS`] characters |
//! | calls per turn | [`MAX_CALLS_PER_TURN`] (the first ones; later ones are not kept) |
//!
//! Only then is it journaled ([`crate::event::Event::ToolCalls`]). With `capture.tools` off
//! nothing of a tool is journaled or sent. Exactly once: the fold keeps a turn's calls until
//! its assistant message is planned and moves them onto that message
//! ([`crate::projector::State::planned_tools`]); they are sent in the same request as the
//! message, under its key, and calls of a turn whose answer was already planned are ignored.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::privacy::{Policy, Redactions};
use crate::turn::Role;

/// Characters of a tool's output kept (after the privacy rule); the rest is cut and the
/// original count sent as `tool_output_original_chars`. Below the server's 20,000 threshold
/// for keeping an output aside, so what is sent stays in the message.
pub const MAX_OUTPUT_CHARS: usize = 4000;
/// Characters of a tool's input, as compact JSON, kept.
pub const MAX_INPUT_CHARS: usize = 4000;
/// Characters of a tool's name and id kept.
pub const MAX_NAME_CHARS: usize = 200;
/// Tool calls of one turn kept: the first ones.
pub const MAX_CALLS_PER_TURN: usize = 64;

/// One tool call of a turn as journaled and sent: privacy applied, bounded.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolCall {
    /// The harness's id of the call (`tool_use_id`, the rollout's `toolCalls[].id`), when it
    /// has one: two sightings of one id are one call.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The input as compact JSON text (`""`: none); when it was over [`MAX_INPUT_CHARS`],
    /// that text cut, and [`ToolCall::input_truncated`] is set.
    pub input: String,
    /// The input was cut.
    pub input_truncated: bool,
    /// The output text (a JSON output as compact JSON), cut to [`MAX_OUTPUT_CHARS`]; `None`
    /// when no result was seen.
    pub output: Option<String>,
    /// Characters of the output before it was cut.
    pub output_chars: u64,
    /// The tool reported a failure.
    pub failed: bool,
}

/// A tool call as a payload or a transcript gives it, before anything is kept of it.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawToolCall<'a> {
    /// The harness's id of the call.
    pub id: Option<&'a str>,
    /// The tool's name.
    pub name: &'a str,
    /// The input (any JSON; an object for every harness we know).
    pub input: Option<&'a Value>,
    /// The output (a string, or any JSON, kept as its compact text).
    pub output: Option<&'a Value>,
    /// The tool reported a failure.
    pub failed: bool,
}

/// A tool call as a transcript reader gives it, owned, nothing applied yet: it never enters
/// the journal as it is, only through [`ToolCall::capture`] (the chunk carries it unserialized).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TranscriptToolCall {
    /// The harness's id of the call.
    pub id: Option<String>,
    /// The tool's name (empty when the range held only the call's result: its name is then
    /// the one the turn's kept call of that id has).
    pub name: String,
    /// The input.
    pub input: Option<Value>,
    /// The output, when the range held the result.
    pub output: Option<Value>,
    /// The tool reported a failure.
    pub failed: bool,
}

impl TranscriptToolCall {
    /// The call as [`ToolCall::capture`] takes it, named `name` when it has no name itself.
    pub fn raw<'a>(&'a self, name: &'a str) -> RawToolCall<'a> {
        RawToolCall {
            id: self.id.as_deref(),
            name: if self.name.is_empty() {
                name
            } else {
                &self.name
            },
            input: self.input.as_ref(),
            output: self.output.as_ref(),
            failed: self.failed,
        }
    }
}

/// A tool call as a model request names it in a transcript: its id, its name, its input.
pub type RequestedCall = (Option<String>, String, Option<Value>);

/// The call `v` names, its id under `id_key` and its input under `input_key` (Copilot's
/// `toolCallId`/`arguments`, ZCode's `id`/`input`); `None` without a name.
pub fn requested_call(v: &Value, id_key: &str, input_key: &str) -> Option<RequestedCall> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())?;
    Some((
        v.get(id_key).and_then(Value::as_str).map(str::to_owned),
        name.to_owned(),
        v.get(input_key).cloned(),
    ))
}

/// The tool calls of one turn of a transcript range, in call order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnTools {
    /// The turn; empty for results whose call was requested before the range (each then goes
    /// to the turn that keeps a call of its id).
    pub turn_id: String,
    /// Its calls (at most [`MAX_CALLS_PER_TURN`]).
    pub calls: Vec<TranscriptToolCall>,
}

impl TurnTools {
    /// A call's `tool_use` block: a new call, or the name and input of one whose result came
    /// first.
    pub fn call(&mut self, id: Option<String>, name: String, input: Option<Value>) {
        if let Some(c) = self.find(id.as_deref()) {
            c.name = name;
            c.input = input;
        } else if self.calls.len() < MAX_CALLS_PER_TURN {
            self.calls.push(TranscriptToolCall {
                id,
                name,
                input,
                ..TranscriptToolCall::default()
            });
        }
    }

    /// A call's result, paired with its call by `id`.
    pub fn result(&mut self, id: String, output: Value, failed: bool) {
        if let Some(c) = self.find(Some(&id)) {
            c.output = Some(output);
            c.failed |= failed;
        } else if self.calls.len() < MAX_CALLS_PER_TURN {
            self.calls.push(TranscriptToolCall {
                id: Some(id),
                output: Some(output),
                failed,
                ..TranscriptToolCall::default()
            });
        }
    }

    fn find(&mut self, id: Option<&str>) -> Option<&mut TranscriptToolCall> {
        let id = id?;
        self.calls.iter_mut().find(|c| c.id.as_deref() == Some(id))
    }
}

impl ToolCall {
    /// The one entry rule: `raw` with the capture privacy rule applied to every string
    /// (counted in `counts`), then bounded (see the module docs). `None` when nothing names
    /// the tool (an empty name after the rule).
    pub fn capture(policy: &Policy, raw: RawToolCall<'_>, counts: &mut Redactions) -> Option<Self> {
        let mut clean =
            |s: &str| -> String { policy.capture(s, Role::Assistant, counts).into_owned() };
        let name = bounded(clean(raw.name).trim(), MAX_NAME_CHARS);
        if name.is_empty() {
            return None;
        }
        let id = raw
            .id
            .map(|i| bounded(clean(i).trim(), MAX_NAME_CHARS))
            .filter(|i| !i.is_empty());
        let (input, input_truncated) = match raw.input {
            None | Some(Value::Null) => (String::new(), false),
            Some(v) => {
                let text = serde_json::to_string(&clean_value(v, &mut clean)).unwrap_or_default();
                let cut = bounded(&text, MAX_INPUT_CHARS);
                let truncated = cut.len() < text.len();
                (cut, truncated)
            }
        };
        let output = raw.output.map(|v| match v {
            Value::String(s) => clean(s),
            other => serde_json::to_string(&clean_value(other, &mut clean)).unwrap_or_default(),
        });
        let output_chars = output.as_deref().map_or(0, |o| o.chars().count() as u64);
        Some(ToolCall {
            id,
            name,
            input,
            input_truncated,
            output: output.map(|o| bounded(&o, MAX_OUTPUT_CHARS)),
            output_chars,
            failed: raw.failed,
        })
    }

    /// Folds a later sighting of the same call into this one: what it adds (an output, an
    /// input, a failure) is kept.
    pub fn merge(&mut self, later: &ToolCall) {
        if self.input.is_empty() && !later.input.is_empty() {
            self.input.clone_from(&later.input);
            self.input_truncated = later.input_truncated;
        }
        if later.output.is_some() {
            self.output.clone_from(&later.output);
            self.output_chars = later.output_chars;
        }
        self.failed |= later.failed;
    }

    /// Whether `other` is a sighting of this call: the same id, or, without ids, the same call.
    pub fn same_call(&self, other: &ToolCall) -> bool {
        match (&self.id, &other.id) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.name == other.name && self.input == other.input,
            _ => false,
        }
    }

    /// The `tool` part OpenViking takes for this call.
    pub fn to_part(&self) -> Value {
        let input = if self.input.is_empty() {
            Value::Object(Map::new())
        } else if self.input_truncated {
            obj("truncated_input", Value::String(self.input.clone()))
        } else {
            match serde_json::from_str::<Value>(&self.input) {
                Ok(Value::Object(m)) => Value::Object(m),
                Ok(other) => obj("input", other),
                Err(_) => obj("truncated_input", Value::String(self.input.clone())),
            }
        };
        let output = self.output.clone().unwrap_or_default();
        let cut = (output.chars().count() as u64) < self.output_chars;
        let mut part = Map::new();
        part.insert("type".into(), Value::String("tool".into()));
        part.insert(
            "tool_id".into(),
            Value::String(self.id.clone().unwrap_or_default()),
        );
        part.insert("tool_name".into(), Value::String(self.name.clone()));
        part.insert("tool_input".into(), input);
        part.insert("tool_output".into(), Value::String(output));
        let status = match (self.failed, self.output.is_some()) {
            (true, _) => "error",
            (false, true) => "completed",
            (false, false) => "pending",
        };
        part.insert("tool_status".into(), Value::String(status.into()));
        if cut {
            part.insert("tool_output_truncated".into(), Value::Bool(true));
            part.insert(
                "tool_output_original_chars".into(),
                Value::from(self.output_chars),
            );
        }
        Value::Object(part)
    }

    /// Bytes this call adds to a request, roughly (for batch sizing and token estimates).
    pub fn wire_len(&self) -> usize {
        self.name.len()
            + self.input.len()
            + self.output.as_deref().map_or(0, str::len)
            + self.id.as_deref().map_or(0, str::len)
            + 96
    }
}

/// Adds `later` to a turn's `calls`: a sighting of a call already there is merged into it,
/// a new call appended while the turn has fewer than [`MAX_CALLS_PER_TURN`].
pub fn add_calls(calls: &mut Vec<ToolCall>, later: &[ToolCall]) {
    for c in later {
        if let Some(k) = calls.iter_mut().find(|k| k.same_call(c)) {
            k.merge(c);
        } else if calls.len() < MAX_CALLS_PER_TURN {
            calls.push(c.clone());
        }
    }
}

fn obj(key: &str, v: Value) -> Value {
    let mut m = Map::new();
    m.insert(key.into(), v);
    Value::Object(m)
}

/// `v` with every key and string passed through `clean`.
fn clean_value(v: &Value, clean: &mut impl FnMut(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(clean(s)),
        Value::Array(a) => Value::Array(a.iter().map(|x| clean_value(x, clean)).collect()),
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                let value = clean_value(x, clean);
                out.insert(clean(k), value);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn bounded(s: &str, max: usize) -> String {
    crate::text::truncate_chars(s, max)
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(input: &Value, output: &Value) -> ToolCall {
        let mut c = Redactions::default();
        ToolCall::capture(
            &Policy::builtin(),
            RawToolCall {
                id: Some("toolu_1"),
                name: "Bash",
                input: Some(input),
                output: Some(output),
                failed: false,
            },
            &mut c,
        )
        .expect("a named call")
    }

    #[test]
    fn a_call_becomes_a_completed_tool_part_with_its_input_object() {
        let c = call(&json!({"command": "echo 4"}), &json!("4\n"));
        assert_eq!(
            c.to_part(),
            json!({"type":"tool","tool_id":"toolu_1","tool_name":"Bash","tool_input":{"command":"echo 4"},"tool_output":"4\n","tool_status":"completed"})
        );
    }

    #[test]
    fn a_long_output_is_cut_and_says_how_long_it_was() {
        let c = call(&json!({}), &json!("x".repeat(MAX_OUTPUT_CHARS + 10)));
        let p = c.to_part();
        assert_eq!(
            p["tool_output"].as_str().map(str::len),
            Some(MAX_OUTPUT_CHARS)
        );
        assert_eq!(p["tool_output_truncated"], json!(true));
        assert_eq!(
            p["tool_output_original_chars"],
            json!(MAX_OUTPUT_CHARS + 10)
        );
    }

    #[test]
    fn a_long_input_travels_as_its_cut_text() {
        let c = call(
            &json!({"content": "y".repeat(MAX_INPUT_CHARS)}),
            &json!("ok"),
        );
        assert!(c.input_truncated);
        assert_eq!(c.input.chars().count(), MAX_INPUT_CHARS);
        let p = c.to_part();
        assert!(p["tool_input"]["truncated_input"].is_string());
    }

    #[test]
    fn a_json_output_is_kept_as_its_text_and_sightings_merge() {
        let mut c = call(&json!({"a": 1}), &json!({"stdout": "4", "exitCode": 0}));
        assert_eq!(c.output.as_deref(), Some(r#"{"stdout":"4","exitCode":0}"#));
        let mut calls = vec![ToolCall {
            output: None,
            ..c.clone()
        }];
        add_calls(&mut calls, std::slice::from_ref(&c));
        assert_eq!(calls, vec![c.clone()]);
        c.id = Some("toolu_2".into());
        for _ in 0..MAX_CALLS_PER_TURN * 2 {
            add_calls(&mut calls, std::slice::from_ref(&c));
            c.id = c.id.map(|i| format!("{i}x"));
        }
        assert_eq!(calls.len(), MAX_CALLS_PER_TURN);
    }
}
