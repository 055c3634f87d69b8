//! Where ZCode reads the configuration that runs ovhook.
//!
//! | scope | file | holds |
//! |---|---|---|
//! | user | `~/.zcode/cli/config.json` | hooks (`hooks.events`), MCP (`mcp.servers`) |
//! | user | `~/.agents/mcp.json` | MCP (`mcpServers`): the desktop app's MCP page reads it |
//! | project | `<git root>/.zcode/config.json` | hooks only |
//!
//! The CLI and the Windows desktop read hooks from the user file; desktop builds from 3.10 read
//! them only from the workspace (`zcode.json` or `.zcode/config.json` between the working
//! directory and the git root), once the user trusts the workspace.

use std::path::Path;

use serde_json::{Map, Value};

use super::config_file;
use crate::install::mcp_servers::McpServersFile;
use crate::install::target::{InstallTarget, Parts, Place, PlaceFormat, PluginNote, Scope};

/// The ZCode target.
pub static ZCODE: ZCodeTarget = ZCodeTarget;

/// ZCode's `config.json` format (user and project files share it).
pub static ZCODE_CONFIG: ZCodeConfig = ZCodeConfig;

/// `~/.agents/mcp.json`.
pub static AGENTS_MCP: McpServersFile = McpServersFile {
    describe: "agents MCP list",
    entry_type: None,
    all_tools: false,
};

/// `<home>/.zcode/cli/config.json`.
pub fn user_config_path(home: &Path) -> std::path::PathBuf {
    home.join(".zcode").join("cli").join("config.json")
}

/// `<root>/.zcode/config.json`.
pub fn project_config_path(root: &Path) -> std::path::PathBuf {
    root.join(".zcode").join("config.json")
}

/// `<home>/.agents/mcp.json`.
pub fn agents_mcp_path(home: &Path) -> std::path::PathBuf {
    home.join(".agents").join("mcp.json")
}

/// ZCode.
#[derive(Debug)]
pub struct ZCodeTarget;

impl InstallTarget for ZCodeTarget {
    fn name(&self) -> &'static str {
        "zcode"
    }

    /// A ZCode plugin runs `exe` when its hooks name it (the stable home's), or when install
    /// linked the plugin's own `bin/ovhook` there (bundles before the stable home).
    fn plugin_running(&self, home: &Path, exe: &Path) -> Option<String> {
        let ours = std::fs::canonicalize(exe).ok()?;
        super::installed::plugin_installs(home)
            .into_iter()
            .find(|p| std::fs::canonicalize(&p.binary).ok().as_ref() == Some(&ours))
            .map(|p| format!("the ZCode plugin {}", p.root.display()))
    }

    fn plugin_serves(&self, home: &Path) -> Option<String> {
        super::installed::plugin_installs(home)
            .into_iter()
            .find(|p| p.enabled && p.runs_stable_home)
            .map(|p| p.id.unwrap_or_else(|| p.root.display().to_string()))
    }

    fn plugin_removal(&self, id: &str) -> String {
        format!("disable or uninstall the plugin {id} in ZCode's plugin settings")
    }

    fn title(&self) -> &'static str {
        "ZCode"
    }

    fn supports_project(&self) -> bool {
        true
    }

    fn places(&self, home: &Path, scope: &Scope) -> Vec<Place> {
        match scope {
            Scope::User => vec![
                Place {
                    path: user_config_path(home),
                    format: &ZCODE_CONFIG,
                    holds: Parts::ALL,
                },
                Place {
                    path: agents_mcp_path(home),
                    format: &AGENTS_MCP,
                    holds: Parts::MCP,
                },
            ],
            Scope::Project { root } => vec![Place {
                path: project_config_path(root),
                format: &ZCODE_CONFIG,
                holds: Parts::HOOKS,
            }],
        }
    }

    fn notes(&self, scope: &Scope) -> Vec<String> {
        match scope {
            Scope::User => Vec::new(),
            Scope::Project { root } => vec![
                format!(
                    "{} is inside the repository and may be committed: it names this machine's \
                     ovhook binary and holds no credentials or URLs",
                    project_config_path(root).display()
                ),
                "ZCode runs workspace hooks only after you trust the workspace: it asks when you \
                 next open this repository"
                    .to_owned(),
            ],
        }
    }

    fn reconcile_plugins(
        &self,
        home: &Path,
        exe: &Path,
        config_hooks: bool,
    ) -> anyhow::Result<Vec<PluginNote>> {
        let mut out = Vec::new();
        for plugin in super::installed::plugin_installs(home) {
            let bin = &plugin.binary;
            let link = std::fs::symlink_metadata(bin)
                .ok()
                .map(|m| m.file_type().is_symlink());
            // A plugin running the stable home's binary needs nothing (install placed it). Of
            // one with its own `bin/ovhook`: one linking elsewhere (or gone) is pointed at this
            // binary; one shipping its own copy is upgraded by updating the plugin.
            if !plugin.runs_stable_home
                && link != Some(false)
                && std::fs::canonicalize(bin).ok().as_deref() != Some(exe)
            {
                relink(bin, exe)?;
                out.push(PluginNote::Moved(format!(
                    "plugin {} ({} -> {})",
                    plugin.root.display(),
                    bin.display(),
                    exe.display()
                )));
            }
            if plugin.enabled && config_hooks {
                out.push(PluginNote::Warning(format!(
                    "the ovhook plugin is installed too ({}): every event would run twice. Keep \
                     one: disable the plugin, or run ovhook uninstall",
                    plugin.root.display()
                )));
            }
        }
        Ok(out)
    }
}

/// Replaces `link` with a symlink to `target` atomically.
fn relink(link: &Path, target: &Path) -> anyhow::Result<()> {
    use anyhow::Context;
    let dir = link
        .parent()
        .with_context(|| format!("{} has no parent folder", link.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let tmp = dir.join(format!(".ovhook.{}.link", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)
        .with_context(|| format!("could not create {}", tmp.display()))?;
    std::fs::rename(&tmp, link).with_context(|| format!("could not replace {}", link.display()))
}

/// ZCode's `config.json`.
#[derive(Debug)]
pub struct ZCodeConfig;

impl PlaceFormat for ZCodeConfig {
    fn describe(&self) -> &'static str {
        "ZCode config"
    }

    fn validate(&self, root: &Map<String, Value>) -> anyhow::Result<()> {
        config_file::validate(root)
    }

    fn merge(&self, root: &mut Map<String, Value>, exe: &Path, want: Parts) -> Vec<String> {
        let mut notes = Vec::new();
        let node = config_file::ConfigFile {
            root: root.clone(),
            original: None,
        }
        .node_plugin_entries();
        if want.hooks {
            config_file::merge_hooks(root, exe);
            if node > 0 {
                notes.push(format!(
                    "replaced {node} hook entries of the OpenViking Node plugin"
                ));
            }
        } else {
            config_file::remove_hooks(root);
        }
        if want.mcp {
            notes.extend(config_file::merge_mcp(root, exe));
        } else {
            config_file::remove_mcp(root);
        }
        notes
    }

    fn remove(&self, root: &mut Map<String, Value>) -> usize {
        config_file::remove_hooks(root) + config_file::remove_mcp(root)
    }

    fn binaries(&self, root: &Map<String, Value>) -> Vec<String> {
        config_file::our_commands(root)
    }

    fn present(&self, root: &Map<String, Value>) -> Parts {
        let mut hooks_only = root.clone();
        let mcp = config_file::remove_mcp(&mut hooks_only) > 0;
        Parts {
            hooks: !config_file::our_commands(&hooks_only).is_empty(),
            mcp,
            tools: false,
        }
    }

    fn is_residue(&self, root: &Map<String, Value>) -> bool {
        // `hooks.enabled: true` is what merge may set (on a file with no other hook) and
        // remove keeps.
        root.is_empty()
            || root.len() == 1 && root.get("hooks") == Some(&serde_json::json!({ "enabled": true }))
    }

    fn warnings(&self, root: &Map<String, Value>, path: &Path) -> Vec<String> {
        let file = config_file::ConfigFile {
            root: root.clone(),
            original: None,
        };
        let has_ours = config_file::OUR_HOOKS
            .iter()
            .any(|h| !file.our_entries(h.0).is_empty());
        let disabled = config_file::disabled_hint(&file, path)
            .filter(|_| has_ours)
            .map(|hint| format!("warning: {hint}"));
        file.unknown_event_keys()
            .into_iter()
            .map(|k| {
                format!(
                    "warning: {} has the event key \"hooks.events.{k}\", which ZCode does not \
                     know: ZCode 0.16.5 then disables EVERY hook in the file (ours included). \
                     Remove or rename it; valid keys: {}",
                    path.display(),
                    config_file::VALID_EVENTS.join(", ")
                )
            })
            .chain(disabled)
            .collect()
    }
}
