//! The delivery pipeline's exactly-once rules, against a fake server that
//! applies what it is sent, answers from a script and logs every call.
//!
//! Every test asserts the server side: what the server holds (each message
//! exactly once), how many requests and commits it saw.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ov_engine::delivery::{
    self, CommitReply, DeliverySettings, HeldMessage, OutgoingMessage, RunReport, TranscriptSource,
    Transport, TransportError, WorkerContext,
};
use ov_engine::event::{Event, HookKind, HookReceived, WorkerReason};
use ov_engine::projector::{MessageStatus, State};
use ov_engine::store::SessionStore;
use ov_engine::turn::{DedupKey, FileIdentity, Role, TranscriptChunk};
use ov_journal::{Durability, FileLock};
use rstest::rstest;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const SESSION: &str = "zc-test";

/// How the fake answers one request.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reply {
    /// Apply and answer 2xx.
    Ok,
    /// Apply, then lose the reply (status 0 after the body left).
    AppliedReplyLost,
    /// The body left, the connection dropped before the server applied it.
    LostBeforeApply,
    /// Answer `status`; `applied` says whether the server applied it first.
    Status {
        status: u16,
        retryable: bool,
        applied: bool,
    },
    /// Connection refused: nothing sent, `on_sent` never called.
    Refused,
}

#[derive(Debug, Clone, PartialEq)]
enum Call {
    Batch(Vec<String>),
    One(String),
    Commit,
    CommitCount,
    Held,
}

#[derive(Default)]
struct Server {
    held: Vec<HeldMessage>,
    commits: u64,
    calls: Vec<Call>,
    sends: VecDeque<Reply>,
    commit_replies: VecDeque<Reply>,
    /// Any request carrying this content gets a 400 and is not applied.
    bad_content: Option<String>,
    /// `POST …/messages/batch` answers 404.
    no_batch: bool,
    /// `held_messages` fails as unreachable this many more times.
    held_unreachable: u32,
    /// What the health question answers (a refused connection says no).
    answers_now: bool,
}

struct Fake<'a> {
    server: RefCell<Server>,
    /// Runs once, during the first send request (a hook writing meanwhile).
    during_send: RefCell<Option<Box<dyn FnOnce() + 'a>>>,
}

fn tag(m: &OutgoingMessage) -> String {
    format!(
        "{}:{}",
        m.turn_id.as_deref().unwrap_or("-"),
        m.role.as_str()
    )
}

fn err(status: u16, retryable: bool, unreachable: bool) -> TransportError {
    TransportError {
        status,
        retryable,
        unreachable,
        message: format!("fake {status}"),
        trace_id: Some(format!("trace-{status}")),
    }
}

impl<'a> Fake<'a> {
    fn new(server: Server) -> Fake<'a> {
        Fake {
            server: RefCell::new(server),
            during_send: RefCell::new(None),
        }
    }

    fn send(&self, messages: &[OutgoingMessage], on_sent: &dyn Fn()) -> Result<(), TransportError> {
        if let Some(f) = self.during_send.borrow_mut().take() {
            f();
        }
        let mut s = self.server.borrow_mut();
        let reply = s.sends.pop_front().unwrap_or(Reply::Ok);
        if reply == Reply::Refused {
            return Err(err(0, true, true));
        }
        on_sent();
        let bad = s
            .bad_content
            .as_ref()
            .is_some_and(|b| messages.iter().any(|m| &m.content == b));
        if bad {
            return Err(err(400, false, false));
        }
        let apply = |s: &mut Server| {
            s.held.extend(messages.iter().map(|m| HeldMessage {
                role: m.role.as_str().to_owned(),
                content: m.content.clone(),
                turn_id: m.turn_id.clone(),
            }));
        };
        match reply {
            Reply::Ok => {
                apply(&mut s);
                Ok(())
            }
            Reply::AppliedReplyLost => {
                apply(&mut s);
                Err(err(0, true, false))
            }
            Reply::LostBeforeApply => Err(err(0, true, false)),
            Reply::Status {
                status,
                retryable,
                applied,
            } => {
                if applied {
                    apply(&mut s);
                }
                Err(err(status, retryable, false))
            }
            Reply::Refused => unreachable!(),
        }
    }

    fn held_count(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for h in &self.server.borrow().held {
            *m.entry(format!(
                "{}:{}",
                h.turn_id.as_deref().unwrap_or("-"),
                h.role
            ))
            .or_insert(0) += 1;
        }
        m
    }

    fn calls(&self) -> Vec<Call> {
        self.server.borrow().calls.clone()
    }

    fn count(&self, f: impl Fn(&Call) -> bool) -> usize {
        self.server.borrow().calls.iter().filter(|c| f(c)).count()
    }
}

impl Transport for Fake<'_> {
    fn add_batch(
        &self,
        session: &str,
        messages: &[OutgoingMessage],
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError> {
        assert_eq!(session, SESSION);
        self.server
            .borrow_mut()
            .calls
            .push(Call::Batch(messages.iter().map(tag).collect()));
        if self.server.borrow().no_batch {
            on_sent();
            return Err(err(404, false, false));
        }
        self.send(messages, on_sent)
    }

    fn add_one(
        &self,
        session: &str,
        message: &OutgoingMessage,
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError> {
        assert_eq!(session, SESSION);
        self.server.borrow_mut().calls.push(Call::One(tag(message)));
        self.send(std::slice::from_ref(message), on_sent)
    }

    fn commit(&self, _session: &str, on_sent: &dyn Fn()) -> Result<CommitReply, TransportError> {
        let mut s = self.server.borrow_mut();
        s.calls.push(Call::Commit);
        let reply = s.commit_replies.pop_front().unwrap_or(Reply::Ok);
        if reply == Reply::Refused {
            return Err(err(0, true, true));
        }
        on_sent();
        match reply {
            Reply::Ok => {
                s.commits += 1;
                Ok(CommitReply {
                    task_id: Some(format!("task-{}", s.commits)),
                    archive_uri: None,
                    trace_id: Some(format!("trace-commit-{}", s.commits)),
                })
            }
            Reply::AppliedReplyLost => {
                s.commits += 1;
                Err(err(0, true, false))
            }
            Reply::LostBeforeApply => Err(err(0, true, false)),
            Reply::Status {
                status,
                retryable,
                applied,
            } => {
                s.commits += u64::from(applied);
                Err(err(status, retryable, false))
            }
            Reply::Refused => unreachable!(),
        }
    }

    fn commit_count(&self, _session: &str) -> Result<Option<u64>, TransportError> {
        let mut s = self.server.borrow_mut();
        s.calls.push(Call::CommitCount);
        Ok(Some(s.commits))
    }

    fn answers_now(&self) -> bool {
        self.server.borrow().answers_now
    }

    fn held_messages(&self, _session: &str) -> Result<Vec<HeldMessage>, TransportError> {
        let mut s = self.server.borrow_mut();
        s.calls.push(Call::Held);
        if s.held_unreachable > 0 {
            s.held_unreachable -= 1;
            return Err(err(0, true, true));
        }
        Ok(s.held.clone())
    }
}

struct Session {
    _dir: tempfile::TempDir,
    path: PathBuf,
    store: SessionStore,
}

impl Session {
    fn new() -> Result<Session, Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("journals").join("sess_test");
        let store = SessionStore::open(&path)?;
        Ok(Session {
            _dir: dir,
            path,
            store,
        })
    }

    fn state(&self) -> Result<State, Box<dyn std::error::Error>> {
        Ok(self.store.fold()?.state)
    }
}

fn hook(kind: HookKind, turn: &str, text: &str) -> Event {
    let mut h = HookReceived {
        kind: Some(kind),
        harness: "zcode".into(),
        session_id: Some("sess_test".into()),
        turn_id: Some(turn.to_owned()),
        raw_len: 10,
        ..HookReceived::default()
    };
    match kind {
        HookKind::PromptSubmit => h.prompt = Some(text.to_owned()),
        HookKind::Stop => h.response_text = Some(text.to_owned()),
        _ => {}
    }
    Event::HookReceived(h)
}

fn turn_id(i: usize) -> String {
    format!("turn_{i:04}")
}

/// Appends the hooks of turns `range`: prompt `prompt i`, answer `answer i`.
fn add_turns(
    store: &SessionStore,
    range: std::ops::Range<usize>,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut evs = Vec::new();
    for i in range {
        evs.push(hook(
            HookKind::PromptSubmit,
            &turn_id(i),
            &format!("prompt {i}"),
        ));
        evs.push(hook(HookKind::Stop, &turn_id(i), &format!("answer {i}")));
    }
    store.append_all(evs, Durability::Buffered)?;
    Ok(())
}

fn settings() -> DeliverySettings {
    let mut s = DeliverySettings::new(SESSION.into());
    s.transient_retries = 3;
    s
}

fn deliver(
    s: &Session,
    t: &Fake<'_>,
    settings: &DeliverySettings,
) -> Result<RunReport, Box<dyn std::error::Error>> {
    Ok(delivery::deliver(&s.store, None, Some(t), settings)?)
}

/// Every message of turns `0..n` is held exactly once, nothing else is.
fn assert_exactly_once(t: &Fake<'_>, n: usize, except: &[&str]) {
    let held = t.held_count();
    let mut want = BTreeMap::new();
    for i in 0..n {
        for role in ["user", "assistant"] {
            let tag = format!("{}:{role}", turn_id(i));
            if !except.contains(&tag.as_str()) {
                want.insert(tag, 1);
            }
        }
    }
    assert_eq!(held, want, "server holds each message exactly once");
}

fn assert_settled(state: &State) {
    assert!(state.outbox().is_empty(), "outbox: {:?}", state.outbox());
    assert!(
        state.in_doubt().is_empty(),
        "in doubt: {:?}",
        state.in_doubt()
    );
    assert!(state.commit.in_flight.is_none());
}

#[rstest]
#[case::one_turn(1, 100)]
#[case::several_batches(25, 8)]
#[case::many_turns(300, 100)]
fn happy_path_sends_each_message_once_and_commits_once(
    #[case] n: usize,
    #[case] batch_max: usize,
) -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..n)?;
    let t = Fake::new(Server::default());
    let mut set = settings();
    set.batch_max = batch_max;
    let r = deliver(&s, &t, &set)?;
    assert_eq!((r.planned, r.acked, r.committed), (2 * n, 2 * n, true));
    assert_eq!(r.requests, (2 * n).div_ceil(batch_max));
    assert_exactly_once(&t, n, &[]);
    assert_eq!(t.server.borrow().commits, 1);
    assert!(
        t.count(|c| matches!(c, Call::Held)) == 0,
        "nothing was in doubt"
    );
    let state = s.state()?;
    assert_settled(&state);
    assert_eq!(state.cursor(), Some(turn_id(n - 1).as_str()));
    // A second run finds nothing to do and asks nothing of the server.
    let before = t.calls().len();
    let r = deliver(&s, &t, &set)?;
    assert_eq!(r, RunReport::default());
    assert_eq!(t.calls().len(), before);
    Ok(())
}

/// A transcript over the generator's rollout file, read with the real reader.
struct RolloutFile(PathBuf);

impl TranscriptSource for RolloutFile {
    fn read(
        &self,
        resume: Option<(FileIdentity, u64)>,
    ) -> std::io::Result<Option<TranscriptChunk>> {
        ov_engine::transcript::zcode::read_chunk(&self.0, resume).map_err(std::io::Error::other)
    }
    fn path(&self) -> String {
        self.0.display().to_string()
    }
    fn peek(&self, resume: Option<(FileIdentity, u64)>) -> Option<bool> {
        ov_engine::transcript::tail::changed_since(&self.0, resume)
    }
}

/// A real `model_io` rollout (generated): what the server ends up holding is
/// the generator's independent oracle of a first capture, minus the last
/// turn (no Stop yet), each message once; a second run reads nothing new.
#[rstest]
#[case::seed_1(1)]
#[case::seed_7(7)]
#[case::seed_42(42)]
fn rollout_capture_reaches_the_server_once(#[case] seed: u64) -> TestResult {
    let s = Session::new()?;
    let spec = ov_testdata::random(seed, 12);
    let file = s.path.parent().ok_or("no parent")?.join("model-io.jsonl");
    let mut out = std::fs::File::create(&file)?;
    let written = ov_testdata::write_session(&spec, &mut out)?;
    drop(out);
    let last = written.turn_ids.last().cloned();
    let want: Vec<(Option<String>, String, String)> = spec
        .expected(&written.turn_ids)
        .into_iter()
        .filter(|m| m.turn_id != last)
        .map(|m| (m.turn_id, m.role.to_owned(), m.content))
        .collect();
    // Each turn was seen by one of its hooks (a tool use: no text, no completion), so it
    // may be sent; the rollout gives the text.
    for id in &written.turn_ids {
        s.store
            .append(hook(HookKind::PreToolUse, id, ""), Durability::Buffered)?;
    }
    let t = Fake::new(Server::default());
    let source = RolloutFile(file);
    delivery::deliver(&s.store, Some(&source), Some(&t), &settings())?;
    let held: Vec<(Option<String>, String, String)> = t
        .server
        .borrow()
        .held
        .iter()
        .map(|h| (h.turn_id.clone(), h.role.clone(), h.content.clone()))
        .collect();
    assert_eq!(held, want);
    let calls = t.calls().len();
    let r = delivery::deliver(&s.store, Some(&source), Some(&t), &settings())?;
    assert_eq!((r.planned, r.requests), (0, 0));
    assert_eq!(t.calls().len(), calls);
    Ok(())
}

/// What the fake server holds of one message: turn, role, content.
type HeldRow = (Option<String>, String, String);

struct TranscriptCtx<'a, 'b> {
    transport: &'a Fake<'b>,
    file: PathBuf,
}

impl WorkerContext for TranscriptCtx<'_, '_> {
    fn transcript(&self, _state: &State) -> Option<Box<dyn TranscriptSource>> {
        Some(Box::new(RolloutFile(self.file.clone())))
    }
    fn transport(&self) -> Option<&dyn Transport> {
        Some(self.transport)
    }
    fn settings(&self, _state: &State) -> DeliverySettings {
        settings()
    }
}

/// An agent that writes its transcript after its Stop hook ran (Copilot CLI flushes
/// `events.jsonl` in batches): the Stop worker's first read finds nothing, it waits (once,
/// bounded) for the transcript to grow, and the same worker sends what the transcript then
/// shows, as a worker that found the whole file at once does. A transcript that never grows
/// costs one bounded wait.
#[test]
fn a_stop_worker_waits_for_a_transcript_written_after_the_hook() -> TestResult {
    let spec = ov_testdata::random(3, 4);
    let run = |late: bool| -> Result<Vec<HeldRow>, Box<dyn std::error::Error>> {
        let s = Session::new()?;
        let file = s.path.parent().ok_or("no parent")?.join("model-io.jsonl");
        let mut whole = Vec::new();
        let written = ov_testdata::write_session(&spec, &mut whole)?;
        // Every turn seen by a hook and ended by a Stop that carries no answer.
        for id in &written.turn_ids {
            s.store
                .append(hook(HookKind::PreToolUse, id, ""), Durability::Buffered)?;
            s.store
                .append(hook(HookKind::Stop, id, ""), Durability::Buffered)?;
        }
        let writer = if late {
            std::fs::write(&file, b"")?;
            let (path, bytes) = (file.clone(), whole.clone());
            Some(std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(400));
                std::fs::write(path, bytes)
            }))
        } else {
            std::fs::write(&file, &whole)?;
            None
        };
        let t = Fake::new(Server::default());
        let ctx = TranscriptCtx {
            transport: &t,
            file,
        };
        delivery::run_worker(&s.store, &ctx, WorkerReason::Stop, Duration::ZERO)?;
        if let Some(w) = writer {
            w.join().map_err(|_| "writer panicked")??;
        }
        let held = t
            .server
            .borrow()
            .held
            .iter()
            .map(|h| (h.turn_id.clone(), h.role.clone(), h.content.clone()))
            .collect();
        Ok(held)
    };
    let at_once = run(false)?;
    assert!(!at_once.is_empty(), "the whole file gives turns to send");
    assert_eq!(
        run(true)?,
        at_once,
        "the late transcript, read by the same worker"
    );

    // A transcript that never shows the answer: one bounded wait, then the worker leaves.
    let s = Session::new()?;
    let file = s.path.parent().ok_or("no parent")?.join("model-io.jsonl");
    std::fs::write(&file, b"")?;
    s.store.append(
        hook(HookKind::PreToolUse, "turn_x", ""),
        Durability::Buffered,
    )?;
    s.store
        .append(hook(HookKind::Stop, "turn_x", ""), Durability::Buffered)?;
    let t = Fake::new(Server::default());
    let ctx = TranscriptCtx {
        transport: &t,
        file,
    };
    let reports = delivery::run_worker(&s.store, &ctx, WorkerReason::Stop, Duration::ZERO)?;
    assert_eq!(reports.len(), 1, "no second pass: {reports:?}");
    assert!(t.server.borrow().held.is_empty());
    Ok(())
}

/// Failures after the request body left: the server may or may not have
/// applied the batch. Reconciliation decides; nothing is ever held twice.
#[rstest]
#[case::reply_lost_after_apply(vec![Reply::AppliedReplyLost], 1, 0)]
#[case::connection_lost_before_apply(vec![Reply::LostBeforeApply], 2, 0)]
#[case::server_error_after_apply(vec![Reply::Status { status: 500, retryable: true, applied: true }], 1, 0)]
#[case::server_error_not_applied(vec![Reply::Status { status: 502, retryable: true, applied: false }], 2, 0)]
// Two 5xx on a batch: its messages go one by one (one more 503, then fine).
#[case::burst_of_503(vec![Reply::Status { status: 503, retryable: true, applied: false }; 3], 2, 9)]
#[case::too_many_requests(vec![Reply::Status { status: 429, retryable: true, applied: false }], 2, 0)]
#[case::timeout_408(vec![Reply::Status { status: 408, retryable: true, applied: false }], 2, 0)]
fn in_doubt_and_transient_failures_never_duplicate(
    #[case] replies: Vec<Reply>,
    #[case] batches: usize,
    #[case] singles: usize,
) -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..4)?;
    let t = Fake::new(Server {
        sends: replies.into(),
        ..Server::default()
    });
    let set = settings();
    // Transient failures may leave work for the next run; two runs settle all.
    deliver(&s, &t, &set)?;
    deliver(&s, &t, &set)?;
    assert_exactly_once(&t, 4, &[]);
    assert_eq!(t.count(|c| matches!(c, Call::Batch(_))), batches);
    assert_eq!(t.count(|c| matches!(c, Call::One(_))), singles);
    let state = s.state()?;
    assert_settled(&state);
    assert_eq!(state.commit.acked_total, 8);
    assert_eq!(t.server.borrow().commits, 1);
    Ok(())
}

/// Inside a hook's budget (PreCompact), a send left in doubt is not settled when the settle
/// wait would pass the deadline: it stays in doubt, journaled, and a later worker (no deadline)
/// settles it with the server; nothing is held twice.
#[test]
fn a_run_inside_a_hooks_budget_leaves_the_in_doubt_settle_to_a_later_worker() -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..2)?;
    let t = Fake::new(Server {
        sends: vec![Reply::AppliedReplyLost].into(),
        ..Server::default()
    });
    let mut within = settings();
    within.in_doubt_settle_ms = 60_000;
    within.deadline = Some(Instant::now() + Duration::from_secs(5));
    deliver(&s, &t, &within)?;
    assert!(
        !s.state()?.in_doubt().is_empty(),
        "the settle does not fit the budget: still in doubt"
    );
    deliver(&s, &t, &settings())?;
    assert_exactly_once(&t, 2, &[]);
    assert_settled(&s.state()?);
    Ok(())
}

/// A context whose first pass sees a hook append meanwhile (as a Stop whose own worker found
/// the lock taken), under a hook's budget that has run out.
struct AppendedMeanwhile<'a, 'b> {
    transport: &'a Fake<'b>,
    store: &'a SessionStore,
    appended: std::cell::Cell<bool>,
    deadline: Option<Instant>,
}

impl WorkerContext for AppendedMeanwhile<'_, '_> {
    fn transcript(&self, _state: &State) -> Option<Box<dyn TranscriptSource>> {
        None
    }
    fn transport(&self) -> Option<&dyn Transport> {
        Some(self.transport)
    }
    fn settings(&self, _state: &State) -> DeliverySettings {
        if !self.appended.replace(true) {
            self.store
                .append(
                    hook(HookKind::Stop, "turn_late", "late"),
                    Durability::Buffered,
                )
                .expect("append");
        }
        let mut s = settings();
        s.deadline = self.deadline;
        s
    }
}

/// A worker goes round again for events appended while it ran, but a run inside a hook whose
/// budget is spent (PreCompact) does not start another round: a later worker has them.
#[test]
fn a_run_past_its_hooks_budget_starts_no_other_round() -> TestResult {
    for (deadline, rounds) in [(None, 2), (Some(Instant::now()), 1)] {
        let s = Session::new()?;
        add_turns(&s.store, 0..1)?;
        let t = Fake::new(Server::default());
        let ctx = AppendedMeanwhile {
            transport: &t,
            store: &s.store,
            appended: std::cell::Cell::new(false),
            deadline,
        };
        let reports =
            delivery::run_worker(&s.store, &ctx, WorkerReason::PreCompact, Duration::ZERO)?;
        assert_eq!(reports.len(), rounds, "deadline {deadline:?}: {reports:?}");
    }
    Ok(())
}

/// A 400 on a batch: its messages go one by one, only the bad one is set
/// aside (with the server's words), the others and those behind are delivered.
#[test]
fn bad_request_sets_aside_only_the_culprit() -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..5)?;
    let t = Fake::new(Server {
        bad_content: Some("answer 2".into()),
        ..Server::default()
    });
    let set = settings();
    deliver(&s, &t, &set)?;
    add_turns(&s.store, 5..7)?;
    deliver(&s, &t, &set)?;
    assert_exactly_once(&t, 7, &["turn_0002:assistant"]);
    let state = s.state()?;
    let aside: Vec<(&DedupKey, u16, String)> = state
        .set_aside()
        .into_iter()
        .filter_map(|(k, r)| match &r.status {
            MessageStatus::SetAside { status, error } => Some((k, *status, error.clone())),
            _ => None,
        })
        .collect();
    let bad = DedupKey::for_turn("turn_0002", Role::Assistant);
    assert_eq!(aside, vec![(&bad, 400, "fake 400".to_owned())]);
    assert_settled(&state);
    // Messages after the culprit were not held back by it, and the later turns
    // went as a batch again.
    assert_eq!(
        t.calls().last().cloned(),
        Some(Call::Commit),
        "{:?}",
        t.calls()
    );
    assert!(t.calls().contains(&Call::Batch(vec![
        "turn_0005:user".into(),
        "turn_0005:assistant".into(),
        "turn_0006:user".into(),
        "turn_0006:assistant".into(),
    ])));
    assert_eq!(state.cursor(), Some("turn_0006"));
    Ok(())
}

/// 404 (no batch endpoint): single sends from then on, in this run and the next.
#[test]
fn batch_not_found_switches_to_single_sends() -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..3)?;
    let t = Fake::new(Server {
        no_batch: true,
        ..Server::default()
    });
    deliver(&s, &t, &settings())?;
    add_turns(&s.store, 3..4)?;
    deliver(&s, &t, &settings())?;
    assert_exactly_once(&t, 4, &[]);
    assert_eq!(t.count(|c| matches!(c, Call::Batch(_))), 1);
    assert_eq!(t.count(|c| matches!(c, Call::One(_))), 8);
    let state = s.state()?;
    assert!(state.batch_unsupported);
    assert_settled(&state);
    Ok(())
}

struct Ctx<'a, 'b> {
    transport: &'a Fake<'b>,
    settings: DeliverySettings,
}

impl WorkerContext for Ctx<'_, '_> {
    fn transcript(&self, _state: &State) -> Option<Box<dyn TranscriptSource>> {
        None
    }
    fn transport(&self) -> Option<&dyn Transport> {
        Some(self.transport)
    }
    fn settings(&self, _state: &State) -> DeliverySettings {
        self.settings.clone()
    }
}

/// Connection refused: journaled as `ServerUnreachable`; a Stop worker then
/// respects the back-off (asks nothing of the server), a drain ignores it.
#[test]
fn unreachable_server_backs_off_stop_workers_not_drains() -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..2)?;
    let t = Fake::new(Server {
        sends: vec![Reply::Refused].into(),
        ..Server::default()
    });
    let r = deliver(&s, &t, &settings())?;
    assert!(r.offline);
    let state = s.state()?;
    assert!(state.backing_off(ov_engine::store::now_ms()));
    assert_eq!(
        state.outbox().len(),
        4,
        "refused before sending: still pending"
    );
    assert!(
        state.in_doubt().is_empty(),
        "nothing left: nothing in doubt"
    );
    assert!(t.held_count().is_empty());

    let ctx = Ctx {
        transport: &t,
        settings: settings(),
    };
    let calls = t.calls().len();
    let reports = delivery::run_worker(&s.store, &ctx, WorkerReason::Stop, Duration::ZERO)?;
    assert!(reports.iter().all(|r| r.offline));
    assert_eq!(
        t.calls().len(),
        calls,
        "a Stop worker stays away during the back-off"
    );

    let reports = delivery::run_worker(&s.store, &ctx, WorkerReason::Drain, Duration::ZERO)?;
    assert!(reports.first().is_some_and(|r| r.committed && !r.offline));
    assert_exactly_once(&t, 2, &[]);
    let state = s.state()?;
    assert_settled(&state);
    assert!(!state.backing_off(ov_engine::store::now_ms()));
    Ok(())
}

/// A back-off opened by a failure the server has since recovered from (a hook's
/// recall that timed out on a slow search): a Stop worker asks whether the
/// server answers now and, when it does, delivers without waiting for a drain.
#[test]
fn stop_worker_inside_the_back_off_delivers_when_the_server_answers_again() -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..2)?;
    let t = Fake::new(Server {
        sends: vec![Reply::Refused].into(),
        ..Server::default()
    });
    assert!(deliver(&s, &t, &settings())?.offline);
    assert!(s.state()?.backing_off(ov_engine::store::now_ms()));

    t.server.borrow_mut().answers_now = true;
    let ctx = Ctx {
        transport: &t,
        settings: settings(),
    };
    let reports = delivery::run_worker(&s.store, &ctx, WorkerReason::Stop, Duration::ZERO)?;
    assert!(reports.iter().any(|r| !r.offline), "{reports:?}");
    assert_exactly_once(&t, 2, &[]);
    assert!(!s.state()?.backing_off(ov_engine::store::now_ms()));
    Ok(())
}

/// Unreachable while reconciling: nothing is resent before the server says
/// what it holds; the next run reconciles and finishes.
#[test]
fn reconciliation_waits_for_the_server() -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..2)?;
    let t = Fake::new(Server {
        sends: vec![Reply::AppliedReplyLost].into(),
        held_unreachable: 1,
        ..Server::default()
    });
    let r = deliver(&s, &t, &settings())?;
    assert!(r.offline);
    assert_eq!(s.state()?.in_doubt().len(), 1);
    let mut drain = settings();
    drain.ignore_backoff = true;
    deliver(&s, &t, &drain)?;
    assert_exactly_once(&t, 2, &[]);
    assert_eq!(t.count(|c| matches!(c, Call::Batch(_))), 1);
    assert_settled(&s.state()?);
    Ok(())
}

/// A commit whose reply was lost: the next run compares the commit count and
/// commits again only when the server did not apply it.
#[rstest]
#[case::applied(Reply::AppliedReplyLost, 1)]
#[case::not_applied(Reply::LostBeforeApply, 2)]
#[case::server_error_applied(Reply::Status { status: 500, retryable: true, applied: true }, 1)]
fn commit_in_doubt_is_never_doubled(
    #[case] reply: Reply,
    #[case] commit_calls: usize,
) -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..2)?;
    let t = Fake::new(Server {
        commit_replies: vec![reply].into(),
        ..Server::default()
    });
    let r = deliver(&s, &t, &settings())?;
    assert!(!r.committed);
    assert!(s.state()?.commit.in_flight.is_some(), "commit in doubt");
    deliver(&s, &t, &settings())?;
    assert_eq!(t.server.borrow().commits, 1, "applied exactly once");
    assert_eq!(t.count(|c| matches!(c, Call::Commit)), commit_calls);
    let state = s.state()?;
    assert_settled(&state);
    assert_eq!(state.commit.uncommitted(), 0);
    assert_eq!(state.commit.commits_ok, 1);
    Ok(())
}

/// A crash after `SendStarted` was journaled and before (or after) the
/// request: the next run reconciles first and never duplicates.
#[rstest]
#[case::request_never_left(false)]
#[case::request_applied(true)]
fn crash_after_send_started(#[case] server_got_it: bool) -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..3)?;
    // An offline run plans; then the "crashed" sender journals its start.
    delivery::deliver(&s.store, None, None, &settings())?;
    let state = s.state()?;
    let keys: Vec<DedupKey> = state.outbox().into_iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(keys.len(), 6);
    s.store.append(
        Event::SendStarted {
            send_id: state.next_send_id,
            keys,
            single: false,
        },
        Durability::Sync,
    )?;
    let mut server = Server::default();
    if server_got_it {
        for i in 0..3 {
            for (role, text) in [("user", "prompt"), ("assistant", "answer")] {
                server.held.push(HeldMessage {
                    role: role.into(),
                    content: format!("{text} {i}"),
                    turn_id: Some(turn_id(i)),
                });
            }
        }
    }
    let t = Fake::new(server);
    let r = deliver(&s, &t, &settings())?;
    assert_eq!(
        t.calls().first(),
        Some(&Call::Held),
        "reconciles before anything else"
    );
    if server_got_it {
        assert_eq!(
            (r.reconciled_present, r.reconciled_absent, r.requests),
            (6, 0, 0)
        );
    } else {
        assert_eq!(
            (r.reconciled_present, r.reconciled_absent, r.requests),
            (0, 6, 1)
        );
    }
    assert_exactly_once(&t, 3, &[]);
    assert_settled(&s.state()?);
    Ok(())
}

/// A second worker while the first holds the lock leaves at once, touching
/// nothing; the holder's events are delivered by the holder.
#[test]
fn second_worker_leaves_while_the_lock_is_held() -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..2)?;
    let t = Fake::new(Server::default());
    let ctx = Ctx {
        transport: &t,
        settings: settings(),
    };
    let lock = FileLock::try_exclusive(&ov_engine::paths::worker_lock(&s.path), Duration::ZERO)?
        .ok_or("lock taken")?;
    let events = s.state()?.events;
    let started = Instant::now();
    let reports = delivery::run_worker(&s.store, &ctx, WorkerReason::Stop, Duration::ZERO)?;
    assert!(reports.is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "returned at once"
    );
    assert!(t.calls().is_empty());
    assert_eq!(s.state()?.events, events, "journal untouched");
    drop(lock);
    let reports = delivery::run_worker(&s.store, &ctx, WorkerReason::Stop, Duration::ZERO)?;
    assert_eq!(reports.len(), 1);
    assert_exactly_once(&t, 2, &[]);
    Ok(())
}

/// A Stop hook that writes while the worker sends (and whose own worker left
/// because the lock was taken) is picked up by the running worker.
#[test]
fn worker_picks_up_events_appended_while_it_runs() -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..2)?;
    let other = SessionStore::open(&s.path)?;
    let t = Fake::new(Server::default());
    let other_ref = &other;
    *t.during_send.borrow_mut() = Some(Box::new(move || {
        add_turns(other_ref, 2..3).expect("hook append");
    }));
    let ctx = Ctx {
        transport: &t,
        settings: settings(),
    };
    let reports = delivery::run_worker(&s.store, &ctx, WorkerReason::Stop, Duration::ZERO)?;
    assert!(reports.len() >= 2, "went round again: {reports:?}");
    assert_exactly_once(&t, 3, &[]);
    assert_settled(&s.state()?);
    Ok(())
}

/// Closing a session commits it; resuming it does not: with a commit threshold not yet
/// reached, a resume's drain sends but leaves the commit to the threshold, a SessionEnd
/// commits, and both close open turns.
#[test]
fn session_end_commits_and_a_resume_does_not() -> TestResult {
    let s = Session::new()?;
    add_turns(&s.store, 0..1)?;
    // An open turn (prompt, no Stop): closed by both.
    s.store.append_all(
        vec![hook(HookKind::PromptSubmit, &turn_id(1), "prompt 1")],
        Durability::Buffered,
    )?;
    let t = Fake::new(Server::default());
    let mut high = settings();
    high.commit_token_threshold = 1_000_000;
    let ctx = Ctx {
        transport: &t,
        settings: high,
    };
    let reports = delivery::run_worker(&s.store, &ctx, WorkerReason::Resume, Duration::ZERO)?;
    assert!(
        reports.iter().all(|r| !r.committed),
        "a resume never forces a commit"
    );
    let state = s.state()?;
    assert_eq!(state.commit.commits_ok, 0);
    assert_eq!(
        state.commit.uncommitted(),
        3,
        "two messages of turn 0, the prompt of turn 1"
    );
    assert_eq!(t.count(|c| matches!(c, Call::Commit)), 0);

    add_turns(&s.store, 2..3)?;
    let reports = delivery::run_worker(&s.store, &ctx, WorkerReason::SessionEnd, Duration::ZERO)?;
    assert!(reports.iter().any(|r| r.committed), "SessionEnd commits");
    let state = s.state()?;
    assert_eq!(state.commit.uncommitted(), 0);
    assert_settled(&state);
    Ok(())
}
