//! A Stop worker, after its own session, sends what other sessions left
//! unsent — without waiting for a drain (a later session start).

use crate::common;

use common::{assert_exactly_once, assert_settled, Env, Session};

#[test]
fn a_stop_worker_sends_other_sessions_leftovers() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = Env::with_url(&url);
    let closed = format!("http://127.0.0.1:{}", common::closed_port());
    // Session A works through an outage: both turns wait in its outbox.
    let mut a = Session::new(&env);
    for i in 0..2 {
        a.turn(&format!("outage{i}"), &[("OPENVIKING_URL", &closed)]);
        a.wait_worker();
    }
    assert_eq!(env.state_of(&a.sid).outbox().len(), 4);
    // Session B's next turn reaches the server; its worker then sweeps A.
    let mut b = Session::new(&env);
    b.turn("after", &[]);
    b.wait_worker();
    env.wait_for(&a.sid, "the sweep of A", |events| {
        events.iter().any(|e| {
            matches!(
                e.event,
                ov_engine::event::Event::WorkerStarted {
                    reason: ov_engine::event::WorkerReason::Sweep
                }
            )
        })
    });
    assert_exactly_once(&url, &a.remote(), &a.turns);
    assert_exactly_once(&url, &b.remote(), &b.turns);
    assert_settled(&env, &a.sid);
}
