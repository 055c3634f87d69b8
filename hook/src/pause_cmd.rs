//! `ovhook pause`, `ovhook resume`, `ovhook status`: the user's switch for capture.
//!
//! ```text
//! ovhook pause  [--project | --session ID]   everything (default), this repository, one session
//! ovhook resume [--project | --session ID]
//! ovhook status                               whether capture is on here, and why not
//! ```
//!
//! While a scope is paused its hooks inject nothing, journal no content and refuse their turns:
//! those turns are never sent, even after resume ([`ov_engine::pause`]). Workers and drains
//! leave a paused session's unsent work where it is until resume.

use std::path::Path;

use anyhow::Context;
use ov_engine::pause::PauseScope;

use crate::cli::ScopeArgs;

/// The scope `args` name: `--project` (the current folder's repository), `--session ID`, or
/// everything.
fn scope(args: &ScopeArgs) -> anyhow::Result<PauseScope> {
    if args.project {
        let cwd = std::env::current_dir().context("could not read the current directory")?;
        return Ok(PauseScope::Project(ov_engine::config::project_slot(&cwd)));
    }
    Ok(match &args.session {
        Some(id) => PauseScope::Session(id.clone()),
        None => PauseScope::All,
    })
}

/// `ovhook pause [--project | --session ID]`.
pub fn run_pause(args: &ScopeArgs) -> anyhow::Result<i32> {
    let scope = scope(args)?;
    let root = ov_engine::paths::state_root();
    let now = ov_engine::store::now_ms();
    let fresh = ov_engine::pause::pause(&root, &scope, now)
        .with_context(|| format!("could not pause under {}", root.display()))?;
    let what = scope.describe();
    if fresh {
        println!("ovhook: capture paused ({what})");
    } else {
        println!("ovhook: capture was already paused ({what})");
    }
    println!(
        "  hooks inject nothing and keep no conversation; turns made while paused are never \
         sent, even after `ovhook resume{}`",
        flag_of(&scope)
    );
    Ok(0)
}

/// `ovhook resume [--project | --session ID]`.
pub fn run_resume(args: &ScopeArgs) -> anyhow::Result<i32> {
    let scope = scope(args)?;
    let root = ov_engine::paths::state_root();
    let was = ov_engine::pause::resume(&root, &scope)
        .with_context(|| format!("could not resume under {}", root.display()))?;
    let what = scope.describe();
    if was {
        println!("ovhook: capture resumed ({what}); turns made while it was paused stay unsent");
    } else {
        println!("ovhook: capture was not paused ({what})");
    }
    let still = ov_engine::pause::list(&root);
    if !still.is_empty() {
        println!("  still paused: {}", still.join(", "));
    }
    Ok(0)
}

fn flag_of(scope: &PauseScope) -> String {
    match scope {
        PauseScope::All => String::new(),
        PauseScope::Project(_) => " --project".to_owned(),
        PauseScope::Session(id) => format!(" --session {id}"),
    }
}

/// `ovhook status`: whether capture is on for the current directory's project, and why not.
pub fn run_status() -> anyhow::Result<i32> {
    let cwd = std::env::current_dir().context("could not read the current directory")?;
    let root = ov_engine::paths::state_root();
    let loaded =
        ov_engine::config::Config::load(&ov_engine::config::LoadContext::from_process(Some(&cwd)));
    for w in &loaded.warnings {
        println!("warn config: {w}");
    }
    let cfg = &loaded.config;
    println!("{}", capture_line(&root, &cwd, cfg));
    let paused = ov_engine::pause::list(&root);
    println!(
        "paused: {}",
        if paused.is_empty() {
            "nothing".to_owned()
        } else {
            paused.join(", ")
        }
    );
    let held: Vec<&str> = crate::harness::names()
        .into_iter()
        .filter(|h| crate::held::is_held(&root, h))
        .collect();
    if !held.is_empty() {
        println!(
            "uninstalled (nothing of their sessions is sent): {}",
            held.join(", ")
        );
    }
    println!(
        "server: {}",
        cfg.server
            .as_ref()
            .map_or("off (journal only)".to_owned(), |s| s.url.to_string())
    );
    Ok(0)
}

/// `capture: on|off … for project P (cwd)`.
fn capture_line(root: &Path, cwd: &Path, cfg: &ov_engine::config::Config) -> String {
    let project = &cfg.workspace.slot;
    let here = format!("for project {project} ({})", cwd.display());
    let cwd_text = cwd.to_string_lossy();
    let off = if let Some(scope) = ov_engine::pause::paused(root, "", || project.clone()) {
        Some(format!(
            "paused ({}; `ovhook resume{}` turns it back on)",
            scope.describe(),
            flag_of(&scope)
        ))
    } else if !cfg.memory_enabled {
        Some("memory.enabled is false".to_owned())
    } else if cfg.bypass.matches("", &cwd_text) {
        Some("bypassed (bypass.session or bypass.patterns)".to_owned())
    } else if !cfg.capture.enabled {
        Some("capture.enabled is false".to_owned())
    } else {
        None
    };
    match off {
        Some(why) => format!("capture: off {here}: {why}"),
        None => format!("capture: on {here}"),
    }
}
