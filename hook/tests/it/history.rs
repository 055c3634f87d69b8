//! History that was lost or pruned never makes a delivered turn look new: a damaged snapshot
//! after `ovreplay compact` (the state it held is gone, the events behind it too) resends
//! nothing, against the real OpenViking server.

use crate::common;

use std::time::Duration;

use common::{assert_exactly_once, assert_settled, Env, Session};
use ov_engine::event::Event;
use ov_engine::store::SessionStore;

fn env(url: &str) -> Env {
    let mut e = Env::with_url(url);
    e.set("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "0");
    e.set("OPENVIKING_TIMEOUT_MS", "30000");
    e
}

/// What `ovreplay compact` does: roll to a snapshot, remove every segment before it.
fn compact(env: &Env, sid: &str) {
    let store =
        SessionStore::open_with(&env.journal_dir(sid), Duration::from_secs(10)).expect("open");
    let snap = store.compact().expect("compact");
    store
        .journal()
        .remove_segments_before(snap.segment)
        .expect("remove old segments");
}

/// Inverts a byte of the snapshot's payload (the first frame of the newest segment).
fn flip_snapshot(env: &Env, sid: &str) {
    let dir = env.journal_dir(sid);
    let mut segs: Vec<_> = std::fs::read_dir(&dir)
        .expect("ls")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| ov_journal::segment_id(p).is_some())
        .collect();
    segs.sort();
    let seg = segs.last().expect("segment");
    let mut b = std::fs::read(seg).expect("read");
    let at = (ov_journal::SEGMENT_HEADER_LEN + ov_journal::FRAME_HEADER_LEN + 8) as usize;
    b[at] ^= 0xff;
    std::fs::write(seg, &b).expect("write");
}

/// Six delivered turns, `ovreplay compact`, one flipped byte in the snapshot: the state and
/// every event behind it are gone (the transcript's path and position with them). A drain
/// runs first, knowing nothing of the session, then the next turn's Stop worker reads the
/// transcript from its first byte: the six delivered turns are not sent again, the new one
/// is sent once.
#[test]
fn a_damaged_snapshot_resends_no_delivered_turn() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = env(&url);
    let mut s = Session::new(&env);
    for i in 0..6 {
        s.turn(&format!("snap{i}"), &[]);
        s.wait_worker();
    }
    assert_exactly_once(&url, &s.remote(), &s.turns);
    compact(&env, &s.sid);
    flip_snapshot(&env, &s.sid);
    env.drain();
    assert_exactly_once(&url, &s.remote(), &s.turns);
    s.turn("after-damage", &[]);
    s.wait_worker();
    env.drain();
    assert_exactly_once(&url, &s.remote(), &s.turns);
    assert_settled(&env, &s.sid);
    let evs = env.events(&s.sid);
    assert!(
        common::count(&evs, |e| matches!(e, Event::JournalDamaged { .. })) >= 1,
        "the damage is journaled"
    );
}

/// A finished session's whole journal is pruned after the retention (judged here as if 15
/// days had passed); the session then comes back (resumed) and its transcript is read again
/// from its first byte by a new journal that knows nothing: the three delivered turns are not
/// sent again, the new one is sent once.
#[test]
fn a_pruned_journal_resends_nothing_when_its_session_comes_back() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = env(&url);
    let mut s = Session::new(&env);
    for i in 0..3 {
        s.turn(&format!("pruned{i}"), &[]);
        s.wait_worker();
    }
    assert_exactly_once(&url, &s.remote(), &s.turns);
    let dir = env.journal_dir(&s.sid);
    let later = ov_engine::retention::now_ms() + 15 * ov_engine::retention::DAY_MS;
    let bytes = ov_engine::retention::prune_journal(&dir, 14, later).expect("prune");
    assert!(bytes.is_some(), "a finished session's journal is pruned");
    assert!(!dir.exists());
    s.turn("back", &[]);
    s.wait_worker();
    env.drain();
    assert_exactly_once(&url, &s.remote(), &s.turns);
    assert_settled(&env, &s.sid);
    assert!(!ov_engine::retention::tombstone(&dir).exists());
}
