//! `ovhook doctor [--home DIR]`: one line per check, `ok|warn|FAIL <what>: <detail>`; exit 0 when
//! nothing FAILs, 1 otherwise.
//!
//! Sections: ZCode's user `config.json` (valid, `hooks.enabled`, each of our four hooks exactly once
//! with an existing binary, no unknown event keys, no Node plugin leftovers, the MCP entry), the
//! ZCode placement ([`placement`]: which configuration runs our hooks in the current folder, the
//! ZCode version, project configs, stale binary paths, plugin next to config-file hooks), the
//! configuration sources and their warnings (ignored repository keys included), the privacy rule
//! ([`privacy`]: built-in redaction, the user's filter rules and their errors), the server
//! (reachable and authorised, or the embedded default), then the journals ([`journals`]).

pub mod agents;
pub mod claude_code;
pub mod journals;
mod placement;
mod privacy;
mod server;

use std::fmt;
use std::path::{Path, PathBuf};

use ov_engine::config::{self, LoadContext, SourceStatus};
use serde_json::Value;

use crate::harness::zcode::config_file::{disabled_hint, ConfigFile, OUR_HOOKS};
use crate::harness::HookEvent;
use crate::install::zcode_config_path;

/// Severity of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Fine.
    Ok,
    /// Works, but worth a look.
    Warn,
    /// Broken: memory does not work as installed.
    Fail,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Severity.
    pub level: Level,
    /// What was checked.
    pub what: String,
    /// What was found.
    pub detail: String,
}

impl Check {
    /// A check line.
    pub fn new(level: Level, what: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            level,
            what: what.into(),
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Ok => "ok",
            Level::Warn => "warn",
            Level::Fail => "FAIL",
        };
        write!(f, "{level} {}: {}", self.what, self.detail)
    }
}

/// What a harness's doctor checks may look at.
#[derive(Debug, Clone, Copy)]
pub struct DoctorContext<'a> {
    /// The home folder checked.
    pub home: &'a Path,
    /// The folder the doctor runs in (where a project's configuration applies).
    pub cwd: &'a Path,
    /// ovhook's state root.
    pub state: &'a Path,
    /// The harnesses that run ovhook for this user ([`crate::harness::Harness::installed`]).
    pub installed: &'a [&'static str],
}

/// `ovhook doctor`.
pub fn run(args: &[String]) -> anyhow::Result<i32> {
    let mut home: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--home" => match it.next() {
                Some(h) => home = Some(PathBuf::from(h)),
                None => {
                    eprintln!("ovhook: --home needs a value\nusage: ovhook doctor [--home DIR]");
                    return Ok(2);
                }
            },
            other => {
                eprintln!("ovhook: unknown argument '{other}'\nusage: ovhook doctor [--home DIR]");
                return Ok(2);
            }
        }
    }
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
    let harness_ctx = DoctorContext {
        home: &ctx.home,
        cwd: &ctx.cwd,
        state: &state,
        installed: &installed,
    };
    let mut out = Vec::new();
    for h in crate::harness::ALL {
        out.extend(h.doctor_checks(&harness_ctx));
    }
    let loaded = config::load(ctx);
    out.extend(config_checks(&loaded));
    out.extend(consent_checks(&state, &loaded.config));
    out.extend(privacy::report(&loaded.config));
    out.extend(server_checks(&loaded.config));
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
    for t in crate::harness::ALL.map(|h| h.install_target()) {
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

/// Which server the hooks use and why (configured, OpenViking's local default, off), then
/// whether it answers. The local default not answering is a warning: turns stay in the journal
/// until a server answers there.
fn server_checks(cfg: &config::Config) -> Vec<Check> {
    use ov_engine::config::ServerChoice;
    let url = cfg.server.as_ref().map(|s| s.url.as_str()).unwrap_or("-");
    match cfg.server_choice {
        ServerChoice::Off => vec![Check::new(
            Level::Ok,
            "server",
            "off (url = off): journal only, nothing is sent",
        )],
        ServerChoice::Configured => {
            let mut out = vec![Check::new(
                Level::Ok,
                "server url",
                format!("{url} (configured)"),
            )];
            out.extend(server::check(cfg));
            out
        }
        ServerChoice::LocalDefault => {
            let mut out = vec![Check::new(
                Level::Ok,
                "server url",
                format!(
                    "{url}: no URL configured, OpenViking's local default (no API key: local, \
                     no auth); set one with ovhook install --url, or url = off for journal only"
                ),
            )];
            out.extend(server::check(cfg).into_iter().map(|mut c| {
                if c.level == Level::Fail && c.what == "server" {
                    c.level = Level::Warn;
                    c.detail = format!(
                        "{}; no local OpenViking answers: turns stay in the journal and the \
                         back-off keeps the hooks fast",
                        c.detail
                    );
                }
                c
            }));
            out
        }
    }
}

/// The state root as the hooks see it, from the doctor's environment snapshot.
fn state_root(ctx: &LoadContext) -> PathBuf {
    ov_engine::paths::state_root_from(&|k| ctx.var(k).map(str::to_string), &ctx.home)
}

/// ZCode's checks: its user `config.json` (not required when the workspace, a plugin or
/// another agent runs ovhook) and, once ZCode has our hooks somewhere or nothing else runs
/// ovhook, where ZCode runs them from in the current folder.
pub fn zcode_report(ctx: &DoctorContext<'_>) -> Vec<Check> {
    let placement = placement::Placement::gather(ctx.home, ctx.cwd, ctx.state);
    let user_path = zcode_config_path(ctx.home);
    let other_agent = ctx.installed.iter().any(|h| *h != "zcode");
    let zcode_elsewhere = placement.other_source() || other_agent;
    let mut out = zcode_checks(ctx.home, &user_path, zcode_elsewhere);
    let user = placement::UserLevel {
        has_hooks: ConfigFile::read(&user_path)
            .is_ok_and(|f| !crate::harness::zcode::config_file::our_commands(&f.root).is_empty()),
    };
    let exe = expected_binary(ctx.home);
    if !(other_agent && !user.has_hooks && !placement.other_source()) {
        out.extend(placement.report(ctx.home, &user, exe.as_deref()));
    }
    out
}

/// The user config's checks. `other_source`: the workspace or a plugin runs our hooks, so a
/// missing user config is fine.
fn zcode_checks(home: &Path, path: &Path, other_source: bool) -> Vec<Check> {
    let what = "zcode config";
    let mut out = Vec::new();
    let file = match ConfigFile::read(path) {
        Ok(f) if f.original.is_none() && other_source => {
            out.push(Check::new(
                Level::Ok,
                what,
                format!(
                    "{} does not exist (our hooks come from the workspace or the plugin)",
                    path.display()
                ),
            ));
            return out;
        }
        Ok(f) if f.original.is_none() => {
            out.push(Check::new(
                Level::Fail,
                what,
                format!(
                    "{} does not exist (run ovhook install --harness zcode)",
                    path.display()
                ),
            ));
            return out;
        }
        Ok(f) => f,
        Err(e) => {
            out.push(Check::new(Level::Fail, what, format!("{e:#}")));
            return out;
        }
    };
    out.push(Check::new(
        Level::Ok,
        what,
        format!("{} is valid", path.display()),
    ));
    out.push(match disabled_hint(&file, path) {
        None => Check::new(Level::Ok, "hooks.enabled", "true"),
        Some(hint) => Check::new(Level::Fail, "hooks.enabled", hint),
    });
    let unknown = file.unknown_event_keys();
    out.push(if unknown.is_empty() {
        Check::new(Level::Ok, "hooks.events", "only valid event keys")
    } else {
        Check::new(
            Level::Fail,
            "hooks.events",
            format!(
                "unknown key(s) {}: ZCode rejects the whole hooks block, so no hook runs",
                unknown
                    .iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    });
    let exe = expected_binary(home);
    for (event, sub, matcher, _, _) in OUR_HOOKS {
        out.push(hook_check(&file, event, sub, matcher, exe.as_deref()));
    }
    let node = file.node_plugin_entries();
    if node > 0 {
        out.push(Check::new(
            Level::Warn,
            "node plugin",
            format!(
                "{node} hook entries of the OpenViking Node plugin remain (turns would be captured \
                 twice; run ovhook install to replace them)"
            ),
        ));
    }
    out.push(mcp_check(&file));
    out
}

/// The binary our entries should name, canonical: the stable home's once install placed it
/// there, else this one.
fn expected_binary(home: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(crate::install::bin_home::ovhook(home))
        .ok()
        .or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|e| std::fs::canonicalize(e).ok())
        })
}

fn hook_check(
    file: &ConfigFile,
    event: &str,
    sub: &str,
    matcher: Option<&str>,
    exe: Option<&Path>,
) -> Check {
    let what = format!("hook {event}");
    let entries = file.our_entries(event);
    let [(group_matcher, entry)] = entries.as_slice() else {
        return if entries.is_empty() {
            Check::new(Level::Fail, what, "missing (run ovhook install)")
        } else {
            Check::new(
                Level::Fail,
                what,
                format!(
                    "{} entries of ours: it would run {} times (run ovhook install)",
                    entries.len(),
                    entries.len()
                ),
            )
        };
    };
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("");
    let args: Vec<&str> = entry
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let kind = entry.get("type").and_then(Value::as_str).unwrap_or("");
    let runs_event = args
        .first()
        .and_then(|a| HookEvent::from_command(a))
        .map(HookEvent::wire_name);
    if kind != "process" || args.first() != Some(&sub) || runs_event != Some(event) {
        return Check::new(
            Level::Fail,
            what,
            format!(
                "expected a process hook running `ovhook {sub}`, found type {kind:?} args {args:?}"
            ),
        );
    }
    let path = Path::new(command);
    if !path.is_absolute() || !path.is_file() {
        return Check::new(
            Level::Fail,
            what,
            format!("{command} does not exist (run ovhook install again)"),
        );
    }
    let found_matcher = group_matcher.and_then(|m| m.as_str());
    if found_matcher.filter(|m| !m.is_empty()) != matcher {
        return Check::new(
            Level::Warn,
            what,
            format!("matcher {found_matcher:?}, expected {matcher:?}"),
        );
    }
    if let Some(exe) = exe {
        if std::fs::canonicalize(path).ok().as_deref() != Some(exe) {
            return Check::new(
                Level::Warn,
                what,
                format!("runs {command}, not this binary {}", exe.display()),
            );
        }
    }
    Check::new(Level::Ok, what, format!("{command} {sub}"))
}

fn mcp_check(file: &ConfigFile) -> Check {
    let what = "mcp";
    let Some(entry) = file.mcp_entry() else {
        return Check::new(
            Level::Warn,
            what,
            "mcp.servers.openviking missing: the agent has no OpenViking tools (installed with \
             --no-mcp? run ovhook install to add it)",
        );
    };
    let marker = entry
        .pointer("/env/OPENVIKING_INTEGRATION_ID")
        .and_then(Value::as_str);
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("");
    if marker != Some(crate::harness::zcode::config_file::INTEGRATION_ID) {
        return Check::new(
            Level::Warn,
            what,
            format!("mcp.servers.openviking is not ovhook's (command {command:?})"),
        );
    }
    if entry.get("enabled").and_then(Value::as_bool) == Some(false) {
        return Check::new(Level::Warn, what, "mcp.servers.openviking is disabled");
    }
    if !Path::new(command).is_file() {
        return Check::new(Level::Fail, what, format!("{command} does not exist"));
    }
    Check::new(Level::Ok, what, format!("openviking -> {command} mcp"))
}

fn config_checks(loaded: &config::Loaded) -> Vec<Check> {
    let used: Vec<String> = loaded
        .sources
        .iter()
        .filter(|s| s.status == SourceStatus::Loaded)
        .map(|s| s.source.to_string())
        .collect();
    let mut out = vec![Check::new(
        Level::Ok,
        "config sources",
        if used.is_empty() {
            "defaults only (no config file found)".to_owned()
        } else {
            used.join(", ")
        },
    )];
    for w in &loaded.warnings {
        out.push(Check::new(Level::Warn, "config", w.to_string()));
    }
    let c = &loaded.config;
    out.push(Check::new(
        Level::Ok,
        "config peer",
        match &c.actor_peer {
            Some(p) => format!(
                "{p} (peer.source {})",
                format!("{:?}", c.peer.source).to_lowercase()
            ),
            None => "none (no peer header)".to_owned(),
        },
    ));
    if !c.memory_enabled {
        out.push(Check::new(
            Level::Warn,
            "config",
            "memory.enabled is false: hooks do nothing",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ZCode's missing user config fails while nothing runs ovhook, and is fine once another
    /// agent does.
    #[test]
    fn a_missing_zcode_config_fails_only_when_no_other_agent_runs_ovhook() {
        let tmp = tempfile::tempdir().expect("tmp");
        let (home, state) = (tmp.path().join("home"), tmp.path().join("state"));
        let config = |installed: &[&'static str]| {
            let ctx = DoctorContext {
                home: &home,
                cwd: tmp.path(),
                state: &state,
                installed,
            };
            zcode_report(&ctx)
                .into_iter()
                .find(|c| c.what == "zcode config")
                .expect("a zcode config line")
        };
        assert_eq!(config(&[]).level, Level::Fail);
        assert_eq!(config(&["qwen"]).level, Level::Ok);
        assert_eq!(config(&["zcode"]).level, Level::Fail);
    }
}
