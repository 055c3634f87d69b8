//! Writing a [`SessionSpec`] as ZCode `model_io` lines (`docs/zcode-hooks.md`).

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{json, Value};

use crate::spec::{Finish, Rng, SessionSpec, Text, TurnSpec, Window};

/// What was written.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// `sess_<uuid>`.
    pub session_id: String,
    /// `turn_<uuid>` of each turn, in order.
    pub turn_ids: Vec<String>,
    /// Lines written (the partial one included).
    pub lines: usize,
    /// Bytes written.
    pub bytes: u64,
    /// Messages OpenViking's Node plugin would send on a first capture of this file: per
    /// parsable line, the last user message and the response text, when non-empty after
    /// its injected-block filter (`docs/anchor-behaviours.md` §10.2).
    pub anchor_messages: usize,
}

#[derive(Serialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(rename = "sessionId")]
    session_id: &'a str,
    #[serde(rename = "turnId")]
    turn_id: &'a str,
    #[serde(rename = "traceId")]
    trace_id: &'a str,
    #[serde(rename = "requestId")]
    request_id: &'a str,
    attempt: u32,
    #[serde(rename = "querySource", skip_serializing_if = "Option::is_none")]
    query_source: Option<&'static str>,
    #[serde(rename = "startedAt")]
    started_at: String,
    #[serde(rename = "completedAt")]
    completed_at: String,
    #[serde(rename = "durationMs")]
    duration_ms: u64,
    model: &'a Value,
    request: Request<'a>,
    response: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

#[derive(Serialize)]
struct Request<'a> {
    body: Body<'a>,
    headers: Value,
    #[serde(rename = "maxOutputTokens")]
    max_output_tokens: u32,
    messages: &'a [Value],
    #[serde(rename = "providerOptions")]
    provider_options: Value,
    #[serde(rename = "toolNames")]
    tool_names: &'a [String],
    #[serde(rename = "messageCount")]
    message_count: usize,
    #[serde(rename = "messagesKind")]
    messages_kind: &'static str,
    #[serde(rename = "messageOffset")]
    message_offset: usize,
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'static str,
    max_tokens: u32,
    system: &'a Value,
    tools: &'a Value,
    tool_choice: Value,
    stream: bool,
}

fn hex(rng: &mut Rng, n: usize) -> String {
    let mut s = String::new();
    while s.len() < n {
        s.push_str(&format!("{:016x}", rng.next_u64()));
    }
    s.truncate(n);
    s
}

/// Filler text of about `n` bytes: words from a small vocabulary, deterministic.
fn filler(rng: &mut Rng, n: usize) -> String {
    const WORDS: [&str; 16] = [
        "fn", "let", "match", "struct", "impl", "return", "Result", "Option", "self", "mut", "pub",
        "use", "crate", "where", "async", "loop",
    ];
    let mut s = String::with_capacity(n + 16);
    let mut col = 0;
    while s.len() < n {
        let w = WORDS.get(rng.below(16) as usize).copied().unwrap_or("x");
        s.push_str(w);
        col += w.len() + 1;
        if col > 72 {
            s.push('\n');
            col = 0;
        } else {
            s.push(' ');
        }
    }
    s
}

/// Per-session constant parts of every line.
struct Fixed {
    model: Value,
    system: Value,
    system_text: String,
    tools: Value,
    tool_names: Vec<String>,
}

fn fixed(rng: &mut Rng, heavy: bool) -> Fixed {
    let system_text = format!(
        "You are ZCode, Z.ai's coding agent. Follow the user's instructions.\n{}",
        filler(rng, if heavy { 12_000 } else { 300 })
    );
    let n_tools = if heavy { 24 } else { 3 };
    let tool_names: Vec<String> = ["Bash", "Read", "Write", "Edit", "Glob", "Grep"]
        .iter()
        .cycle()
        .take(n_tools)
        .enumerate()
        .map(|(i, n)| {
            if i < 6 {
                (*n).to_owned()
            } else {
                format!("{n}{i}")
            }
        })
        .collect();
    let tools: Vec<Value> = tool_names
        .iter()
        .map(|n| {
            json!({"name": n, "description": filler(rng, if heavy { 900 } else { 60 }),
                   "input_schema": {"type": "object", "properties": {"command": {"type": "string", "description": "what to run"},
                   "timeout": {"type": "number"}}, "required": ["command"]}})
        })
        .collect();
    Fixed {
        model: json!({"modelId": "glm-4.7", "providerId": "bigmodel", "role": "main", "source": "config"}),
        system: json!([{"type": "text", "text": system_text, "cache_control": {"type": "ephemeral"}}]),
        system_text,
        tools: Value::Array(tools),
        tool_names,
    }
}

/// State of the writer across lines.
struct W<'a, O: Write> {
    out: &'a mut O,
    rng: Rng,
    fx: Fixed,
    session_id: String,
    clock_ms: u64,
    written: Written,
}

impl<O: Write> W<'_, O> {
    #[expect(clippy::too_many_arguments)]
    // NOTE: one call site; the arguments are the line's varying fields.
    fn line(
        &mut self,
        turn_id: &str,
        trace_id: &str,
        request_id: &str,
        attempt: u32,
        query_source: Option<&'static str>,
        messages: &[Value],
        kind: &'static str,
        offset: usize,
        response: Value,
        partial: bool,
        error: Option<Value>,
    ) -> io::Result<()> {
        let duration = 150 + self.rng.below(4000);
        let started = self.clock_ms;
        self.clock_ms += duration + 20;
        let line = Line {
            kind: "model_io",
            session_id: &self.session_id,
            turn_id,
            trace_id,
            request_id,
            attempt,
            query_source,
            started_at: ov_engine::time::format_ms(started),
            completed_at: ov_engine::time::format_ms(started + duration),
            duration_ms: duration,
            model: &self.fx.model,
            request: Request {
                body: Body {
                    model: "glm-4.7",
                    max_tokens: 64_000,
                    system: &self.fx.system,
                    tools: &self.fx.tools,
                    tool_choice: json!({"type": "auto"}),
                    stream: true,
                },
                headers: json!({"User-Agent": "ZCode/0.15.0", "x-zcode-trace-id": trace_id,
                                "x-session-id": self.session_id.trim_start_matches("sess_")}),
                max_output_tokens: 64_000,
                messages,
                provider_options: json!({"anthropic": {"thinking": {"type": "disabled"}}}),
                tool_names: &self.fx.tool_names,
                message_count: messages.len(),
                messages_kind: kind,
                message_offset: offset,
            },
            response,
            error,
        };
        let mut buf = serde_json::to_vec(&line).map_err(io::Error::other)?;
        if partial {
            buf.truncate(buf.len() / 2);
        } else {
            buf.push(b'\n');
        }
        self.out.write_all(&buf)?;
        self.written.lines += 1;
        self.written.bytes += buf.len() as u64;
        if !partial {
            // The anchor: last user message (injected blocks removed) and response text.
            let last_user = messages
                .iter()
                .rev()
                .find(|m| m.get("role").and_then(Value::as_str) == Some("user"));
            if last_user.is_some_and(|m| !anchor_clean_empty(m)) {
                self.written.anchor_messages += 1;
            }
            let text = line
                .response
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !text.trim().is_empty() {
                self.written.anchor_messages += 1;
            }
        }
        Ok(())
    }

    fn response(&mut self, finish: Finish, text: &str, tool_calls: Value) -> Value {
        let mut r = json!({
            "text": text, "toolCalls": tool_calls,
            "responseId": format!("msg_{}", hex(&mut self.rng, 24)), "modelId": "glm-4.7",
            "providerMetadata": {"anthropic": {"cacheCreationInputTokens": 0}},
            "headers": {"content-type": "text/event-stream"},
        });
        if let Some(obj) = r.as_object_mut() {
            match finish {
                Finish::ToolCalls => {
                    obj.insert("finishReason".into(), json!("tool-calls"));
                }
                Finish::Stop => {
                    obj.insert("finishReason".into(), json!("stop"));
                }
                Finish::Interrupted => {}
            }
            if finish != Finish::Interrupted {
                let input = 1000 + self.rng.below(50_000);
                let output = 10 + self.rng.below(2000);
                obj.insert(
                    "usage".into(),
                    json!({"inputTokens": input, "outputTokens": output, "totalTokens": input + output,
                           "cacheReadTokens": input / 2, "cacheWriteTokens": 0}),
                );
            }
        }
        r
    }
}

/// Whether the anchor's `cleanZcodeText` leaves a message empty: its content is only
/// `<system-reminder>` blocks (all the generator injects there).
fn anchor_clean_empty(m: &Value) -> bool {
    let text = match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let t = text.trim();
    t.is_empty() || (t.starts_with("<system-reminder>") && t.ends_with("</system-reminder>"))
}

fn reminder(what: &str) -> Value {
    json!({"role": "user", "content": format!("<system-reminder>\n{what}\n</system-reminder>\n")})
}

fn user_message(turn: &TurnSpec) -> Value {
    if let Some(path) = &turn.image {
        json!({"role": "user", "content": [
            {"type": "image", "image": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==", "mediaType": "image/png"},
            {"type": "text", "text": format!("[Image: source: {path}]")},
            {"type": "text", "text": turn.prompt.raw}]})
    } else if turn.blocks {
        json!({"role": "user", "content": [{"type": "text", "text": turn.prompt.raw}]})
    } else {
        json!({"role": "user", "content": turn.prompt.raw})
    }
}

/// Writes `spec` as a rollout to `out`.
pub fn write_session(spec: &SessionSpec, out: &mut impl Write) -> io::Result<Written> {
    let mut rng = Rng::new(spec.seed);
    let fx = fixed(&mut rng, spec.heavy);
    let session_id = if spec.subagent {
        format!("sess_subagent_agent_{}", rng.uuid())
    } else {
        format!("sess_{}", rng.uuid())
    };
    let main_source = if spec.subagent {
        Some("subagent")
    } else {
        spec.query_source
    };
    let mut w = W {
        out,
        rng,
        fx,
        session_id: session_id.clone(),
        // 2026-07-03T03:02:56.413Z
        clock_ms: 1_783_047_776_413,
        written: Written {
            session_id,
            ..Written::default()
        },
    };
    let mut history: Vec<Value> = vec![
        json!({"role": "system", "content": w.fx.system_text, "cacheControl": {"type": "ephemeral"}}),
        reminder("Available skills: zcode-guide, commit, review"),
        reminder("currentDate: 2026-07-03"),
    ];
    let n_turns = spec.turns.len();
    // Messages the previous main line sent (where a `delta` window starts).
    let mut sent = 0usize;
    for (t, turn) in spec.turns.iter().enumerate() {
        let turn_id = format!("turn_{}", w.rng.uuid());
        let trace_id = w.rng.uuid();
        w.written.turn_ids.push(turn_id.clone());
        let prompt_at = history.len();
        history.push(user_message(turn));
        if turn.reminder_after {
            history.push(reminder("The user is in yolo mode. Todo list is empty."));
        }
        let n_calls = turn.calls.len();
        for (c, call) in turn.calls.iter().enumerate() {
            let partial = spec.partial_last_line && t + 1 == n_turns && c + 1 == n_calls;
            if let Some(steer) = &call.steer_before {
                history.push(json!({"role": "user", "content": steer.raw}));
            }
            let request_id = w.rng.uuid();
            let (offset, kind) = match turn.window {
                Window::Full => (0, "full"),
                Window::Tail(n) => (history.len().saturating_sub(n), "tail"),
                Window::TailWithoutPrompt => (prompt_at + 1, "tail"),
                Window::Delta => (sent.min(history.len()), "delta"),
            };
            let window = history.get(offset..).unwrap_or_default().to_vec();
            sent = history.len();
            if call.retry {
                let mut failed = w.response(Finish::Interrupted, "", json!([]));
                if let Some(o) = failed.as_object_mut() {
                    o.insert(
                        "error".into(),
                        json!({"status": 529, "message": "overloaded"}),
                    );
                }
                w.line(
                    &turn_id,
                    &trace_id,
                    &request_id,
                    1,
                    main_source,
                    &window,
                    kind,
                    offset,
                    failed,
                    false,
                    None,
                )?;
            }
            let tool_calls = match &call.tool {
                Some(tool) => {
                    json!([{"id": format!("toolu_{}", hex(&mut w.rng, 20)), "name": tool.name, "input": tool.input}])
                }
                None => json!([]),
            };
            let response = w.response(call.finish, &call.text.raw, tool_calls.clone());
            let attempt = if call.retry { 2 } else { 1 };
            let error = call
                .error
                .as_ref()
                .filter(|_| call.finish == Finish::Interrupted)
                .map(|m| json!({"name": "Error", "message": m}));
            w.line(
                &turn_id,
                &trace_id,
                &request_id,
                attempt,
                main_source,
                &window,
                kind,
                offset,
                response,
                partial,
                error,
            )?;
            // The conversation grows by this call's answer and tool result.
            match &call.tool {
                Some(tool) => {
                    history.push(json!({"role": "assistant", "content": call.text.raw, "toolCalls": tool_calls}));
                    let id = tool_calls
                        .get(0)
                        .and_then(|v| v.get("id"))
                        .cloned()
                        .unwrap_or(Value::Null);
                    let body = format!(
                        "{}\n{}",
                        tool.output,
                        filler(&mut w.rng, spec.tool_output_bytes)
                    );
                    history.push(json!({"role": "tool", "content": body, "toolCallId": id,
                                        "toolName": tool.name, "isError": tool.is_error}));
                }
                None if !call.text.raw.is_empty() => {
                    history.push(json!({"role": "assistant", "content": call.text.raw}));
                }
                None => {}
            }
            if call.title_after && !partial {
                let title_messages = vec![
                    json!({"role": "system", "content": "Generate a short title for this conversation."}),
                    json!({"role": "user", "content": turn.prompt.raw}),
                ];
                let rid = w.rng.uuid();
                let resp = w.response(
                    Finish::Stop,
                    &format!(
                        "Title: {}",
                        Text::plain(&turn.prompt.clean)
                            .clean
                            .chars()
                            .take(30)
                            .collect::<String>()
                    ),
                    json!([]),
                );
                w.line(
                    &turn_id,
                    &trace_id,
                    &rid,
                    1,
                    Some("session_title"),
                    &title_messages,
                    "full",
                    0,
                    resp,
                    false,
                    None,
                )?;
            }
            if let (Some(source), false) = (call.side_after, partial) {
                let side_messages = vec![
                    json!({"role": "system", "content": format!("You are ZCode's {source} helper. Work only on the task below.")}),
                    json!({"role": "user", "content": format!("Internal {source} task for turn {t}: summarise the files read so far.")}),
                ];
                let rid = w.rng.uuid();
                let resp = w.response(
                    Finish::Stop,
                    &format!("Internal {source} result: three files, no changes."),
                    json!([]),
                );
                w.line(
                    &turn_id,
                    &trace_id,
                    &rid,
                    1,
                    Some(source),
                    &side_messages,
                    "full",
                    0,
                    resp,
                    false,
                    None,
                )?;
            }
        }
    }
    w.out.flush()?;
    Ok(w.written)
}
