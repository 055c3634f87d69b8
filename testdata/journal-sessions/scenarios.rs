//! The golden journals of `testdata/journal-sessions/`: hand-made event sequences with fixed times and
//! pids, written frame by frame with `ov_engine::codec::encode_event` and
//! `ov_journal::Journal::append` (the store would stamp the current time).
//!
//! Shared by the generator (`cargo run -p ovreplay --example gen_journals`) and the tests
//! (`replay-tool/tests/it/golden.rs` checks the committed bytes equal a fresh generation).
//! Changing a scenario means regenerating and re-accepting the snapshots.

use std::path::Path;

use ov_engine::event::{Envelope, Event, HookKind, HookReceived, PlannedMessage, WorkerReason};
use ov_engine::turn::{DedupKey, FileIdentity, Role, TranscriptChunk, TurnFragment};

/// 2026-03-02T09:00:00.000Z: every scenario's clock starts here.
pub const T0: u64 = 1_772_442_000_000;
/// The hooks' pid.
pub const HOOK_PID: u32 = 41_001;
/// The first worker's pid.
pub const WORKER_PID: u32 = 41_002;
/// A later worker's (or drain's) pid.
pub const DRAIN_PID: u32 = 41_003;
/// The rollout path of every scenario.
pub const ROLLOUT: &str = "/home/dev/.zcode/cli/rollout/model-io-sess_golden.jsonl";

/// One frame to write.
pub enum Record {
    /// An event.
    Event(Box<Envelope>),
    /// Raw payload bytes (an undecodable record).
    Raw(Vec<u8>),
}

/// A scenario: its directory name, what it shows, its frames.
pub struct Scenario {
    /// Directory name under `testdata/journal-sessions/`.
    pub name: &'static str,
    /// One line for the README.
    pub about: &'static str,
    /// The frames.
    pub records: Vec<Record>,
}

/// Builds a scenario's events with a running clock.
struct B {
    session: &'static str,
    at: u64,
    records: Vec<Record>,
}

impl B {
    fn new(session: &'static str) -> B {
        B {
            session,
            at: T0,
            records: Vec::new(),
        }
    }

    fn push(&mut self, step_ms: u64, pid: u32, event: Event) -> &mut B {
        self.at += step_ms;
        self.records.push(Record::Event(Box::new(Envelope {
            at_ms: self.at,
            pid,
            event,
        })));
        self
    }

    fn hook(
        &mut self,
        kind: HookKind,
        turn: Option<&str>,
        f: impl FnOnce(&mut HookReceived),
    ) -> &mut B {
        let mut h = HookReceived {
            kind: Some(kind),
            harness: "zcode".into(),
            session_id: Some(self.session.into()),
            turn_id: turn.map(str::to_string),
            cwd: Some("/home/dev/project".into()),
            raw_len: 420,
            ..HookReceived::default()
        };
        f(&mut h);
        self.push(1_000, HOOK_PID, Event::HookReceived(h))
    }

    fn start(&mut self) -> &mut B {
        self.hook(HookKind::SessionStart, None, |h| {
            h.source = Some("startup".into())
        })
    }

    fn prompt(&mut self, turn: &str, text: &str) -> &mut B {
        self.hook(HookKind::PromptSubmit, Some(turn), |h| {
            h.prompt = Some(text.into())
        })
    }

    fn stop(&mut self, turn: &str, text: &str) -> &mut B {
        self.hook(HookKind::Stop, Some(turn), |h| {
            h.response_text = Some(text.into());
            h.tool_call_count = Some(0);
        })
    }

    fn worker(&mut self, pid: u32, reason: WorkerReason) -> &mut B {
        self.push(50, pid, Event::WorkerStarted { reason })
    }

    fn read(&mut self, pid: u32, start: u64, end: u64, frags: Vec<TurnFragment>) -> &mut B {
        let chunk = TranscriptChunk {
            identity: FileIdentity {
                dev: 64_769,
                ino: 1_234_567,
            },
            start,
            end,
            file_len: end,
            rescanned: false,
            fragments: frags,
            skipped_lines: 0,
            bad_lines: 0,
            tools: Vec::new(),
        };
        self.push(
            20,
            pid,
            Event::RolloutRead {
                path: ROLLOUT.into(),
                chunk,
            },
        )
    }

    /// When the message of `role` of `turn` was written, as the planner says: the time of
    /// the turn's first prompt (user) or Stop (assistant) hook.
    fn hook_time(&self, turn: &str, role: Role) -> Option<u64> {
        let kind = match role {
            Role::User => HookKind::PromptSubmit,
            Role::Assistant => HookKind::Stop,
        };
        self.records.iter().find_map(|r| match r {
            Record::Event(e) => match &e.event {
                Event::HookReceived(h)
                    if h.kind == Some(kind) && h.turn_id.as_deref() == Some(turn) =>
                {
                    Some(e.at_ms)
                }
                _ => None,
            },
            Record::Raw(_) => None,
        })
    }

    fn plan(&mut self, pid: u32, msgs: &[(&str, Role, &str)]) -> &mut B {
        let messages = msgs
            .iter()
            .map(|(turn, role, text)| PlannedMessage {
                key: DedupKey::for_turn(turn, *role),
                turn_id: Some((*turn).to_string()),
                role: *role,
                content: (*text).to_string(),
                raw_len: text.len() as u64,
                interrupted: false,
                created_at_ms: self.hook_time(turn, *role),
            })
            .collect();
        self.push(5, pid, Event::MessagesPlanned { messages })
    }

    fn send(&mut self, pid: u32, send_id: u64, keys: &[(&str, Role)], single: bool) -> &mut B {
        let keys = keys
            .iter()
            .map(|(t, r)| DedupKey::for_turn(t, *r))
            .collect();
        self.push(
            5,
            pid,
            Event::SendStarted {
                send_id,
                keys,
                single,
            },
        )
    }

    fn ack(&mut self, pid: u32, send_id: u64) -> &mut B {
        self.push(120, pid, Event::SendAcked { send_id })
    }

    fn fail(
        &mut self,
        pid: u32,
        send_id: u64,
        status: u16,
        retryable: bool,
        error: &str,
        request_sent: bool,
    ) -> &mut B {
        self.push(
            150,
            pid,
            Event::SendFailed {
                send_id,
                status,
                retryable,
                error: error.into(),
                request_sent,
            },
        )
    }

    fn commit(&mut self, pid: u32, commit_id: u64, before: u64) -> &mut B {
        self.push(
            10,
            pid,
            Event::CommitStarted {
                commit_id,
                commit_count_before: Some(before),
            },
        );
        self.push(
            200,
            pid,
            Event::CommitAcked {
                commit_id,
                task_id: Some(format!("task-{commit_id}")),
                archive_uri: Some(format!(
                    "viking://session/zc-{}/archive/{before}",
                    self.session
                )),
            },
        )
    }

    fn done(&mut self, name: &'static str, about: &'static str) -> Scenario {
        Scenario {
            name,
            about,
            records: std::mem::take(&mut self.records),
        }
    }
}

/// A fragment of a finished turn.
fn frag(turn: &str, prompt: &str, answer: &str, superseded: bool) -> TurnFragment {
    TurnFragment {
        turn_id: turn.into(),
        prompt: Some(prompt.into()),
        final_text: Some(answer.into()),
        last_text: Some(answer.into()),
        finished: true,
        interrupted: false,
        calls: 1,
        superseded,
        ..TurnFragment::default()
    }
}

/// A turn from its prompt to its planned messages, by the worker its Stop spawned.
fn captured(b: &mut B, turn: &str, prompt: &str, answer: &str, from: u64, to: u64) {
    b.prompt(turn, prompt)
        .stop(turn, answer)
        .worker(WORKER_PID, WorkerReason::Stop)
        .read(
            WORKER_PID,
            from,
            to,
            vec![frag(turn, prompt, answer, false)],
        )
        .plan(
            WORKER_PID,
            &[(turn, Role::User, prompt), (turn, Role::Assistant, answer)],
        );
}

const U: Role = Role::User;
const A: Role = Role::Assistant;

/// Every golden scenario.
pub fn scenarios() -> Vec<Scenario> {
    let mut v = Vec::new();

    let mut b = B::new("sess_clean");
    b.start();
    captured(
        &mut b,
        "turn_a1",
        "How do I list files?",
        "Use `ls -la`.",
        0,
        2_048,
    );
    b.send(WORKER_PID, 0, &[("turn_a1", U), ("turn_a1", A)], false)
        .ack(WORKER_PID, 0)
        .commit(WORKER_PID, 0, 0);
    captured(
        &mut b,
        "turn_b2",
        "And hidden ones?",
        "`ls -a` shows dotfiles too.",
        2_048,
        4_100,
    );
    b.send(WORKER_PID, 1, &[("turn_b2", U), ("turn_b2", A)], false)
        .ack(WORKER_PID, 1);
    v.push(b.done(
        "clean",
        "two turns captured, sent in one batch each and acknowledged; the first committed, the second not yet",
    ));

    let mut b = B::new("sess_doubt");
    b.start();
    captured(
        &mut b,
        "turn_a1",
        "Explain flock.",
        "flock(2) takes an advisory lock.",
        0,
        1_900,
    );
    b.send(WORKER_PID, 0, &[("turn_a1", U), ("turn_a1", A)], false)
        .fail(WORKER_PID, 0, 0, true, "connection reset by peer", true)
        .worker(DRAIN_PID, WorkerReason::Drain)
        .push(
            300,
            DRAIN_PID,
            Event::Reconciled {
                send_ids: vec![0],
                present: vec![DedupKey::for_turn("turn_a1", U)],
                absent: vec![DedupKey::for_turn("turn_a1", A)],
            },
        )
        .send(DRAIN_PID, 1, &[("turn_a1", A)], false)
        .ack(DRAIN_PID, 1);
    captured(
        &mut b,
        "turn_b2",
        "And fcntl locks?",
        "fcntl locks are per process.",
        1_900,
        3_700,
    );
    b.send(WORKER_PID, 2, &[("turn_b2", U), ("turn_b2", A)], false);
    v.push(b.done(
        "in_doubt",
        "a send whose request left before the connection reset (in doubt), reconciled by a drain (user present, assistant resent and acknowledged); a second turn's send still has no outcome",
    ));

    let mut b = B::new("sess_aside");
    b.start();
    captured(
        &mut b,
        "turn_a1",
        "Summarise the log.",
        "The log shows three restarts.",
        0,
        1_500,
    );
    b.send(WORKER_PID, 0, &[("turn_a1", U), ("turn_a1", A)], false)
        .fail(
            WORKER_PID,
            0,
            400,
            false,
            "invalid message: content has a lone surrogate",
            false,
        )
        .send(WORKER_PID, 1, &[("turn_a1", U)], true)
        .ack(WORKER_PID, 1)
        .send(WORKER_PID, 2, &[("turn_a1", A)], true)
        .fail(
            WORKER_PID,
            2,
            400,
            false,
            "invalid message: content has a lone surrogate",
            false,
        );
    b.prompt("turn_b2", "Paste the whole log here.")
        .stop("turn_b2", "")
        .worker(WORKER_PID, WorkerReason::Stop)
        .plan(WORKER_PID, &[("turn_b2", U, "Paste the whole log here.")])
        .send(WORKER_PID, 3, &[("turn_b2", U)], true)
        .fail(WORKER_PID, 3, 413, false, "message too large", false);
    v.push(b.done(
        "set_aside",
        "a batch refused for good (400), split into single sends: the user message acknowledged, the assistant set aside; a second turn's only message refused (413) and set aside",
    ));

    let mut b = B::new("sess_offline");
    b.start();
    captured(&mut b, "turn_a1", "What is 2+2?", "4.", 0, 800);
    b.send(WORKER_PID, 0, &[("turn_a1", U), ("turn_a1", A)], false)
        .fail(
            WORKER_PID,
            0,
            0,
            true,
            "connection refused (127.0.0.1:1933)",
            false,
        )
        .push(
            1,
            WORKER_PID,
            Event::ServerUnreachable {
                error: "connection refused (127.0.0.1:1933)".into(),
                retry_after_ms: 30_000,
            },
        );
    b.at += 1;
    // Written by a newer ovhook (codec version 9): shown, not folded.
    b.records.push(Record::Raw(vec![9, 1, 0, 0, 0]));
    v.push(b.done(
        "unreachable",
        "the server refused the connection before the request left: messages back to the outbox and a 30 s back-off; then one record from a newer ovhook (undecodable)",
    ));

    let mut b = B::new("sess_open");
    b.start();
    captured(
        &mut b,
        "turn_a1",
        "Start the build.",
        "Build started.",
        0,
        1_000,
    );
    b.send(WORKER_PID, 0, &[("turn_a1", U), ("turn_a1", A)], false)
        .ack(WORKER_PID, 0);
    b.prompt("turn_b2", "Now run the tests.")
        .hook(HookKind::PreToolUse, Some("turn_b2"), |h| {
            h.tool_name = Some("Bash".into())
        })
        .read(
            HOOK_PID,
            1_000,
            1_700,
            vec![TurnFragment {
                turn_id: "turn_b2".into(),
                prompt: Some("Now run the tests.".into()),
                final_text: None,
                last_text: Some("Running cargo test…".into()),
                finished: false,
                interrupted: false,
                calls: 1,
                superseded: false,
                ..TurnFragment::default()
            }],
        );
    v.push(b.done(
        "no_stop",
        "one turn captured and acknowledged; the next saw UserPromptSubmit and PreToolUse but no Stop yet (still open)",
    ));
    v
}

/// The seed of the golden journals' segment salts (`ov_journal::Options::salt_seed`), so their
/// bytes are the same every time they are generated.
pub const SALT_SEED: u64 = 0x0076_6a5f_7363_656e;

/// Writes `records` as a new journal at `dir` (which must not exist).
pub fn write(dir: &Path, records: &[Record]) -> anyhow::Result<()> {
    let opts = ov_journal::Options {
        salt_seed: Some(SALT_SEED),
        ..ov_journal::Options::default()
    };
    let journal = ov_journal::Journal::open(dir, opts)?;
    let mut buf = Vec::new();
    for r in records {
        match r {
            Record::Event(env) => {
                ov_engine::codec::encode_event(env, &mut buf)?;
                journal.append(&buf, ov_journal::Durability::Sync)?;
            }
            Record::Raw(bytes) => {
                journal.append(bytes, ov_journal::Durability::Sync)?;
            }
        }
    }
    Ok(())
}
