//! `ovhook drain`: finishes all unfinished work of every session — unsent
//! messages, in-doubt sends (reconciled first), commits, and turns a hook saw
//! but no Stop captured (their rollout is read). SessionStart starts the same
//! work detached (`--quiet`).

use ov_engine::event::WorkerReason;

/// `ovhook drain [--quiet]`.
pub fn run(args: &[String]) -> anyhow::Result<i32> {
    crate::logfile::init(false);
    let quiet = args.iter().any(|a| a == "--quiet");
    if let Some(bad) = args.iter().find(|a| a.as_str() != "--quiet") {
        anyhow::bail!("drain: unexpected argument '{bad}'");
    }
    let root = ov_engine::paths::state_root();
    let mut failed = 0;
    let dirs = ov_engine::store::session_dirs(&root);
    for dir in &dirs {
        let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Err(e) = crate::worker::run_session(&root, name, WorkerReason::Drain) {
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
        for dir in &dirs {
            if let Ok(store) = ov_engine::store::SessionStore::open(dir) {
                if let Ok(f) = store.fold() {
                    pending += f.state.outbox().len() + f.state.sends.len();
                    aside += f.state.set_aside().len();
                }
            }
        }
        println!(
            "drained {} session(s): {pending} message(s) still pending, {aside} set aside{}",
            dirs.len(),
            if failed > 0 {
                format!(", {failed} failed")
            } else {
                String::new()
            }
        );
    }
    Ok(i32::from(failed > 0))
}
