//! Doctor checks of a ZCode install: the user `config.json` (valid, `hooks.enabled`, each of our
//! four hooks exactly once with an existing binary, no unknown event keys, no Node plugin
//! leftovers, the MCP entry), then where ZCode runs our hooks from ([`super::placement`]).

use std::path::Path;

use serde_json::Value;

use super::config_file::{disabled_hint, our_commands, ConfigFile, OUR_HOOKS};
use super::install_target::user_config_path;
use super::placement;
use crate::doctor::{expected_binary, Check, DoctorContext, Level};
use crate::harness::HookEvent;
use crate::install::marker::INTEGRATION_ID;

/// ZCode's checks: its user `config.json` (not required when the workspace, a plugin or
/// another agent runs ovhook) and, once ZCode has our hooks somewhere or nothing else runs
/// ovhook, where ZCode runs them from in the current folder.
pub fn report(ctx: &DoctorContext<'_>) -> Vec<Check> {
    let placement = placement::Placement::gather(ctx.home, ctx.cwd, ctx.state);
    let user_path = user_config_path(ctx.home);
    let other_agent = ctx.installed.iter().any(|h| *h != "zcode");
    let zcode_elsewhere = placement.other_source() || other_agent;
    let mut out = zcode_checks(ctx.home, &user_path, zcode_elsewhere);
    let user = placement::UserLevel {
        has_hooks: ConfigFile::read(&user_path).is_ok_and(|f| !our_commands(&f.root).is_empty()),
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
    if marker != Some(INTEGRATION_ID) {
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
                path_var: None,
                installed,
            };
            report(&ctx)
                .into_iter()
                .find(|c| c.what == "zcode config")
                .expect("a zcode config line")
        };
        assert_eq!(config(&[]).level, Level::Fail);
        assert_eq!(config(&["qwen"]).level, Level::Ok);
        assert_eq!(config(&["zcode"]).level, Level::Fail);
    }

    #[test]
    fn an_enabled_plugin_install_is_an_install() {
        use crate::harness::{zcode::ZCode, Harness};
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path();
        assert!(!ZCode.installed(home));
        let manifest = home.join(".zcode/cli/plugins/cache/mkt/openviking/1.0/.zcode-plugin");
        std::fs::create_dir_all(&manifest).expect("mkdir");
        std::fs::write(manifest.join("plugin.json"), r#"{"name":"openviking"}"#).expect("write");
        assert!(ZCode.installed(home));
        std::fs::create_dir_all(home.join(".zcode/cli")).expect("mkdir");
        std::fs::write(
            home.join(".zcode/cli/config.json"),
            r#"{"plugins":{"enabledPlugins":{"openviking@mkt":false}}}"#,
        )
        .expect("write");
        assert!(!ZCode.installed(home), "a disabled plugin runs nothing");
    }
}
