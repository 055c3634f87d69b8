//! The sessions committed under `testdata/sessions/`, the benchmark input, and random
//! sessions for property tests.

use crate::spec::{CallSpec, Finish, Rng, SessionSpec, Text, ToolUse, TurnSpec, Window};

fn session(name: &str, seed: u64, turns: Vec<TurnSpec>) -> SessionSpec {
    SessionSpec {
        name: name.to_owned(),
        seed,
        turns,
        tool_output_bytes: 200,
        partial_last_line: false,
        heavy: false,
        query_source: Some("main_turn"),
        subagent: false,
    }
}

fn answer(i: usize) -> Text {
    Text::plain(&format!(
        "Done: step {i} is finished. The change compiles and the tests pass."
    ))
}

/// The committed sessions, each covering some scenarios.
pub fn committed() -> Vec<SessionSpec> {
    let mut out = Vec::new();

    // Plain one-call turns.
    out.push(session(
        "basic",
        1,
        vec![
            TurnSpec::simple(Text::plain("What does this repository do?"), answer(0)),
            TurnSpec::simple(Text::plain("List the crates."), answer(1)),
            TurnSpec::simple(Text::plain("Thanks, summarise in one line."), answer(2)),
        ],
    ));

    // Multi-call tool-using turns with narration; each line repeats the conversation.
    let mut tools = session(
        "tools",
        2,
        vec![
            TurnSpec::with_tools(
                Text::plain("Use the Bash tool to compute 2+2 then give me the answer."),
                1,
                false,
                Text::plain("The answer is 4."),
            ),
            TurnSpec::with_tools(
                Text::plain("Find where the journal is opened and explain it."),
                2,
                true,
                answer(1),
            ),
            TurnSpec::simple(Text::plain("ok, and the lock?"), answer(2)),
            TurnSpec::with_tools(Text::plain("Run the tests."), 3, true, answer(3)),
        ],
    );
    tools.tool_output_bytes = 4000;
    out.push(tools);

    // Retries (attempt 2 of a failed call) and session_title calls.
    let mut t0 = TurnSpec::with_tools(
        Text::plain("Rename the crate to ov-core."),
        2,
        true,
        answer(0),
    );
    if let Some(c) = t0.calls.get_mut(0) {
        c.title_after = true;
        c.retry = true;
    }
    if let Some(c) = t0.calls.last_mut() {
        c.retry = true;
    }
    let mut t1 = TurnSpec::simple(Text::plain("Now update the README."), answer(1));
    if let Some(c) = t1.calls.get_mut(0) {
        c.retry = true;
        c.title_after = true;
    }
    out.push(session(
        "retries_titles",
        3,
        vec![
            t0,
            t1,
            TurnSpec::with_tools(Text::plain("Commit it."), 1, false, answer(2)),
        ],
    ));

    // Tail windows: messageOffset > 0; later calls of a turn lose the prompt; one turn
    // shows its prompt on no line at all (only its answer is recoverable from the file).
    let mut tail_turns = Vec::new();
    for i in 0..4 {
        tail_turns.push(TurnSpec::with_tools(
            Text::plain(&format!("Long task number {i}: refactor module {i}.")),
            2,
            true,
            answer(i),
        ));
    }
    for (i, t) in tail_turns.iter_mut().enumerate() {
        t.window = if i == 2 {
            Window::TailWithoutPrompt
        } else {
            Window::Tail(3)
        };
    }
    out.push(session("tail", 4, tail_turns));

    // Interrupted calls: a turn killed mid-answer (its last text is kept, marked
    // interrupted), a turn killed before any text (only the prompt), and a last turn
    // still running (nothing yet).
    out.push(session(
        "interrupted",
        5,
        vec![
            TurnSpec::simple(Text::plain("Explain the projector."), answer(0)),
            TurnSpec {
                calls: vec![
                    CallSpec::tool(
                        Text::plain("Reading the projector now."),
                        ToolUse {
                            name: "Read".into(),
                            input: serde_json::json!({"path": "engine/src/projector.rs"}),
                            output: "//! projector".into(),
                            is_error: false,
                        },
                    ),
                    CallSpec::interrupted(Text::plain("The projector folds events into")),
                ],
                ..TurnSpec::simple(Text::plain("Go deeper into fold()."), answer(1))
            },
            TurnSpec {
                calls: vec![CallSpec::interrupted(Text::plain(""))],
                ..TurnSpec::simple(
                    Text::plain("Stop, do something else: list files."),
                    answer(2),
                )
            },
            TurnSpec::simple(Text::plain("What is the outbox?"), answer(3)),
            TurnSpec {
                calls: vec![CallSpec::tool(
                    Text::plain("Let me look."),
                    ToolUse {
                        name: "Grep".into(),
                        input: serde_json::json!({"pattern": "outbox"}),
                        output: "engine/src/projector.rs:12".into(),
                        is_error: false,
                    },
                )],
                ..TurnSpec::simple(Text::plain("And the in-doubt set?"), answer(4))
            },
        ],
    ));

    // Repeated prompts, injected reminders after the prompt, recall blocks, array
    // content, <private> spans (one answer entirely private: dropped).
    let mut r = vec![
        TurnSpec::with_tools(
            Text::with_recall("Start the migration."),
            1,
            true,
            answer(0),
        ),
        TurnSpec::simple(Text::plain("continue"), answer(1)),
        TurnSpec::simple(Text::plain("continue"), answer(2)),
        TurnSpec::simple(
            Text::with_private("Use this token:", "sk-test-123"),
            Text::with_private("Stored the token.", "sk-test-123"),
        ),
        TurnSpec::simple(
            Text::plain("Print it back."),
            Text {
                raw: "<private>sk-test-123</private>".into(),
                clean: String::new(),
            },
        ),
        TurnSpec::simple(Text::plain("yes"), answer(5)),
    ];
    for (i, t) in r.iter_mut().enumerate() {
        t.reminder_after = i % 2 == 0;
        t.blocks = i == 5;
    }
    out.push(session("repeated_private", 6, r));

    // What is not the user's words: a background task's notification starts a turn
    // with no user message (its answer is kept), desktop wrappers around the typed text
    // (URLs never leave), an image attachment (its local path never leaves).
    let mut words = vec![
        TurnSpec::with_tools(
            Text::plain("Run the whole test suite in the background and tell me when done."),
            1,
            true,
            Text::plain("Started the test suite as a background task."),
        ),
        TurnSpec::simple(
            Text::task_notification("bg_7f3a", "412 passed, 0 failed"),
            Text::plain("The background test run finished: 412 passed, 0 failed."),
        ),
        TurnSpec::with_tools(
            Text::desktop_browser(
                "https://intranet.example.com/admin?token=abc123",
                "make the header blue",
            ),
            1,
            false,
            Text::plain("The header is blue now."),
        ),
        TurnSpec::simple(
            Text::execution_target("10.0.0.5", "restart the service"),
            Text::plain("Restarted the service on the remote host."),
        ),
        TurnSpec::simple(
            Text::plain("What is wrong in this screenshot?"),
            Text::plain("The button overlaps the title."),
        ),
        TurnSpec::simple(
            Text::task_notification("bg_9c21", "lint clean"),
            Text::plain("The lint task finished cleanly."),
        ),
    ];
    if let Some(t) = words.get_mut(3) {
        t.blocks = true;
    }
    if let Some(t) = words.get_mut(4) {
        t.image = Some("/Users/ann/Desktop/Screen Shot 2026-07-03 at 10.12.01.png".to_owned());
    }
    out.push(session("user_words", 9, words));

    // Steering: the user types into running turns; the words follow the prompt.
    let mut steer = vec![
        TurnSpec::with_tools(
            Text::plain("Refactor the parser into its own module."),
            2,
            true,
            Text::plain("The parser now lives in src/parser.rs; the old API still works."),
        ),
        TurnSpec::with_tools(
            Text::plain("Add tests for the parser."),
            3,
            false,
            Text::plain("Added 12 tests; all pass."),
        ),
        TurnSpec::simple(Text::plain("Thanks."), answer(2)),
    ];
    if let Some(c) = steer.first_mut().and_then(|t| t.calls.get_mut(1)) {
        c.steer_before = Some(Text::plain("also keep the old API working"));
    }
    if let Some(t) = steer.get_mut(1) {
        if let Some(c) = t.calls.get_mut(1) {
            c.steer_before = Some(Text::with_recall("cover the error paths too"));
        }
        if let Some(c) = t.calls.get_mut(3) {
            c.steer_before = Some(Text::plain("and the empty input"));
        }
    }
    out.push(session("steering", 10, steer));

    // Delta windows: after the first line, each line carries only what is new since the
    // previous one, placed by messageOffset; a turn's first line is a delta.
    let mut delta: Vec<TurnSpec> = (0..4)
        .map(|i| {
            TurnSpec::with_tools(
                Text::plain(&format!("Delta task {i}: update module {i}.")),
                i % 3,
                i % 2 == 0,
                answer(i),
            )
        })
        .collect();
    for (i, t) in delta.iter_mut().enumerate() {
        t.window = if i == 0 { Window::Full } else { Window::Delta };
    }
    if let Some(c) = delta.get_mut(2).and_then(|t| t.calls.get_mut(1)) {
        c.steer_before = Some(Text::plain("use the new error type"));
    }
    out.push(session("delta", 11, delta));

    // Query sources: main lines without querySource (absent = main), interleaved
    // compact, subagent and workflow calls and a session title: none of them is the
    // conversation.
    let mut qs = vec![
        TurnSpec::with_tools(Text::plain("Review the diff."), 2, true, answer(0)),
        TurnSpec::simple(Text::plain("Summarise the review."), answer(1)),
        TurnSpec::with_tools(Text::plain("Apply the fixes."), 1, false, answer(2)),
    ];
    if let Some(t) = qs.get_mut(0) {
        if let Some(c) = t.calls.get_mut(0) {
            c.side_after = Some("subagent");
            c.title_after = true;
        }
        if let Some(c) = t.calls.get_mut(1) {
            c.side_after = Some("workflow_child");
        }
    }
    if let Some(c) = qs.get_mut(1).and_then(|t| t.calls.get_mut(0)) {
        c.side_after = Some("compact");
    }
    let mut qs = session("query_sources", 12, qs);
    qs.query_source = None;
    out.push(qs);

    // Turns stopped by the user (an error line, no finishReason): the prompt and the last
    // narration marked [interrupted]; a call that failed before any text: the prompt alone.
    let stopped_call = |text: &str| {
        let mut c = CallSpec::interrupted(Text::plain(text));
        c.error = Some("v4 session stopped".to_owned());
        c
    };
    out.push(session(
        "stopped",
        13,
        vec![
            TurnSpec {
                calls: vec![
                    CallSpec::tool(
                        Text::plain("Let me read the config loader."),
                        ToolUse {
                            name: "Read".into(),
                            input: serde_json::json!({"path": "engine/src/config/mod.rs"}),
                            output: "//! config".into(),
                            is_error: false,
                        },
                    ),
                    stopped_call("The loader reads five sources in"),
                ],
                ..TurnSpec::simple(Text::plain("How is the config loaded?"), answer(0))
            },
            TurnSpec {
                calls: vec![stopped_call("")],
                ..TurnSpec::simple(Text::plain("Never mind, list the crates."), answer(1))
            },
            TurnSpec::simple(Text::plain("List the crates, please."), answer(2)),
        ],
    ));

    // A subagent's own session: every line is the subagent's; nothing is captured.
    let mut sub = session(
        "subagent",
        14,
        vec![TurnSpec::with_tools(
            Text::plain("Search the repository for uses of the journal lock."),
            2,
            true,
            Text::plain("Found 4 uses: store.rs, worker.rs, drain.rs, compact.rs."),
        )],
    );
    sub.subagent = true;
    out.push(sub);

    // A partial last line: ZCode is still writing the final answer of the last turn.
    let mut p = session(
        "partial_last_line",
        7,
        vec![
            TurnSpec::with_tools(Text::plain("Add a test for recovery."), 1, true, answer(0)),
            TurnSpec::with_tools(Text::plain("Now make it pass."), 2, true, answer(1)),
        ],
    );
    p.partial_last_line = true;
    out.push(p);

    // Everything at once, with realistic line sizes.
    let mut long = random(8, 30);
    long.name = "long".to_owned();
    long.heavy = true;
    long.tool_output_bytes = 600;
    out.push(long);
    out
}

/// A random session of `turns` turns mixing every scenario (for property tests).
pub fn random(seed: u64, turns: usize) -> SessionSpec {
    let mut rng = Rng::new(seed ^ 0x5EED);
    let mut out = Vec::new();
    for i in 0..turns {
        let prompt = match rng.below(8) {
            0 => Text::plain("continue"),
            1 => Text::with_recall(&format!("Recall-wrapped prompt {i}.")),
            2 => Text::with_private(&format!("Prompt {i} with a secret:"), "hunter2"),
            _ => Text::plain(&format!("Prompt number {i}: do task {}.", rng.below(1000))),
        };
        let tools = if rng.chance(60) {
            1 + rng.below(3) as usize
        } else {
            0
        };
        let mut t = TurnSpec::with_tools(prompt, tools, rng.chance(50), answer(i));
        t.reminder_after = rng.chance(30);
        t.blocks = rng.chance(15);
        t.window = match rng.below(10) {
            0 | 1 => Window::Tail(2 + rng.below(4) as usize),
            2 if i > 0 => Window::TailWithoutPrompt,
            _ => Window::Full,
        };
        for c in &mut t.calls {
            c.retry = rng.chance(10);
            c.title_after = i < 2 && rng.chance(50);
        }
        if rng.chance(10) {
            if let Some(c) = t.calls.last_mut() {
                c.finish = Finish::Interrupted;
                c.text = if rng.chance(50) {
                    Text::plain("Partial answer so far")
                } else {
                    Text::plain("")
                };
            }
        }
        out.push(t);
    }
    let mut s = session(&format!("random_{seed}"), seed, out);
    s.partial_last_line = rng.chance(30);
    s
}

/// The benchmark input: 240 turns, 3 calls per tool-using turn (two of every three
/// turns), realistic line sizes; `tool_output_bytes` scales the total size (see
/// `gen-sessions --big`).
pub fn big(tool_output_bytes: usize) -> SessionSpec {
    let mut turns = Vec::new();
    for i in 0..240 {
        let prompt = Text::plain(&format!("Task {i}: change the module and run the checks."));
        let mut t = if i % 3 == 2 {
            TurnSpec::simple(prompt, answer(i))
        } else {
            TurnSpec::with_tools(prompt, 2, i % 2 == 0, answer(i))
        };
        t.reminder_after = i % 5 == 0;
        if let Some(c) = t.calls.first_mut() {
            c.retry = i % 40 == 7;
            c.title_after = i == 0;
        }
        turns.push(t);
    }
    SessionSpec {
        name: "big".to_owned(),
        seed: 240,
        turns,
        tool_output_bytes,
        partial_last_line: false,
        heavy: true,
        query_source: Some("main_turn"),
        subagent: false,
    }
}
