//! A subagent's turn, through the one rule of [`ov_engine::subagent`]: a SubagentStop
//! (Claude Code, Codex, Copilot CLI: the hook fires in the parent's session) and the Stop of
//! an `inline` subagent's own session (OpenCode, Kilo Code). The turn is journaled whole, as
//! [`Event::SubagentTurn`], where the rule sends it (a session of its own, or the parent's),
//! and that session's worker is started. Prints nothing.

use std::path::Path;

use ov_engine::event::{Event, HookKind, WorkerReason};
use ov_engine::subagent::{Route, Subagent};
use ov_engine::turn::Role;

use super::{load_config, start_worker, Invocation, Journaled};

/// Handles a SubagentStop: the session is the parent's, the payload names the subagent.
pub fn handle_stop(inv: &Invocation) {
    let Some(agent) = inv.input.agent_id.clone() else {
        let mut received = inv.received(HookKind::SubagentStop);
        let note = "no agent id: the subagent's turn is not captured";
        received.malformed = Some(match received.malformed.take() {
            Some(m) => format!("{m}; {note}"),
            None => note.to_owned(),
        });
        inv.open_journaling(Event::HookReceived(received));
        return;
    };
    let cfg = load_config(&inv.cwd);
    let sub = Subagent {
        parent: Some(inv.session_id.clone()),
        agent,
    };
    let route = ov_engine::subagent::route(cfg.capture.subagents, &sub);
    let turn = ov_engine::subagent::turn_id(&sub.agent);
    let task = || {
        inv.input
            .agent_transcript_path
            .as_deref()
            .and_then(|p| ov_engine::transcript::claude_code::subagent_task(Path::new(p)))
    };
    record(inv, &cfg, &sub, &route, turn, task);
}

/// The Stop of a subagent's own session whose turns go into its parent's (`inline`): its
/// turn (the prompt and the answer the payload carries) becomes one [`Event::SubagentTurn`]
/// there.
pub fn inline_session_stop(inv: &Invocation, sub: &Subagent, parent: &str) {
    let cfg = load_config(&inv.cwd);
    let turn = inv
        .input
        .turn_id
        .clone()
        .unwrap_or_else(|| ov_engine::subagent::turn_id(&sub.agent));
    let route = Route::Parent(parent.to_owned());
    record(inv, &cfg, sub, &route, turn, || inv.input.prompt.clone());
}

/// Journals the subagent's turn `turn` where `route` says (its prompt from `prompt`, read
/// only when it is kept; its answer from the payload), and starts that session's worker.
fn record(
    inv: &Invocation,
    cfg: &ov_engine::config::Config,
    sub: &Subagent,
    route: &Route,
    turn: String,
    prompt: impl FnOnce() -> Option<String>,
) {
    let target = match route {
        Route::PassThrough => {
            // `skip`: the receipt, without content, in the session that fired the hook.
            let mut received = inv.received(HookKind::SubagentStop);
            received.turn_id = Some(turn);
            inv.open_journaling(Event::HookReceived(received));
            return;
        }
        Route::Own(id) | Route::Parent(id) => inv.for_session(id),
    };
    let mut received = target.received(HookKind::SubagentStop);
    received.turn_id = Some(turn.clone());
    let capture = target.capture(cfg);
    if let Some(reason) = capture.refusal() {
        target.open_journaling_all(vec![
            Event::HookReceived(received),
            Event::CaptureRefused {
                turn_id: Some(turn),
                reason,
            },
        ]);
        return;
    }
    let policy = ov_engine::privacy::Policy::from_config(cfg);
    let mut counts = ov_engine::privacy::Redactions::default();
    let prompt = prompt().map(|t| policy.capture(&t, Role::User, &mut counts).into_owned());
    let answer = inv
        .input
        .response_text
        .as_deref()
        .map(|t| policy.capture(t, Role::Assistant, &mut counts).into_owned());
    let mut events = vec![
        Event::HookReceived(received),
        Event::SubagentTurn {
            turn_id: turn.clone(),
            agent: sub.agent.clone(),
            prompt,
            answer,
        },
    ];
    if !counts.is_empty() {
        events.push(Event::Redacted {
            turn_id: Some(turn),
            origin: "hook".into(),
            counts,
        });
    }
    let journaled = target.open_journaling_all(events);
    if !matches!(journaled, Journaled::Lost) {
        start_worker(&target, journaled, WorkerReason::Stop);
    }
}
