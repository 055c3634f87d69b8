//! What the server answers, against the real OpenViking server: session ids that differ
//! only in characters a file name cannot hold keep distinct journals and remote sessions;
//! a key written into the server URL is used and never reaches the journal or the log;
//! each commit's trace id is journaled.

use crate::common;

use common::{assert_exactly_once, Env, Session};

/// `X/x`, `X x` and `X-x` are three sessions: three journals, three remote sessions, each
/// holding its own turn exactly once.
#[test]
fn ids_that_sanitise_alike_stay_distinct() {
    let Some(url) = common::server_url() else {
        return;
    };
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "0");
    let base = common::unique_session();
    let ids = [
        format!("{base}/x"),
        format!("{base} x"),
        format!("{base}-x"),
    ];
    let mut sessions = Vec::new();
    for sid in &ids {
        let mut s = Session::new(&env);
        s.sid = sid.clone();
        s.turn("distinct", &[]);
        s.wait_worker();
        sessions.push(s);
    }
    let dirs: std::collections::BTreeSet<_> = ids.iter().map(|i| env.journal_dir(i)).collect();
    assert_eq!(dirs.len(), 3, "{dirs:?}");
    let remotes: std::collections::BTreeSet<_> = sessions.iter().map(Session::remote).collect();
    assert_eq!(remotes.len(), 3, "{remotes:?}");
    for s in &sessions {
        assert_eq!(
            env.state_of(&s.sid).session_id.as_deref(),
            Some(s.sid.as_str())
        );
        assert_exactly_once(&url, &s.remote(), &s.turns);
    }
}

fn files_contain(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle))
            {
                hits.push(p.display().to_string());
            }
        }
    }
    hits
}

/// `OPENVIKING_URL=http://KEY@host`: delivery works (the dev server ignores the key) and
/// neither the journal nor the log holds the key, also when the server is unreachable
/// (error texts name the URL).
#[test]
fn a_key_in_the_url_never_reaches_journal_or_log() {
    let Some(url) = common::server_url() else {
        return;
    };
    const KEY: &str = "url-userinfo-secret-9f1c";
    let with_key = url.replacen("://", &format!("://{KEY}@"), 1);
    let mut env = Env::with_url(&with_key);
    env.set("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "0");
    let mut s = Session::new(&env);
    s.turn("userinfo", &[]);
    s.wait_worker();
    assert_exactly_once(&url, &s.remote(), &s.turns);

    let down = format!("http://user:{KEY}@127.0.0.1:{}", common::closed_port());
    let mut env2 = Env::with_url(&down);
    env2.set("OVHOOK_NO_DETACH", "1");
    let mut s2 = Session::new(&env2);
    s2.turn("userinfo-down", &[]);
    let evs = env2.events(&s2.sid);
    assert!(
        common::count(&evs, |e| matches!(
            e,
            ov_engine::event::Event::ServerUnreachable { .. }
        )) > 0,
        "the closed port was tried"
    );
    for e in [&env, &env2] {
        let hits = files_contain(&e.state(), KEY.as_bytes());
        assert!(hits.is_empty(), "key found in {hits:?}");
    }
}

/// Every acknowledged commit is followed by the server's trace id of its reply.
#[test]
fn each_commit_journals_the_servers_trace_id() {
    use ov_engine::event::Event;
    let Some(url) = common::server_url() else {
        return;
    };
    let mut env = Env::with_url(&url);
    env.set("OPENVIKING_COMMIT_TOKEN_THRESHOLD", "0");
    let mut s = Session::new(&env);
    for i in 0..2 {
        s.turn(&format!("traced{i}"), &[]);
        s.wait_worker();
    }
    let evs = env.events(&s.sid);
    let acked: Vec<u64> = evs
        .iter()
        .filter_map(|e| match &e.event {
            Event::CommitAcked { commit_id, .. } => Some(*commit_id),
            _ => None,
        })
        .collect();
    let traced: Vec<(u64, String)> = evs
        .iter()
        .filter_map(|e| match &e.event {
            Event::CommitTraced {
                commit_id,
                trace_id,
            } => Some((*commit_id, trace_id.clone())),
            _ => None,
        })
        .collect();
    assert!(!acked.is_empty(), "no commit acknowledged");
    assert_eq!(
        traced.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        acked,
        "{traced:?}"
    );
    assert!(traced.iter().all(|(_, t)| !t.is_empty()), "{traced:?}");
}
