//! `ovhook drain`: finishes all unfinished work of every session — unsent
//! messages, in-doubt sends (reconciled first), commits, and turns a hook saw
//! but no Stop captured (their rollout is read). SessionStart starts the same
//! work detached (`--quiet`).

use ov_engine::event::WorkerReason;

use crate::cli::DrainArgs;

/// `ovhook drain [--quiet] [--resumed <session>]`: `--resumed` names the session being
/// resumed, whose drain does not force a commit.
pub fn run(args: &DrainArgs) -> anyhow::Result<i32> {
    crate::logfile::init(false);
    let quiet = args.quiet;
    let resumed = args.resumed.as_deref().map(crate::worker::journal_dir_name);
    let root = ov_engine::paths::state_root();
    let mut failed = 0;
    let dirs = ov_engine::store::session_dirs(&root);
    for dir in &dirs {
        let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let reason = if resumed.as_deref() == Some(name) {
            WorkerReason::Resume
        } else {
            WorkerReason::Drain
        };
        if let Err(e) = crate::worker::run_session(&root, name, reason) {
            failed += 1;
            log::error!("drain {name}: {e:#}");
            if !quiet {
                eprintln!("ovhook drain: {name}: {e:#}");
            }
        }
    }
    if !quiet {
        let mut pending = 0;
        let mut aside = 0;
        let mut uncaptured = 0;
        for dir in &dirs {
            if let Ok(store) = ov_engine::store::SessionStore::open(dir) {
                if let Ok(f) = store.fold() {
                    pending += f.state.outbox().len() + f.state.sends.len();
                    aside += f.state.set_aside().len();
                    uncaptured += f.state.turns_uncaptured().len();
                }
            }
        }
        println!(
            "drained {} session(s): {pending} message(s) still pending, {aside} set aside{}{}",
            dirs.len(),
            if uncaptured > 0 {
                format!(
                    ", {uncaptured} turn(s) not captured (transcript unreadable or missing them: \
                     see `ovreplay sessions`)"
                )
            } else {
                String::new()
            },
            if failed > 0 {
                format!(", {failed} failed")
            } else {
                String::new()
            }
        );
    }
    Ok(i32::from(failed > 0))
}
