//! The description of a generated session, and the truth it implies.

use serde::Serialize;

/// A tiny deterministic PRNG (SplitMix64): the same seed gives the same session.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A random (version 4 shaped) UUID.
    pub fn uuid(&mut self) -> String {
        let a = self.next_u64();
        let b = self.next_u64();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            ((b >> 48) & 0x3fff) | 0x8000,
            b & 0xffff_ffff_ffff
        )
    }
}

/// A text as written into the rollout and as a correct capture sends it
/// (injected blocks and `<private>` spans removed, trimmed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    /// As written by ZCode.
    pub raw: String,
    /// As captured; empty means nothing is sent.
    pub clean: String,
}

impl Text {
    /// A text with no tags.
    pub fn plain(s: &str) -> Text {
        Text {
            raw: s.to_owned(),
            clean: s.trim().to_owned(),
        }
    }

    /// `visible` followed by a `<private>` span.
    pub fn with_private(visible: &str, secret: &str) -> Text {
        Text {
            raw: format!("{visible} <private>{secret}</private>"),
            clean: visible.trim().to_owned(),
        }
    }

    /// A prompt that starts with an OpenViking recall block (what our UserPromptSubmit
    /// injected and ZCode embedded in the user message).
    pub fn with_recall(prompt: &str) -> Text {
        Text {
            raw: format!(
                "<openviking-context source=\"recall\">\n<relevant-memories>\n- earlier: the user prefers tabs\n</relevant-memories>\n</openviking-context>\n{prompt}"
            ),
            clean: prompt.trim().to_owned(),
        }
    }
}

impl Text {
    /// A background task's result fed back as a user message: never the user's words.
    pub fn task_notification(task_id: &str, result: &str) -> Text {
        Text {
            raw: format!(
                "<task-notification>\n<task-id>{task_id}</task-id>\n<status>completed</status>\n<summary>Background task finished</summary>\n<result>{result}</result>\n</task-notification>\nRead the output file to retrieve the result: /tmp/zcode/tasks/{task_id}.output"
            ),
            clean: String::new(),
        }
    }

    /// What the desktop app sends when the in-app browser is open: the page (URL
    /// included) in a wrapper, then the typed text under a heading. Only `typed` is
    /// the user's words.
    pub fn desktop_browser(url: &str, typed: &str) -> Text {
        Text {
            raw: format!(
                "<in-app-browser-context source=\"ambient-ui-state\">\n- Current URL: {url}\n- Page title: Dashboard\n- Selected element: <button class=\"save\">Save</button>\n</in-app-browser-context>\n\n## My request for ZCode:\n{typed}"
            ),
            clean: typed.trim().to_owned(),
        }
    }

    /// What the desktop app sends when the task runs on another target (a remote host).
    pub fn execution_target(host: &str, typed: &str) -> Text {
        Text {
            raw: format!(
                "<execution-target-context kind=\"ssh\" host=\"{host}\">\n- Working directory: /srv/app\n- Connection: ssh://deploy@{host}:22\n</execution-target-context>\n\n## My request for ZCode:\n{typed}"
            ),
            clean: typed.trim().to_owned(),
        }
    }
}

/// How a model call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// `finishReason: "tool-calls"`: the turn goes on.
    ToolCalls,
    /// `finishReason: "stop"`: the turn's final answer.
    Stop,
    /// No `finishReason`: killed or timed out.
    Interrupted,
}

/// A tool call made by a model call, and its result.
#[derive(Debug, Clone)]
pub struct ToolUse {
    /// Tool name (`Bash`, `Read`, …).
    pub name: String,
    /// Tool input (JSON).
    pub input: serde_json::Value,
    /// Tool result text.
    pub output: String,
    /// The tool failed.
    pub is_error: bool,
}

/// One model call of a turn (one rollout line, plus a failed first attempt if `retry`).
#[derive(Debug, Clone)]
pub struct CallSpec {
    /// How it ended.
    pub finish: Finish,
    /// `response.text`.
    pub text: Text,
    /// The tool it called (with [`Finish::ToolCalls`]).
    pub tool: Option<ToolUse>,
    /// A failed attempt 1 (no `finishReason`) precedes this call, same `requestId`.
    pub retry: bool,
    /// A `session_title` call follows this call (not conversation).
    pub title_after: bool,
    /// The user typed this into the running turn before this call (steering): a further
    /// user message in this call's request and every later one.
    pub steer_before: Option<Text>,
    /// A call of another `querySource` (`compact`, `subagent`, …) follows this call: the
    /// agent talking to itself, not conversation.
    pub side_after: Option<&'static str>,
    /// With [`Finish::Interrupted`]: the line's top-level `error.message` (ZCode writes
    /// `v4 session stopped` when the user stops the turn).
    pub error: Option<String>,
}

/// Which part of the conversation each line of a turn carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// `messagesKind: "full"`.
    Full,
    /// `messagesKind: "tail"`: the last `n` messages.
    Tail(usize),
    /// A tail window that starts after the turn's prompt, on every line of the turn.
    TailWithoutPrompt,
    /// `messagesKind: "delta"`: only the messages added since the previous main line,
    /// `messageOffset` = how many that line sent.
    Delta,
}

/// One turn.
#[derive(Debug, Clone)]
pub struct TurnSpec {
    /// The user's prompt.
    pub prompt: Text,
    /// A `<system-reminder>` user message follows the prompt in `request.messages`.
    pub reminder_after: bool,
    /// The prompt is written as an array of `{type:"text"}` blocks.
    pub blocks: bool,
    /// The model calls, in order.
    pub calls: Vec<CallSpec>,
    /// Window of the lines.
    pub window: Window,
    /// An image attached to the prompt: its local path. The user message is then an
    /// `image` block, a `[Image: source: <path>]` text block and the prompt's text
    /// block; a capture sends `[image]` in place of the path.
    pub image: Option<String>,
}

/// One session.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// File stem under `testdata/sessions/`.
    pub name: String,
    /// Seed of ids, timestamps and filler.
    pub seed: u64,
    /// The turns.
    pub turns: Vec<TurnSpec>,
    /// Bytes of filler in every tool result (grows the file O(n²)).
    pub tool_output_bytes: usize,
    /// The last line is written without its newline and cut in half (ZCode still
    /// writing it).
    pub partial_last_line: bool,
    /// Realistic system prompt and tool schemas (about 40 KB per line) instead of
    /// small ones.
    pub heavy: bool,
    /// `querySource` of the main lines; `None` writes none (older builds: absent = main).
    pub query_source: Option<&'static str>,
    /// A subagent's own session (`sess_subagent_agent_<uuid>`, every line
    /// `querySource: "subagent"`): nothing of it is the user's conversation.
    pub subagent: bool,
}

/// One message a correct first capture sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExpectedMessage {
    /// The turn id.
    pub turn_id: Option<String>,
    /// `"user"` or `"assistant"`.
    pub role: &'static str,
    /// The content.
    pub content: String,
}

impl TurnSpec {
    /// A one-call turn answered directly.
    pub fn simple(prompt: Text, answer: Text) -> TurnSpec {
        TurnSpec {
            prompt,
            reminder_after: false,
            blocks: false,
            calls: vec![CallSpec::stop(answer)],
            window: Window::Full,
            image: None,
        }
    }

    /// A tool-using turn: `tools` tool calls (each with a narration text when
    /// `narrate`), then the final answer.
    pub fn with_tools(prompt: Text, tools: usize, narrate: bool, answer: Text) -> TurnSpec {
        let mut calls: Vec<CallSpec> = (0..tools)
            .map(|i| {
                let text = if narrate {
                    Text::plain(&format!("Let me check step {} first.", i + 1))
                } else {
                    Text::plain("")
                };
                CallSpec::tool(
                    text,
                    ToolUse {
                        name: "Bash".to_owned(),
                        input: serde_json::json!({"command": format!("ls -la src/{i}")}),
                        output: format!("total {i}\nmain.rs\nlib.rs"),
                        is_error: i == 1,
                    },
                )
            })
            .collect();
        calls.push(CallSpec::stop(answer));
        TurnSpec {
            prompt,
            reminder_after: false,
            blocks: false,
            calls,
            window: Window::Full,
            image: None,
        }
    }
}

impl TurnSpec {
    /// The turn's user message as a correct capture sends it: the image placeholder and
    /// the prompt's clean text; `None` when the turn has no user words.
    pub fn user_words(&self) -> Option<String> {
        self.user_words_of(&self.calls)
    }

    /// [`TurnSpec::user_words`] when only `calls` were written: the prompt, then what the
    /// user typed into the turn before each of those calls, separated by blank lines.
    pub fn user_words_of(&self, calls: &[CallSpec]) -> Option<String> {
        let prompt = match &self.image {
            Some(_) if self.prompt.clean.is_empty() => "[image]".to_owned(),
            Some(_) => format!("[image]\n{}", self.prompt.clean),
            None => self.prompt.clean.clone(),
        };
        let parts: Vec<&str> = std::iter::once(prompt.as_str())
            .chain(
                calls
                    .iter()
                    .filter_map(|c| c.steer_before.as_ref())
                    .map(|t| t.clean.as_str()),
            )
            .filter(|p| !p.is_empty())
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
}

impl CallSpec {
    /// A call that ends the turn with `text`.
    pub fn stop(text: Text) -> CallSpec {
        CallSpec {
            finish: Finish::Stop,
            text,
            tool: None,
            retry: false,
            title_after: false,
            steer_before: None,
            side_after: None,
            error: None,
        }
    }

    /// A call that uses a tool.
    pub fn tool(text: Text, tool: ToolUse) -> CallSpec {
        CallSpec {
            finish: Finish::ToolCalls,
            text,
            tool: Some(tool),
            retry: false,
            title_after: false,
            steer_before: None,
            side_after: None,
            error: None,
        }
    }

    /// A call that was killed with `text` streamed so far.
    pub fn interrupted(text: Text) -> CallSpec {
        CallSpec {
            finish: Finish::Interrupted,
            text,
            tool: None,
            retry: false,
            title_after: false,
            steer_before: None,
            side_after: None,
            error: None,
        }
    }
}

impl SessionSpec {
    /// The lines of turn `t` that a reader consumes: all of them, except the last call
    /// of the last turn when the last line is partial.
    fn consumed_calls(&self, t: usize) -> &[CallSpec] {
        let Some(turn) = self.turns.get(t) else {
            return &[];
        };
        let n = turn.calls.len();
        if self.partial_last_line && t + 1 == self.turns.len() {
            turn.calls.get(..n.saturating_sub(1)).unwrap_or_default()
        } else {
            &turn.calls
        }
    }

    /// Turn `t` has a consumed main-conversation line (a call, or the failed first
    /// attempt of a retried call whose second attempt is the partial line).
    fn has_main_line(&self, t: usize) -> bool {
        if !self.consumed_calls(t).is_empty() {
            return true;
        }
        let is_last = t + 1 == self.turns.len();
        self.partial_last_line
            && is_last
            && self
                .turns
                .get(t)
                .and_then(|turn| turn.calls.last())
                .is_some_and(|c| c.retry)
    }

    /// The messages a correct first capture of the file sends (at the Stop of the last
    /// turn), computed from the spec, not from the file. `turn_ids` are the ids the
    /// writer used.
    pub fn expected(&self, turn_ids: &[String]) -> Vec<ExpectedMessage> {
        let mut out = Vec::new();
        if self.subagent {
            return out;
        }
        // The last turn with a consumed main line: the only one not superseded.
        let last = (0..self.turns.len())
            .rev()
            .find(|&t| self.has_main_line(t))
            .unwrap_or(0);
        for (t, turn) in self.turns.iter().enumerate() {
            let calls = self.consumed_calls(t);
            if calls.is_empty() {
                continue;
            }
            let superseded = t < last;
            let ended = calls.last().is_some_and(|c| c.finish == Finish::Stop);
            if !superseded && !ended {
                continue; // still running: nothing is captured yet
            }
            let id = turn_ids.get(t).cloned();
            if turn.window != Window::TailWithoutPrompt {
                if let Some(content) = turn.user_words_of(calls) {
                    out.push(ExpectedMessage {
                        turn_id: id.clone(),
                        role: "user",
                        content,
                    });
                }
            }
            let final_text = calls
                .iter()
                .rev()
                .find(|c| c.finish == Finish::Stop && !c.text.raw.trim().is_empty());
            // A turn without a final answer sends its last text, marked as not an answer.
            let answer = match final_text {
                Some(c) => Some((&c.text, "")),
                None if superseded => calls
                    .iter()
                    .rev()
                    .find(|c| !c.text.raw.trim().is_empty())
                    .map(|c| (&c.text, "[interrupted] ")),
                None => None,
            };
            if let Some((a, mark)) = answer.filter(|(a, _)| !a.clean.is_empty()) {
                out.push(ExpectedMessage {
                    turn_id: id,
                    role: "assistant",
                    content: format!("{mark}{}", a.clean),
                });
            }
        }
        out
    }
}
