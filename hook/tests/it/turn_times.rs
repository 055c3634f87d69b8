//! Each message reaches the real server with the time its turn happened (`created_at`) and
//! its kind (`message_kind`), however late it is delivered: turns made while the server was
//! down are drained later and read back with their own times, not the drain's.

use std::collections::BTreeMap;
use std::time::Duration;

use ov_engine::event::{Event, HookKind};
use ov_engine::time::format_ms;

use crate::common::{client, closed_port, server_url, Env, Session};

/// The time each hook of a turn fired, as journaled: `(turn id, kind) -> at_ms`.
fn hook_times(env: &Env, sid: &str) -> BTreeMap<(String, HookKind), u64> {
    let mut out = BTreeMap::new();
    for e in env.events(sid) {
        if let Event::HookReceived(h) = &e.event {
            if let (Some(kind), Some(turn)) = (h.kind, h.turn_id.clone()) {
                out.entry((turn, kind)).or_insert(e.at_ms);
            }
        }
    }
    out
}

#[test]
fn turns_made_while_the_server_was_down_keep_their_own_times() {
    let Some(url) = server_url() else { return };
    let mut env = Env::with_url(&format!("http://127.0.0.1:{}", closed_port()));
    let mut s = Session::new(&env);
    s.turn("offline one", &[]);
    s.wait_worker();
    s.turn("offline two", &[]);
    s.wait_worker();
    let sid = s.sid.clone();
    let remote = s.remote();
    let turns = s.turns.clone();
    let times = hook_times(&env, &sid);
    assert_eq!(
        env.state_of(&sid).outbox().len(),
        4,
        "nothing reached a closed port"
    );
    // The outage lasts: the drain happens well after the turns.
    std::thread::sleep(Duration::from_millis(1500));
    env.set("OPENVIKING_URL", &url);
    env.drain();
    let drained_at = env
        .events(&sid)
        .iter()
        .rev()
        .find(|e| matches!(e.event, Event::SendAcked { .. }))
        .map(|e| e.at_ms)
        .expect("the drain sent the turns");
    crate::common::assert_exactly_once(&url, &remote, &turns);
    let held = client(&url).session_messages(&remote).expect("read back");
    for t in &turns {
        for (role, kind, hook) in [
            ("user", "user_query", HookKind::PromptSubmit),
            ("assistant", "assistant_step", HookKind::Stop),
        ] {
            let m = held
                .iter()
                .find(|m| m.role == role && m.turn_id.as_deref() == Some(t.id.as_str()))
                .expect("held");
            let at = times[&(t.id.clone(), hook)];
            assert!(at + 1000 < drained_at, "the turn happened before the drain");
            assert_eq!(
                m.created_at.as_deref(),
                Some(format_ms(at).as_str()),
                "{role} of {} carries its hook's time",
                t.id
            );
            assert_eq!(m.message_kind.as_deref(), Some(kind));
        }
    }
}
