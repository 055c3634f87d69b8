//! Shared by the projector and store law tests: a generator of random but
//! well-formed session journals.
//!
//! Proptest draws abstract [`Op`]s; [`events`] interprets them against the
//! state folded so far, so the concrete events refer to real things (a send's
//! keys are in the outbox, an outcome names an open send, a reconciliation
//! covers the in-doubt sends) the way the worker would write them. A few
//! "stray" ops write events that make no sense (outcomes of unknown sends,
//! sends of settled keys, re-plans) because an infallible fold must survive them.

#![allow(dead_code)]

use std::collections::BTreeSet;

use ov_engine::delivery::DeliverySettings;
use ov_engine::event::{Envelope, Event, HookKind, HookReceived, PlannedMessage, WorkerReason};
use ov_engine::projector::{MessageStatus, State};
use ov_engine::turn::{DedupKey, FileIdentity, Role, TranscriptChunk, TurnFragment};
use proptest::prelude::*;

/// Turn ids of generated sessions.
pub const TURNS: [&str; 6] = ["t0", "t1", "t2", "t3", "t4", "t5"];
/// Texts of prompts and answers: plain, blank, all-private, injected-only.
pub const TEXTS: [&str; 7] = [
    "hello there",
    "   ",
    "<private>secret</private>",
    "fix the bug in <private>k</private> main.rs",
    "<system-reminder>injected</system-reminder>",
    "answer 42",
    "continue",
];

/// Proptest cases: `OV_PROPTEST_CASES` overrides the default of each test.
pub fn cases(default: u32) -> u32 {
    std::env::var("OV_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How the server (or the network) answered a send or a commit.
#[derive(Debug, Clone, Copy)]
pub enum Outcome {
    /// 2xx.
    Ack,
    /// 408 / 429 / 409: refused before being applied, worth retrying.
    Retryable { status: u16, sent: bool },
    /// 404 / 405: the batch endpoint is not there.
    Unsupported { status: u16 },
    /// 400: refused for good.
    Bad,
    /// 5xx.
    Server { status: u16, sent: bool },
    /// Status 0: no reply read.
    Network { sent: bool },
}

impl Outcome {
    /// The `SendFailed` fields, or None for an acknowledgement.
    pub fn failure(self) -> Option<(u16, bool, bool)> {
        match self {
            Outcome::Ack => None,
            Outcome::Retryable { status, sent } => Some((status, true, sent)),
            Outcome::Unsupported { status } => Some((status, false, true)),
            Outcome::Bad => Some((400, false, true)),
            Outcome::Server { status, sent } => Some((status, true, sent)),
            Outcome::Network { sent } => Some((0, true, sent)),
        }
    }
}

/// One abstract step of a session.
#[derive(Debug, Clone)]
pub enum Op {
    Prompt {
        turn: Option<u8>,
        text: u8,
    },
    Stop {
        turn: Option<u8>,
        text: Option<u8>,
    },
    PreTool {
        turn: u8,
    },
    Tools {
        turn: u8,
        call: u8,
        output: Option<u8>,
    },
    /// A subagent's whole turn (SubagentStop), possibly under a turn id another op uses.
    Subagent {
        turn: u8,
        prompt: Option<u8>,
        answer: Option<u8>,
    },
    SessionStart,
    MalformedHook,
    Rollout {
        frags: Vec<(u8, Option<u8>, Option<u8>, bool)>,
        file: u8,
        rescan: bool,
    },
    RolloutMissing,
    Plan {
        max_len: Option<u8>,
    },
    StrayPlan {
        turn: u8,
        text: u8,
    },
    Send {
        n: u8,
        single: bool,
    },
    StraySend {
        pick: u8,
    },
    Outcome {
        pick: u8,
        outcome: Outcome,
    },
    StrayOutcome {
        send_id: u8,
        outcome: Outcome,
    },
    Reconcile {
        mask: u64,
    },
    CommitStart {
        before: Option<u8>,
    },
    CommitOutcome {
        outcome: Outcome,
    },
    CommitReconcile {
        applied: bool,
    },
    Recall {
        hash: u8,
        block: Option<u8>,
        cached: bool,
        face: bool,
    },
    Profile,
    Unreachable {
        retry: u16,
    },
    Reachable,
    Drain,
    Worker {
        drain: bool,
    },
    Problem,
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        4 => Just(Outcome::Ack),
        1 => (prop::sample::select(vec![408u16, 409, 429]), any::<bool>())
            .prop_map(|(status, sent)| Outcome::Retryable { status, sent }),
        1 => prop::sample::select(vec![404u16, 405]).prop_map(|status| Outcome::Unsupported { status }),
        1 => Just(Outcome::Bad),
        1 => (prop::sample::select(vec![500u16, 502, 503]), any::<bool>())
            .prop_map(|(status, sent)| Outcome::Server { status, sent }),
        1 => any::<bool>().prop_map(|sent| Outcome::Network { sent }),
    ]
}

fn turn() -> impl Strategy<Value = u8> {
    0..TURNS.len() as u8
}

fn text() -> impl Strategy<Value = u8> {
    0..TEXTS.len() as u8
}

/// One op.
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (prop::option::weighted(0.85, turn()), text())
            .prop_map(|(turn, text)| Op::Prompt { turn, text }),
        5 => (prop::option::weighted(0.85, turn()), prop::option::weighted(0.8, text()))
            .prop_map(|(turn, text)| Op::Stop { turn, text }),
        1 => turn().prop_map(|turn| Op::PreTool { turn }),
        2 => (turn(), 0..3u8, prop::option::of(text()))
            .prop_map(|(turn, call, output)| Op::Tools { turn, call, output }),
        1 => (turn(), prop::option::of(text()), prop::option::of(text()))
            .prop_map(|(turn, prompt, answer)| Op::Subagent { turn, prompt, answer }),
        1 => Just(Op::SessionStart),
        1 => Just(Op::MalformedHook),
        3 => (
            prop::collection::vec(
                (turn(), prop::option::of(text()), prop::option::of(text()), any::<bool>()),
                0..4
            ),
            0..2u8,
            prop::bool::weighted(0.2)
        )
            .prop_map(|(frags, file, rescan)| Op::Rollout { frags, file, rescan }),
        1 => Just(Op::RolloutMissing),
        5 => prop::option::weighted(0.2, 1..12u8).prop_map(|max_len| Op::Plan { max_len }),
        1 => (turn(), text()).prop_map(|(turn, text)| Op::StrayPlan { turn, text }),
        6 => (1..5u8, prop::bool::weighted(0.3)).prop_map(|(n, single)| Op::Send { n, single }),
        1 => any::<u8>().prop_map(|pick| Op::StraySend { pick }),
        7 => (any::<u8>(), outcome()).prop_map(|(pick, outcome)| Op::Outcome { pick, outcome }),
        1 => (0..40u8, outcome()).prop_map(|(send_id, outcome)| Op::StrayOutcome { send_id, outcome }),
        2 => any::<u64>().prop_map(|mask| Op::Reconcile { mask }),
        2 => prop::option::of(0..5u8).prop_map(|before| Op::CommitStart { before }),
        2 => outcome().prop_map(|outcome| Op::CommitOutcome { outcome }),
        1 => any::<bool>().prop_map(|applied| Op::CommitReconcile { applied }),
        1 => (0..4u8, prop::option::of(text()), any::<bool>(), prop::bool::weighted(0.1))
            .prop_map(|(hash, block, cached, face)| Op::Recall { hash, block, cached, face }),
        1 => Just(Op::Profile),
        1 => (0..5000u16).prop_map(|retry| Op::Unreachable { retry }),
        1 => Just(Op::Reachable),
        1 => Just(Op::Drain),
        1 => any::<bool>().prop_map(|drain| Op::Worker { drain }),
        1 => Just(Op::Problem),
    ]
}

/// A session: ops with the milliseconds elapsed before each.
pub fn session(max_len: usize) -> impl Strategy<Value = Vec<(Op, u64)>> {
    prop::collection::vec(
        (op(), prop_oneof![3 => 0..20u64, 2 => 0..4000u64]),
        0..max_len,
    )
}

fn text_of(i: u8) -> String {
    TEXTS[usize::from(i) % TEXTS.len()].to_owned()
}

fn turn_of(i: u8) -> String {
    TURNS[usize::from(i) % TURNS.len()].to_owned()
}

fn hook(kind: HookKind, turn: Option<u8>) -> HookReceived {
    HookReceived {
        kind: Some(kind),
        harness: "zcode".into(),
        session_id: Some("sess_law".into()),
        turn_id: turn.map(turn_of),
        cwd: Some("/work/p".into()),
        raw_len: 64,
        ..HookReceived::default()
    }
}

/// Interpreter state beyond the fold: per-file rollout offsets.
struct Interp {
    state: State,
    at: u64,
    file_end: [u64; 2],
    last_file: Option<u8>,
    out: Vec<Envelope>,
}

impl Interp {
    fn push(&mut self, event: Event) {
        let env = Envelope {
            at_ms: self.at,
            pid: 1000 + (self.out.len() as u32 % 3),
            event,
        };
        self.state.apply(&env);
        self.out.push(env);
    }

    fn settle(&mut self, send_id: u64, outcome: Outcome) {
        match outcome.failure() {
            None => self.push(Event::SendAcked { send_id }),
            Some((status, retryable, request_sent)) => self.push(Event::SendFailed {
                send_id,
                status,
                retryable,
                error: format!("status {status}"),
                request_sent,
            }),
        }
    }
}

/// The concrete events of a generated session.
pub fn events(ops: &[(Op, u64)]) -> Vec<Envelope> {
    let mut it = Interp {
        state: State::default(),
        at: 1_800_000_000_000,
        file_end: [0, 0],
        last_file: None,
        out: Vec::with_capacity(ops.len() + 4),
    };
    for (op, delta) in ops {
        it.at += delta;
        match op {
            Op::Prompt { turn, text } => {
                let mut h = hook(HookKind::PromptSubmit, *turn);
                h.prompt = Some(text_of(*text));
                it.push(Event::HookReceived(h));
            }
            Op::Stop { turn, text } => {
                let mut h = hook(HookKind::Stop, *turn);
                h.response_text = text.map(text_of);
                h.tool_call_count = Some(1);
                it.push(Event::HookReceived(h));
            }
            Op::Subagent {
                turn,
                prompt,
                answer,
            } => {
                it.push(Event::HookReceived(hook(
                    HookKind::SubagentStop,
                    Some(*turn),
                )));
                it.push(Event::SubagentTurn {
                    turn_id: turn_of(*turn),
                    agent: "a1".into(),
                    prompt: prompt.map(text_of),
                    answer: answer.map(text_of),
                });
            }
            Op::PreTool { turn } => {
                let mut h = hook(HookKind::PreToolUse, Some(*turn));
                h.tool_name = Some("Bash".into());
                it.push(Event::HookReceived(h));
            }
            Op::Tools { turn, call, output } => it.push(Event::ToolCalls {
                turn_id: turn_of(*turn),
                origin: "hook".into(),
                calls: vec![ov_engine::tool::ToolCall {
                    id: Some(format!("call-{call}")),
                    name: "Bash".into(),
                    input: format!(r#"{{"command":"echo {call}"}}"#),
                    output: output.map(text_of),
                    output_chars: output.map_or(0, |o| text_of(o).chars().count() as u64),
                    ..ov_engine::tool::ToolCall::default()
                }],
            }),
            Op::SessionStart => {
                let mut h = hook(HookKind::SessionStart, None);
                h.source = Some("startup".into());
                it.push(Event::HookReceived(h));
            }
            Op::MalformedHook => it.push(Event::HookReceived(HookReceived {
                malformed: Some("not JSON".into()),
                raw_len: 3,
                ..HookReceived::default()
            })),
            Op::Rollout {
                frags,
                file,
                rescan,
            } => {
                let f = usize::from(*file % 2);
                let rescanned = *rescan || it.last_file != Some(*file % 2);
                it.last_file = Some(*file % 2);
                let start = if rescanned { 0 } else { it.file_end[f] };
                let n = frags.len();
                let fragments: Vec<TurnFragment> = frags
                    .iter()
                    .enumerate()
                    .map(|(i, (t, prompt, fin, interrupted))| TurnFragment {
                        turn_id: turn_of(*t),
                        prompt: prompt.map(text_of),
                        final_text: fin.map(text_of),
                        last_text: fin.map(text_of).or_else(|| Some("partial".into())),
                        finished: fin.is_some(),
                        interrupted: *interrupted && fin.is_none(),
                        calls: 1,
                        superseded: i + 1 < n,
                        ..TurnFragment::default()
                    })
                    .collect();
                let end = start + 100 * n as u64;
                it.file_end[f] = end;
                it.push(Event::RolloutRead {
                    path: format!("/r/model-io-{f}.jsonl"),
                    chunk: TranscriptChunk {
                        identity: FileIdentity {
                            dev: 1,
                            ino: 10 + f as u64,
                        },
                        start,
                        end,
                        file_len: end + 7,
                        rescanned,
                        fragments,
                        skipped_lines: 1,
                        bad_lines: u32::from(n == 3),
                        tools: Vec::new(),
                    },
                });
            }
            Op::RolloutMissing => it.push(Event::RolloutMissing {
                path: "/r/missing.jsonl".into(),
            }),
            Op::Plan { max_len } => {
                let mut settings = DeliverySettings::new("zc-law".into());
                settings.max_length = max_len.map(usize::from);
                let messages = ov_engine::plan::plan(&it.state, &settings);
                if !messages.is_empty() {
                    it.push(Event::MessagesPlanned { messages });
                }
            }
            Op::StrayPlan { turn, text } => {
                let turn_id = turn_of(*turn);
                it.push(Event::MessagesPlanned {
                    messages: vec![PlannedMessage {
                        key: DedupKey::for_turn(&turn_id, Role::User),
                        turn_id: Some(turn_id),
                        role: Role::User,
                        content: text_of(*text),
                        raw_len: 9,
                        interrupted: false,
                        created_at_ms: None,
                    }],
                });
            }
            Op::Send { n, single } => {
                let n = if *single { 1 } else { usize::from(*n) };
                let keys: Vec<DedupKey> = it
                    .state
                    .outbox()
                    .into_iter()
                    .take(n)
                    .map(|(k, _)| k.clone())
                    .collect();
                if !keys.is_empty() {
                    let send_id = it.state.next_send_id;
                    it.push(Event::SendStarted {
                        send_id,
                        keys,
                        single: *single,
                    });
                }
            }
            Op::StraySend { pick } => {
                let keys: Vec<DedupKey> = it.state.messages.keys().cloned().collect();
                if !keys.is_empty() {
                    let key = keys[usize::from(*pick) % keys.len()].clone();
                    let send_id = it.state.next_send_id;
                    it.push(Event::SendStarted {
                        send_id,
                        keys: vec![key],
                        single: true,
                    });
                }
            }
            Op::Outcome { pick, outcome } => {
                let open: Vec<u64> = it.state.in_doubt().keys().copied().collect();
                if !open.is_empty() {
                    let id = open[usize::from(*pick) % open.len()];
                    it.settle(id, *outcome);
                }
            }
            Op::StrayOutcome { send_id, outcome } => it.settle(u64::from(*send_id), *outcome),
            Op::Reconcile { mask } => {
                if !it.state.in_doubt().is_empty() {
                    let send_ids: Vec<u64> = it.state.in_doubt().keys().copied().collect();
                    let mut present = Vec::new();
                    let mut absent = Vec::new();
                    let mut bit = 0;
                    for send in it.state.in_doubt().values() {
                        for k in &send.keys {
                            let in_flight = it.state.messages.get(k).is_some_and(|r| {
                                matches!(r.status, MessageStatus::InFlight { .. })
                            });
                            if in_flight {
                                if mask >> (bit % 64) & 1 == 1 {
                                    present.push(k.clone());
                                } else {
                                    absent.push(k.clone());
                                }
                                bit += 1;
                            }
                        }
                    }
                    it.push(Event::Reconciled {
                        send_ids,
                        present,
                        absent,
                    });
                }
            }
            Op::CommitStart { before } => {
                let commit_id = it.state.next_commit_id;
                it.push(Event::CommitStarted {
                    commit_id,
                    commit_count_before: before.map(u64::from),
                });
            }
            Op::CommitOutcome { outcome } => {
                let commit_id = it
                    .state
                    .commit
                    .in_flight
                    .as_ref()
                    .map_or(99, |c| c.commit_id);
                match outcome.failure() {
                    None => it.push(Event::CommitAcked {
                        commit_id,
                        task_id: Some("task".into()),
                        archive_uri: None,
                    }),
                    Some((status, retryable, request_sent)) => it.push(Event::CommitFailed {
                        commit_id,
                        status,
                        retryable,
                        error: format!("status {status}"),
                        request_sent,
                    }),
                }
            }
            Op::CommitReconcile { applied } => {
                if let Some(c) = it.state.commit.in_flight.clone() {
                    it.push(Event::CommitReconciled {
                        commit_id: c.commit_id,
                        applied: *applied,
                    });
                }
            }
            Op::Recall {
                hash,
                block,
                cached,
                face,
            } => it.push(Event::RecallServed {
                turn_id: Some(turn_of(*hash)),
                prompt_hash: u64::from(*hash) * 7919,
                tier: 2,
                block: block.map(text_of),
                context_face_unsupported: *face,
                cached: *cached,
            }),
            Op::Profile => it.push(Event::ProfileServed { bytes: 120 }),
            Op::Unreachable { retry } => it.push(Event::ServerUnreachable {
                error: "connection refused".into(),
                retry_after_ms: u64::from(*retry),
            }),
            Op::Reachable => it.push(Event::ServerReachable),
            Op::Drain => it.push(Event::OpenTurnsClosed),
            Op::Worker { drain } => it.push(Event::WorkerStarted {
                reason: if *drain {
                    WorkerReason::Drain
                } else {
                    WorkerReason::Stop
                },
            }),
            Op::Problem => it.push(Event::Problem {
                context: "test".into(),
                message: "something".into(),
            }),
        }
    }
    it.out
}

/// The sends the events leave open, by the rule of the delivery module doc:
/// a send is open from its `SendStarted` until an ack, a failure that is not
/// in doubt, or a reconciliation naming it.
pub fn open_sends(events: &[Envelope]) -> BTreeSet<u64> {
    let mut open = BTreeSet::new();
    for e in events {
        match &e.event {
            Event::SendStarted { send_id, .. } => {
                open.insert(*send_id);
            }
            Event::SendAcked { send_id } => {
                open.remove(send_id);
            }
            Event::SendFailed {
                send_id,
                status,
                request_sent,
                ..
            } => {
                let in_doubt = *request_sent && (*status == 0 || *status >= 500);
                if !in_doubt {
                    open.remove(send_id);
                }
            }
            Event::Reconciled { send_ids, .. } => {
                for id in send_ids {
                    open.remove(id);
                }
            }
            _ => {}
        }
    }
    open
}

/// Folds `events` with a snapshot round trip after the first `split`.
pub fn fold_via_snapshot(events: &[Envelope], split: usize) -> Result<State, String> {
    let (a, b) = events.split_at(split);
    let mut buf = Vec::new();
    ov_engine::codec::encode_snapshot(&State::fold(a), &mut buf).map_err(|e| e.to_string())?;
    let mut s = ov_engine::codec::decode_snapshot(&buf).map_err(|e| e.to_string())?;
    for e in b {
        s.apply(e);
    }
    Ok(s)
}
