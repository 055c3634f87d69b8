//! Doctor checks of a Codex install: `~/.codex/hooks.json` and Codex's trust in its hooks
//! (the checks every agent gets), then each install of the ovhook Codex plugin: the binary its
//! hooks really run (expanded as Codex's shell does), whether Codex trusts every one of them,
//! and never next to `hooks.json` hooks of ours (every event would run twice).

use std::path::Path;

use super::install_target::{CODEX, CODEX_HOOKS};
use super::plugin::{self, InstalledPlugin};
use super::trust::{our_hooks, status_of};
use crate::doctor::{agents, Check, Level};

/// One plugin install's line.
fn plugin_check(home: &Path, p: &InstalledPlugin) -> Check {
    let what = "Codex plugin";
    let runs = std::fs::metadata(&p.binary).is_ok_and(|m| {
        use std::os::unix::fs::PermissionsExt;
        m.is_file() && m.permissions().mode() & 0o111 != 0
    });
    if !runs {
        let fix = if p.runs_stable_home {
            "run ovhook install --harness codex to put it there"
        } else {
            "reinstall the plugin"
        };
        return Check::new(
            Level::Fail,
            what,
            format!(
                "{} runs {}, which is not an executable file: {fix}",
                p.id,
                p.binary.display()
            ),
        );
    }
    // The hooks this ovhook installs, as the plugin it ships holds them: an older plugin copy
    // lacks an event added since.
    let shipped = CODEX_HOOKS.plugin_hooks();
    let want: Vec<String> = shipped
        .as_object()
        .map(|root| our_hooks("", root).into_iter().map(|h| h.event).collect())
        .unwrap_or_default();
    let missing: Vec<&String> = want
        .iter()
        .filter(|e| !p.hooks.iter().any(|h| &h.event == *e))
        .collect();
    if !missing.is_empty() {
        return Check::new(
            Level::Warn,
            what,
            format!(
                "{} at {} lacks hooks this ovhook has ({}): update the plugin (codex plugin \
                 marketplace upgrade, then codex plugin add {}) and run ovhook install --harness \
                 codex --trust",
                p.id,
                p.root.display(),
                missing
                    .iter()
                    .map(|e| e.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                p.id
            ),
        );
    }
    match status_of(home, &p.hooks) {
        Err(e) => Check::new(Level::Fail, what, format!("{e:#}")),
        Ok(s) if s.untrusted.is_empty() => Check::new(
            Level::Ok,
            what,
            format!(
                "{} installed at {}, runs {}; Codex trusts all {} of its hooks",
                p.id,
                p.root.display(),
                p.binary.display(),
                s.trusted.len()
            ),
        ),
        Ok(s) => Check::new(
            Level::Fail,
            what,
            format!(
                "{} runs {}, but Codex will not run {} of its {} hooks ({}): untrusted (codex \
                 plugin add records no trust). Run ovhook install --harness codex --trust, or \
                 approve them in Codex's /hooks",
                p.id,
                p.binary.display(),
                s.untrusted.len(),
                s.untrusted.len() + s.trusted.len(),
                s.untrusted.join(", ")
            ),
        ),
    }
}

/// The checks; none when Codex has neither a `hooks.json` nor the plugin.
pub fn checks(home: &Path) -> Vec<Check> {
    let mut out = agents::report(&CODEX, home);
    let plugins = plugin::installed(home);
    out.extend(plugins.iter().map(|p| plugin_check(home, p)));
    if !plugins.is_empty() && agents::holds_ours(&CODEX, home) {
        out.push(Check::new(
            Level::Warn,
            "Codex plugin",
            "the ovhook plugin and ovhook hooks in ~/.codex/hooks.json are both installed: every \
             event would run twice (keep one: ovhook install --harness codex removes the \
             hooks.json entries while the plugin is installed, or codex plugin remove the \
             plugin)",
        ));
    }
    out
}
