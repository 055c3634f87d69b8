//! `ovhook doctor [--home DIR]`: one line per check, `ok|warn|FAIL <what>: <detail>`; exit 0
//! when nothing FAILs, 1 otherwise.
//!
//! Sections: for every harness, in [`crate::harness::ALL`]'s order, a line when the agent is
//! on this machine or ovhook is installed for it ([`presence::agent_line`]: found where, installed
//! or not, whether our hooks will run), then the harness's own lines
//! (`Harness::doctor_checks`: ZCode's config and placement, Claude Code's settings and plugin,
//! the other agents' files); what keeps turns from leaving (pause, uninstalled harnesses), the
//! configuration sources, the privacy rule, the server, then the journals.

use std::path::{Path, PathBuf};

use ov_engine::config::{self, LoadContext};

use crate::cli::DoctorArgs;
use crate::doctor::{self, journals, presence, privacy, server, Check, DoctorContext, Level};

/// `ovhook doctor`.
pub fn run(args: &DoctorArgs) -> anyhow::Result<i32> {
    let home = args.home.clone();
    let mut ctx = LoadContext::from_process(None);
    if let Some(h) = home {
        ctx.home = h;
    }
    let checks = collect(&ctx);
    for c in &checks {
        println!("{c}");
    }
    Ok(i32::from(checks.iter().any(|c| c.level == Level::Fail)))
}

/// Every check, in report order.
pub fn collect(ctx: &LoadContext) -> Vec<Check> {
    let state = state_root(ctx);
    let installed: Vec<&'static str> = crate::harness::ALL
        .iter()
        .filter(|h| h.installed(&ctx.home))
        .map(|h| h.name())
        .collect();
    let path_var = std::env::var_os("PATH");
    let harness_ctx = DoctorContext {
        home: &ctx.home,
        cwd: &ctx.cwd,
        state: &state,
        path_var: path_var.as_deref(),
        installed: &installed,
    };
    let mut out = Vec::new();
    for h in crate::harness::ALL {
        let checks = h.doctor_checks(&harness_ctx);
        let found = h.presence().find(&ctx.home, harness_ctx.path_var);
        out.extend(presence::agent_line(
            h.install_target().title(),
            h.name(),
            found.as_ref(),
            installed.contains(&h.name()),
            &checks,
        ));
        out.extend(checks);
    }
    let loaded = config::load(ctx);
    out.extend(doctor::config::report(&loaded));
    out.extend(consent_checks(&state, &loaded.config));
    out.extend(privacy::report(&loaded.config));
    out.extend(server::report(&loaded.config));
    out.extend(journals::report(
        &state,
        loaded.config.actor_peer.as_deref(),
    ));
    out
}

/// Whether capture is paused here (`ovhook pause`) and which harnesses were uninstalled (their
/// unsent work is held): both keep turns from leaving, on purpose.
fn consent_checks(state: &Path, cfg: &config::Config) -> Vec<Check> {
    let mut out = Vec::new();
    let paused = ov_engine::pause::list(state);
    if !paused.is_empty() {
        out.push(Check::new(
            Level::Warn,
            "capture paused",
            format!(
                "{} (turns made meanwhile are never sent; `ovhook status`, `ovhook resume`)",
                paused.join(", ")
            ),
        ));
    }
    if let Some(scope) = ov_engine::pause::paused(state, "", || cfg.workspace.slot.clone()) {
        out.push(Check::new(
            Level::Warn,
            "capture here",
            format!("off: paused ({})", scope.describe()),
        ));
    }
    for t in crate::harness::ALL.iter().map(|h| h.install_target()) {
        if crate::held::is_held(state, t.name()) {
            out.push(Check::new(
                Level::Warn,
                "uninstalled",
                format!(
                    "{}: nothing of its sessions is sent (ovhook install --harness {} sends what \
                     waits)",
                    t.title(),
                    t.name()
                ),
            ));
        }
    }
    out
}

/// The state root as the hooks see it, from the doctor's environment snapshot.
fn state_root(ctx: &LoadContext) -> PathBuf {
    ov_engine::paths::state_root_from(&|k| ctx.var(k).map(str::to_string), &ctx.home)
}
