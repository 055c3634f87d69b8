//! Doctor checks of a Claude Code install: our hooks in `~/.claude/settings.json` (every
//! event, the matcher, a binary that runs), `disableAllHooks`, the MCP server in
//! `~/.claude.json`, and the ovhook Claude Code plugin (that Claude Code can load it, the binary
//! its hooks really run; never next to settings hooks, or every event would run twice).

use std::path::Path;

use serde_json::Value;

use super::install_target::{
    first_word, is_ours, user_file_path, user_settings_path, CLAUDE_SETTINGS, OUR_HOOKS,
};
use super::plugin::{self, InstalledPlugin};
use crate::doctor::{Check, Level};
use crate::install::json_doc::parse_object;
use crate::install::marker::{mentions_integration, MCP_NAME};
use crate::install::target::PlaceFormat;

/// Whether Claude Code's user settings hold hooks of ours.
fn settings_hooks(home: &Path) -> bool {
    ov_engine::regular_file::read(&user_settings_path(home), 16 << 20)
        .ok()
        .flatten()
        .and_then(|b| parse_object(&b).ok())
        .is_some_and(|root| !CLAUDE_SETTINGS.binaries(&root).is_empty())
}

/// Whether Claude Code runs ovhook: hooks in its user settings, or the ovhook plugin.
pub fn installed(home: &Path) -> bool {
    settings_hooks(home) || !plugin::installed(home).is_empty()
}

/// The plugin checks: whether Claude Code can load each install (its marketplace's folder is
/// there), the binary its hooks really run (expanded as Claude Code's shell does), and the
/// warning when settings hooks of ours are installed too.
fn plugin_checks(home: &Path, plugins: &[InstalledPlugin], settings_hooks: bool) -> Vec<Check> {
    let mut out: Vec<Check> = plugins
        .iter()
        .map(|p| {
            let bin = &p.binary;
            let runs = std::fs::metadata(bin).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            });
            let what = "claude-code plugin";
            if let Some(problem) = plugin::load_problem(home, p) {
                Check::new(Level::Fail, what, format!("{}: {problem}", p.id))
            } else if !runs {
                let fix = if p.runs_stable_home {
                    "run ovhook install --harness claude-code to put it there"
                } else {
                    "reinstall the plugin"
                };
                Check::new(
                    Level::Fail,
                    what,
                    format!(
                        "{} runs {}, which is not an executable file: {fix}",
                        p.id,
                        bin.display()
                    ),
                )
            } else {
                Check::new(
                    Level::Ok,
                    what,
                    format!(
                        "{} installed at {}, runs {}",
                        p.id,
                        p.root.display(),
                        bin.display()
                    ),
                )
            }
        })
        .collect();
    if !plugins.is_empty() && settings_hooks {
        out.push(Check::new(
            Level::Warn,
            "claude-code plugin",
            "the ovhook plugin and ovhook hooks in Claude Code settings are both installed: every \
             event would run twice (keep one: ovhook uninstall --harness claude-code removes the \
             settings hooks, or claude plugin disable the plugin)",
        ));
    }
    out
}

/// The checks; none when Claude Code has no settings file and `required` is false.
pub fn checks(home: &Path, required: bool) -> Vec<Check> {
    let what = "claude-code settings";
    let path = user_settings_path(home);
    let plugins = plugin::installed(home);
    let bytes = match ov_engine::regular_file::read(&path, 16 << 20) {
        Ok(Some(b)) => b,
        Ok(None) => {
            return if !plugins.is_empty() {
                plugin_checks(home, &plugins, false)
            } else if required {
                vec![Check::new(
                    Level::Fail,
                    what,
                    format!(
                        "{} does not exist (run ovhook install --harness claude-code)",
                        path.display()
                    ),
                )]
            } else {
                Vec::new()
            };
        }
        Err(e) => return vec![Check::new(Level::Fail, what, e.to_string())],
    };
    let root = match parse_object(&bytes).and_then(|r| {
        CLAUDE_SETTINGS.validate(&r)?;
        Ok(r)
    }) {
        Ok(r) => r,
        Err(e) => {
            return vec![Check::new(
                Level::Fail,
                what,
                format!("{} is not valid: {e:#}", path.display()),
            )]
        }
    };
    let mut out = vec![Check::new(
        Level::Ok,
        what,
        format!("{} is valid", path.display()),
    )];
    for w in CLAUDE_SETTINGS.warnings(&root, &path) {
        out.push(Check::new(Level::Fail, "claude-code hooks", w));
    }
    for spec in &OUR_HOOKS {
        let (event, sub, matcher) = (spec.event, spec.sub, spec.matcher);
        let entries: Vec<(Option<&str>, &Value)> = root
            .get("hooks")
            .and_then(|h| h.get(event))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|g| {
                let m = g.get("matcher").and_then(Value::as_str);
                g.get("hooks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|e| is_ours(e))
                    .map(move |e| (m, e))
            })
            .collect();
        let label = format!("claude-code {event}");
        let Some((m, entry)) = entries.first() else {
            if !plugins.is_empty() {
                continue;
            }
            out.push(Check::new(
                if required { Level::Fail } else { Level::Warn },
                label,
                "no ovhook hook (run ovhook install --harness claude-code)",
            ));
            continue;
        };
        let cmd = entry.get("command").and_then(Value::as_str).unwrap_or("");
        let bin = first_word(cmd);
        let runs = std::fs::metadata(&bin).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        });
        out.push(if !runs {
            Check::new(
                Level::Fail,
                label,
                format!("{bin} is not an executable file (re-run ovhook install)"),
            )
        } else if *m != matcher {
            Check::new(
                Level::Warn,
                label,
                format!("matcher {m:?}, expected {matcher:?}"),
            )
        } else if !cmd.ends_with(sub) {
            Check::new(Level::Warn, label, format!("runs {cmd:?}"))
        } else if entries.len() > 1 {
            Check::new(
                Level::Warn,
                label,
                format!("{} ovhook hooks: every event runs twice", entries.len()),
            )
        } else {
            Check::new(Level::Ok, label, cmd.to_string())
        });
    }
    out.extend(plugin_checks(
        home,
        &plugins,
        !CLAUDE_SETTINGS.binaries(&root).is_empty(),
    ));
    let mcp_path = user_file_path(home);
    let mcp = ov_engine::regular_file::read(&mcp_path, crate::install::json_doc::MAX_BYTES)
        .ok()
        .flatten()
        .and_then(|b| parse_object(&b).ok())
        .and_then(|r| r.get("mcpServers")?.get(MCP_NAME).cloned());
    out.push(match mcp {
        Some(m) if mentions_integration(&m) => Check::new(
            Level::Ok,
            "claude-code mcp",
            format!("mcpServers.{MCP_NAME} in {}", mcp_path.display()),
        ),
        Some(_) => Check::new(
            Level::Warn,
            "claude-code mcp",
            format!(
                "mcpServers.{MCP_NAME} in {} is not ovhook's",
                mcp_path.display()
            ),
        ),
        None if !plugins.is_empty() => Check::new(
            Level::Ok,
            "claude-code mcp",
            "from the ovhook plugin (its .mcp.json)",
        ),
        None => Check::new(
            Level::Ok,
            "claude-code mcp",
            "not installed (install --no-mcp, or uninstalled)",
        ),
    });
    out
}
