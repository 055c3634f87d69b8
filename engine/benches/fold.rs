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
use ov_engine::event::Envelope;
use ov_engine::projector::State;
use ov_engine::store::SessionStore;

mod synthetic;

use synthetic::session;

fn main() {
    divan::main();
}

const ONE_MILLION: usize = 1_000_000;

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
