//! Stop → detached worker → the real OpenViking server, exactly once, with workers
//! killed at every failpoint, killed with `kill -9` at random moments, and with the
//! server unreachable for part of a session. What the server holds is read back with
//! `Client::session_messages` (live and archived).

use crate::common;

use std::time::Duration;

use common::{assert_exactly_once, assert_settled, Env, Session, Turn};
use ov_engine::event::Event;

/// Every worker commits (the commit path and its failpoint are on the way of every turn).
/// These tests are about exactly-once, not latency: a generous request timeout keeps a
/// loaded machine's slow embedding from turning a send into an in-doubt one.
fn env(url: &str) -> Env {
    let mut e = Env::with_url(url);
    e.set("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "0");
    e.set("OPENVIKING_TIMEOUT_MS", "30000");
    e
}

/// Three turns fired as ZCode fires them; each Stop's worker alone delivers its turn.
#[test]
fn three_turns_each_delivered_once_by_their_stop_worker() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = env(&url);
    let mut s = Session::new(&env);
    for i in 0..3 {
        s.turn(&format!("plain{i}"), &[]);
        s.wait_worker();
        assert_settled(&env, &s.sid);
        let state = env.state_of(&s.sid);
        assert_eq!(state.cursor(), Some(s.turns[i].id.as_str()), "turn {i}");
    }
    assert_exactly_once(&url, &s.remote(), &s.turns);
    // A later drain finds nothing to send.
    env.drain();
    assert_exactly_once(&url, &s.remote(), &s.turns);
    let sends = common::count(&env.events(&s.sid), |e| {
        matches!(e, Event::SendStarted { .. })
    });
    assert_eq!(sends, 3, "one batch per turn");
}

/// The last event the killed worker wrote, for each failpoint.
fn last_event_at(point: &str) -> &'static str {
    match point {
        "after-stop-journaled" => "worker-started",
        "after-rollout-read" => "rollout-read",
        "after-plan" => "planned",
        "after-request-sent" | "after-reply-before-outcome" => "send-started",
        "after-commit-sent" => "commit-started",
        other => panic!("unknown failpoint {other}"),
    }
}

/// For each failpoint: a turn whose worker SIGKILLs itself there, then a normal turn,
/// then `ovhook drain`: both turns on the server exactly once, the journal settled.
#[test]
fn every_failpoint_then_next_turn_and_drain_delivers_exactly_once() {
    let Some(url) = common::server_url() else {
        return;
    };
    for point in ov_engine::failpoint::POINTS {
        let env = env(&url);
        let mut s = Session::new(&env);
        s.turn(&format!("{point}-killed"), &[("OVHOOK_FAILPOINT", point)]);
        s.wait_worker();
        let evs = env.events(&s.sid);
        let last = evs.last().expect("events").event.kind_name();
        assert_eq!(
            last,
            last_event_at(point),
            "{point}: the worker did not die there"
        );
        s.turn(&format!("{point}-next"), &[]);
        s.wait_worker();
        env.drain();
        assert_exactly_once(&url, &s.remote(), &s.turns);
        assert_settled(&env, &s.sid);
        let state = env.state_of(&s.sid);
        assert_eq!(state.cursor(), Some(s.turns[1].id.as_str()), "{point}");
        assert!(
            state.commit.in_flight.is_none(),
            "{point}: commit in flight"
        );
    }
}

/// Tiny deterministic generator (the seed is printed so a failure can be replayed).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// Pids of the `ovhook worker` / `ovhook drain` processes of this test's state root.
fn worker_pids(env: &Env) -> Vec<i32> {
    let needle = env.state();
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(p.path().join("cmdline")) else {
            continue;
        };
        if !cmd.windows(b"worker".len()).any(|w| w == b"worker") {
            continue;
        }
        // Only workers started for this test's HOME (their environment names it).
        let Ok(environ) = std::fs::read(p.path().join("environ")) else {
            continue;
        };
        let want = format!("OVHOOK_STATE_DIR={}", needle.display());
        if environ.split(|b| *b == 0).any(|kv| kv == want.as_bytes()) {
            out.push(pid);
        }
    }
    out
}

/// Multi-turn sessions whose Stop workers are killed with a real `kill -9` at random
/// moments; a drain at the end; every message on the server exactly once.
/// `OVHOOK_KILL_ITERATIONS` (default 3) sessions of 4 turns; `OVHOOK_KILL_SEED` replays.
#[test]
fn random_kill_9_of_workers_then_drain_is_exactly_once() {
    let Some(url) = common::server_url() else {
        return;
    };
    let iterations: usize = std::env::var("OVHOOK_KILL_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let seed: u64 = std::env::var("OVHOOK_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(ov_engine::store::now_ms);
    eprintln!("OVHOOK_KILL_SEED={seed}");
    let mut rng = Lcg(seed);
    let mut kills = 0;
    for it in 0..iterations {
        let env = env(&url);
        let mut s = Session::new(&env);
        for t in 0..4 {
            s.turn(&format!("kill{it}-{t}"), &[]);
            // Kill somewhere in the first ~60 ms of the worker's life.
            let delay = rng.next() % 60;
            std::thread::sleep(Duration::from_millis(delay));
            for pid in worker_pids(&env) {
                // SAFETY: kill(2) on a pid we just read; it is our own detached child
                // (its environment names this test's state root).
                if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
                    kills += 1;
                }
            }
            common::wait_all_idle(&env);
        }
        env.drain();
        assert_exactly_once(&url, &s.remote(), &s.turns);
        assert_settled(&env, &s.sid);
    }
    eprintln!("{kills} worker(s) killed");
}

/// The server is unreachable for two turns in the middle of a session, then back: the
/// next Stop worker respects the back-off, a drain delivers everything, once.
#[test]
fn server_unreachable_for_two_turns_then_drain_delivers_once() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = env(&url);
    let closed = format!("http://127.0.0.1:{}", common::closed_port());
    let mut s = Session::new(&env);
    s.turn("up-before", &[]);
    s.wait_worker();
    for i in 0..2 {
        s.turn(&format!("down{i}"), &[("OPENVIKING_URL", &closed)]);
        s.wait_worker();
    }
    let state = env.state_of(&s.sid);
    assert_eq!(
        state.outbox().len(),
        4,
        "the two down turns wait in the outbox"
    );
    assert!(
        common::count(&env.events(&s.sid), |e| matches!(
            e,
            Event::ServerUnreachable { .. }
        )) >= 1
    );
    s.turn("up-after", &[]);
    s.wait_worker();
    env.drain();
    assert_exactly_once(&url, &s.remote(), &s.turns);
    assert_settled(&env, &s.sid);
}

/// Flips one byte of the journal's segment `which` (first or last file) at `at(len)`.
fn flip_journal_byte(env: &Env, sid: &str, last: bool, at: impl Fn(usize) -> usize) {
    let dir = env.journal_dir(sid);
    let mut segs: Vec<_> = std::fs::read_dir(&dir)
        .expect("ls")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ovj"))
        .collect();
    segs.sort();
    let seg = if last { segs.last() } else { segs.first() }.expect("segment");
    let mut b = std::fs::read(seg).expect("read");
    let i = at(b.len());
    b[i] ^= 0x40;
    std::fs::write(seg, &b).expect("write");
}

/// One flipped byte costs no turn and sends none twice: in the first frame of a fully
/// delivered session, a drain finds the damage, reconciles everything with the server and
/// sends nothing again; in the middle of the active segment, the turns after it still reach
/// the server. Nothing is moved aside.
#[test]
fn a_flipped_byte_costs_no_turn_and_duplicates_nothing() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = env(&url);
    let mut s = Session::new(&env);
    for i in 0..3 {
        s.turn(&format!("flip{i}"), &[]);
        s.wait_worker();
    }
    assert_exactly_once(&url, &s.remote(), &s.turns);
    // The first frame starts at offset 32: flip a byte of its payload.
    flip_journal_byte(&env, &s.sid, false, |_| 32 + 20);
    env.drain();
    assert_exactly_once(&url, &s.remote(), &s.turns);
    let evs = env.events(&s.sid);
    assert_eq!(
        common::count(&evs, |e| matches!(e, Event::JournalDamaged { .. })),
        1
    );
    assert!(common::count(&evs, |e| matches!(e, Event::AllReconciled { .. })) >= 1);
    // The middle of the active segment, then a turn, then the record of that turn's Stop
    // itself, then one more turn.
    flip_journal_byte(&env, &s.sid, true, |len| len / 2);
    s.turn("after0", &[]);
    s.wait_worker();
    let records = env.records(&s.sid);
    let (stop_of_after0, _) = records
        .iter()
        .find(|(_, e)| {
            matches!(&e.event, Event::HookReceived(h)
                if h.kind == Some(ov_engine::event::HookKind::Stop)
                    && h.turn_id.as_deref() == Some(s.turns[3].id.as_str()))
        })
        .expect("the Stop of after0 is journaled");
    let last_segment = records.last().expect("events").0.segment;
    assert_eq!(
        stop_of_after0.segment, last_segment,
        "the Stop is in the active segment"
    );
    flip_journal_byte(&env, &s.sid, true, |_| stop_of_after0.offset as usize + 20);
    s.turn("after1", &[]);
    s.wait_worker();
    env.drain();
    assert_exactly_once(&url, &s.remote(), &s.turns);
    assert_settled(&env, &s.sid);
    let aside = std::fs::read_dir(env.journal_dir(&s.sid).parent().expect("parent"))
        .expect("ls")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .count();
    assert_eq!(aside, 0, "nothing moved aside");
}

/// An answer over the message limit (in the rollout and in the Stop payload) is set aside
/// with its reason, visible in the state; its prompt and the turns around it reach the
/// server once, and the session moves on.
#[test]
fn an_answer_over_the_message_limit_is_set_aside_and_the_session_moves_on() {
    let Some(url) = common::server_url() else {
        return;
    };
    let env = env(&url);
    let mut s = Session::new(&env);
    s.turn("before-huge", &[]);
    s.wait_worker();
    let mut huge = Turn::new("huge");
    huge.answer = "an answer far too long to keep. ".repeat((9 << 20) / 32) + "The end.";
    let huge_len = huge.answer.len() as u64;
    s.play(huge, &[]);
    s.wait_worker();
    s.turn("after-huge", &[]);
    s.wait_worker();
    env.drain();
    let mut expected = s.turns.clone();
    let huge = expected.remove(1);
    // Everything but the huge answer, once; the huge turn's prompt once.
    let held = common::client(&url)
        .session_messages(&s.remote())
        .expect("session messages");
    let of_huge: Vec<_> = held
        .iter()
        .filter(|m| m.turn_id.as_deref() == Some(huge.id.as_str()))
        .map(|m| (m.role.as_str(), m.content.as_str()))
        .collect();
    assert_eq!(of_huge, [("user", huge.prompt.as_str())]);
    let rest: Vec<_> = held
        .into_iter()
        .filter(|m| m.turn_id.as_deref() != Some(huge.id.as_str()))
        .collect();
    assert!(
        common::exactly_once_problems(&rest, &expected).is_empty(),
        "{:?}",
        common::exactly_once_problems(&rest, &expected)
    );
    let st = env.state_of(&s.sid);
    let aside: Vec<String> = st
        .messages
        .values()
        .filter_map(|m| match &m.status {
            ov_engine::projector::MessageStatus::SetAside { error, .. } => Some(error.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(aside[0].contains(&format!("{huge_len} bytes")), "{aside:?}");
    assert_settled(&env, &s.sid);
}
