//! Benchmarks of the projector fold: in memory, through the store (decode +
//! apply), and `SessionStore::fold` from a snapshot vs. from the start.
//!
//! Input: a synthetic session journal, 7 events per turn (prompt, pre-tool,
//! stop, rollout read, plan of 2 messages, send started, send acked).
//!
//! ```sh
//! cargo bench -p ov-engine --no-default-features --bench fold
//! ```
#![expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]

use std::sync::OnceLock;

use ov_engine::codec;
use ov_engine::event::{Envelope, Event, HookKind, HookReceived, PlannedMessage};
use ov_engine::projector::State;
use ov_engine::store::SessionStore;
use ov_engine::turn::{DedupKey, FileIdentity, Role, RolloutChunk, TurnFragment};

fn main() {
    divan::main();
}

const ONE_MILLION: usize = 1_000_000;

fn hook(kind: HookKind, turn: &str, text: Option<&str>) -> Event {
    Event::HookReceived(HookReceived {
        kind: Some(kind),
        harness: "zcode".into(),
        session_id: Some("sess_bench".into()),
        turn_id: Some(turn.to_owned()),
        cwd: Some("/home/u/project".into()),
        prompt: (kind == HookKind::PromptSubmit).then(|| text.unwrap_or("").to_owned()),
        response_text: (kind == HookKind::Stop).then(|| text.unwrap_or("").to_owned()),
        tool_name: (kind == HookKind::PreToolUse).then(|| "Bash".to_owned()),
        raw_len: 300,
        ..HookReceived::default()
    })
}

/// `n` events of a plausible session.
fn session(n: usize) -> Vec<Envelope> {
    let mut out = Vec::with_capacity(n + 8);
    let mut at = 1_800_000_000_000u64;
    let mut offset = 0u64;
    let mut i = 0usize;
    while out.len() < n {
        let t = format!("turn_{i:08}");
        let prompt = format!("Task {i}: change the module and run the checks.");
        let answer = format!("Done with task {i}: the module is changed and the checks pass.");
        let mut push = |event: Event| {
            at += 3;
            out.push(Envelope {
                at_ms: at,
                pid: 4242,
                event,
            });
        };
        push(hook(HookKind::PromptSubmit, &t, Some(&prompt)));
        push(hook(HookKind::PreToolUse, &t, None));
        push(hook(HookKind::Stop, &t, Some(&answer)));
        push(Event::RolloutRead {
            path: "/home/u/.zcode/cli/rollout/model-io-sess_bench.jsonl".into(),
            chunk: RolloutChunk {
                identity: FileIdentity { dev: 1, ino: 2 },
                start: offset,
                end: offset + 4000,
                file_len: offset + 4000,
                rescanned: false,
                fragments: vec![TurnFragment {
                    turn_id: t.clone(),
                    prompt: Some(prompt.clone()),
                    final_text: Some(answer.clone()),
                    last_text: Some(answer.clone()),
                    finished: true,
                    interrupted: false,
                    calls: 2,
                    superseded: false,
                    ..TurnFragment::default()
                }],
                skipped_lines: 0,
                bad_lines: 0,
            },
        });
        offset += 4000;
        let messages: Vec<PlannedMessage> = [(Role::User, &prompt), (Role::Assistant, &answer)]
            .into_iter()
            .map(|(role, text)| PlannedMessage {
                key: DedupKey::for_turn(&t, role),
                turn_id: Some(t.clone()),
                role,
                content: text.clone(),
                raw_len: text.len() as u64,
                interrupted: false,
            })
            .collect();
        let keys = messages.iter().map(|m| m.key.clone()).collect();
        push(Event::MessagesPlanned { messages });
        push(Event::SendStarted {
            send_id: i as u64,
            keys,
            single: false,
        });
        push(Event::SendAcked { send_id: i as u64 });
        i += 1;
    }
    out.truncate(n);
    out
}

fn million() -> &'static [Envelope] {
    static EVENTS: OnceLock<Vec<Envelope>> = OnceLock::new();
    EVENTS.get_or_init(|| session(ONE_MILLION))
}

/// Keeps the temp dir alive with the store.
struct Journal {
    _dir: tempfile::TempDir,
    store: SessionStore,
}

fn journal_of(events: &[Envelope], snapshot_before_last: Option<usize>) -> Journal {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SessionStore::open(&dir.path().join("journals").join("bench")).expect("open");
    let split = snapshot_before_last.map_or(events.len(), |n| events.len() - n);
    let mut buf = Vec::new();
    let append = |evs: &[Envelope], buf: &mut Vec<u8>| {
        let mut w = store.journal().writer().expect("writer");
        for e in evs {
            codec::encode_event(e, buf).expect("encode");
            w.append(buf).expect("append");
        }
        w.flush().expect("flush");
    };
    append(&events[..split], &mut buf);
    if snapshot_before_last.is_some() {
        store.compact().expect("compact");
    }
    append(&events[split..], &mut buf);
    Journal { _dir: dir, store }
}

fn million_journal() -> &'static Journal {
    static J: OnceLock<Journal> = OnceLock::new();
    J.get_or_init(|| journal_of(million(), None))
}

/// `State::fold` of 1 million events already in memory.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn fold_1m_events_in_memory(b: divan::Bencher) {
    let events = million();
    b.counter(divan::counter::ItemsCount::new(events.len()))
        .bench(|| State::fold(divan::black_box(events)));
}

/// `SessionStore::fold` of a journal of 1 million events (mmap read, crc,
/// decode, apply), no snapshot.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn fold_1m_events_through_store(b: divan::Bencher) {
    let j = million_journal();
    b.counter(divan::counter::ItemsCount::new(ONE_MILLION))
        .bench(|| j.store.fold().expect("fold").state.events);
}

const HISTORY: usize = 100_000;

/// A journal of 100 000 events compacted into a snapshot, then 1000 more.
#[divan::bench(sample_count = 20)]
fn store_fold_snapshot_then_1000(b: divan::Bencher) {
    static J: OnceLock<Journal> = OnceLock::new();
    let j = J.get_or_init(|| journal_of(&session(HISTORY + 1000), Some(1000)));
    b.bench(|| j.store.fold().expect("fold").state.events);
}

/// The same 101 000 events without a snapshot.
#[divan::bench(sample_count = 20)]
fn store_fold_no_snapshot(b: divan::Bencher) {
    static J: OnceLock<Journal> = OnceLock::new();
    let j = J.get_or_init(|| journal_of(&session(HISTORY + 1000), None));
    b.bench(|| j.store.fold().expect("fold").state.events);
}
