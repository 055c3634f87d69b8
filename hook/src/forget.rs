//! `ovhook forget --session ID [--turn ID]`: take a session (or one turn) back.
//!
//! * `--session ID`: deletes the session from the server (`DELETE /api/v1/sessions/{id}`: its
//!   messages and archives) and journals [`Event::Forgotten`]: nothing of the session is ever
//!   sent again, what was pending is set aside, its transcript is no longer read. Memories the
//!   server already extracted from its commits belong to the user, not to the session: they
//!   stay, and the output says so.
//! * `--turn ID`: journals [`Event::Forgotten`] for the turn: it is never sent. OpenViking 0.5.2
//!   has no way to delete one message of a session, so messages of the turn already on the
//!   server stay there; the output says how many, and that forgetting the session removes them.
//!
//! The session's worker lock is held while the marker is journaled and the session deleted, so
//! no worker sends it meanwhile. Without a server (or when it does not answer) the marker is
//! still journaled and the output says the remote session is still there.

use std::time::Duration;

use anyhow::{bail, Context};
use ov_engine::event::Event;
use ov_engine::projector::{MessageStatus, State};
use ov_engine::store::SessionStore;
use ov_engine::turn::{DedupKey, Role};
use ov_journal::{Durability, FileLock};

use crate::cli::ForgetArgs;

/// How long `forget` waits for a worker that is sending the session.
const LOCK_WAIT: Duration = Duration::from_secs(15);

/// `ovhook forget`.
pub fn run(args: &ForgetArgs) -> anyhow::Result<i32> {
    crate::logfile::init(false);
    let root = ov_engine::paths::state_root();
    let dir =
        ov_engine::paths::journals_dir(&root).join(crate::worker::journal_dir_name(&args.session));
    if !ov_journal::is_journal(&dir) {
        bail!(
            "no journal for session {} under {}: nothing of it was captured here",
            args.session,
            ov_engine::paths::journals_dir(&root).display()
        );
    }
    let lock_path = ov_engine::paths::worker_lock(&dir);
    let Some(_lock) = FileLock::try_exclusive(&lock_path, LOCK_WAIT)
        .with_context(|| format!("could not lock {}", lock_path.display()))?
    else {
        bail!(
            "a worker has been sending session {} for {}s: try again when it is done",
            args.session,
            LOCK_WAIT.as_secs()
        );
    };
    let store = SessionStore::open_with(&dir, Duration::from_secs(5))
        .with_context(|| format!("could not open {}", dir.display()))?;
    let state = store.fold()?.state;
    match &args.turn {
        Some(turn) => forget_turn(&store, &state, turn),
        None => forget_session(&store, &state, &args.session),
    }
}

fn forget_turn(store: &SessionStore, state: &State, turn: &str) -> anyhow::Result<i32> {
    let of_turn: Vec<_> = state
        .messages
        .values()
        .filter(|r| r.turn_id.as_deref() == Some(turn))
        .collect();
    // Delivered messages whose records were let go: only their identities are kept.
    let let_go = [Role::User, Role::Assistant]
        .into_iter()
        .filter(|r| {
            let key = DedupKey::for_turn(turn, *r);
            !state.messages.contains_key(&key) && state.is_delivered(&key)
        })
        .count();
    let known = !of_turn.is_empty()
        || let_go > 0
        || state.turns.contains_key(turn)
        || state.book.consent_of(turn).is_some();
    if !known {
        bail!("session has no turn {turn} (see `ovreplay sessions` and `ovreplay dump`)");
    }
    let on_server = of_turn
        .iter()
        .filter(|r| matches!(r.status, MessageStatus::Acked))
        .count()
        + let_go;
    let in_doubt = of_turn
        .iter()
        .filter(|r| matches!(r.status, MessageStatus::InFlight { .. }))
        .count();
    let pending = of_turn
        .iter()
        .filter(|r| matches!(r.status, MessageStatus::Pending))
        .count();
    let note = format!(
        "turn {turn}: {pending} pending message(s) withdrawn; {on_server} already on the server \
         stay (OpenViking 0.5.2 cannot delete one turn)"
    );
    store.append(
        Event::Forgotten {
            turn_id: Some(turn.to_owned()),
            note: note.clone(),
        },
        Durability::Sync,
    )?;
    println!("ovhook: forgot turn {turn}: it is never sent from now on");
    println!("  withdrawn: {pending} message(s) that were waiting to be sent");
    if in_doubt > 0 {
        println!(
            "  {in_doubt} message(s) of it were being sent when a worker stopped: the server may \
             hold them"
        );
    }
    if on_server + in_doubt > 0 {
        println!(
            "  NOT removed from the server: {} message(s) of this turn. OpenViking 0.5.2 has no \
             way to delete one message of a session; to remove them, forget the whole session: \
             ovhook forget --session {}",
            on_server + in_doubt,
            state.session_id.as_deref().unwrap_or("<id>")
        );
    } else {
        println!("  nothing of it had reached the server");
    }
    Ok(0)
}

fn forget_session(store: &SessionStore, state: &State, session: &str) -> anyhow::Result<i32> {
    let native = state.session_id.as_deref().unwrap_or(session);
    let harness = crate::harness::by_name(state.harness.as_deref());
    let remote = harness.remote_session_id(native);
    let acked = state.commit.acked_total;
    let pending = state.outbox().len();
    let commits = state.commit.commits_ok;
    store.append(
        Event::Forgotten {
            turn_id: None,
            note: format!("session {remote}: forgotten by the user"),
        },
        Durability::Sync,
    )?;
    println!("ovhook: forgot session {native}: nothing of it is sent from now on");
    println!("  withdrawn: {pending} message(s) that were waiting to be sent");
    let cwd = state.cwd.as_deref().unwrap_or("/");
    let cfg = crate::config::load_config(cwd);
    let client = match ov_engine::client::client_for(&cfg) {
        None => {
            println!(
                "  NOT removed from the server: no server is configured (url off). When one is, \
                 run this again to delete {remote}"
            );
            return Ok(1);
        }
        Some(c) => c.context("could not build the OpenViking client")?,
    };
    match client.delete_session(&remote) {
        Ok(true) => {
            println!(
                "  removed from the server ({}): session {remote}, its {acked} message(s) we had \
                 sent and the archives of its {commits} commit(s)",
                client.base_url()
            );
            if commits > 0 {
                println!(
                    "  kept by the server: memories it had already extracted from those commits \
                     (they are yours, not the session's; review them with OpenViking's own tools)"
                );
            }
            Ok(0)
        }
        Ok(false) => {
            println!(
                "  the server ({}) holds no session {remote}: nothing of it had been sent",
                client.base_url()
            );
            Ok(0)
        }
        Err(e) => {
            println!(
                "  NOT removed from the server ({}): {e}. Run this again when it answers to \
                 delete {remote}",
                client.base_url()
            );
            Ok(1)
        }
    }
}
