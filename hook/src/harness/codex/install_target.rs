//! Where Codex CLI reads the configuration that runs ovhook.
//!
//! | scope | file | holds |
//! |---|---|---|
//! | user | `$CODEX_HOME/hooks.json` (`~/.codex/hooks.json`) | hooks (Claude Code's shape) |
//!
//! Codex runs a hook it does not manage only after the user has trusted that exact
//! definition (`/hooks` in the Codex TUI): with the user's consent (`--trust`, or "yes" at the
//! install's question) the install records that trust in `config.toml` as Codex does
//! ([`super::trust`]). Its MCP servers also live in `config.toml`; the install prints the table
//! to add. Codex cuts a SessionEnd timeout over 3 s to 3 s and reports it on every run, so
//! ours is 3 s.
//!
//! The ovhook Codex plugin (`hook/plugin/codex/`, [`super::plugin`]) carries the same hooks
//! (its hooks file is [`CODEX_HOOKS`]'s [`plugin_hooks`](HookGroupsFile::plugin_hooks)), run
//! from the stable home's binary. With it installed, a user install writes no `hooks.json`
//! entries (every event would run twice), places the binary and records trust in the plugin's
//! hooks instead.

use std::path::{Path, PathBuf};

use crate::install::hook_groups::{
    claude_shape_hooks, shell_quote, with_compaction_and_subagents, HookGroupsFile, HookSpec,
    CLAUDE_ENTRY,
};
use crate::install::target::{InstallTarget, Parts, Place, PluginNote, Scope};
use crate::install::trust::HookTrust;

/// The hooks ovhook installs into Codex. PreToolUse sees shell commands (`Bash`) and MCP
/// tools; the guard acts on shell commands only. SessionEnd stays within Codex's 3 s.
/// PreCompact and SubagentStop take Claude Code's payloads (Codex's schemas, plus `turn_id`).
pub static HOOKS: [HookSpec; 7] = with_compaction_and_subagents(claude_shape_hooks("Bash", 3));

/// `hooks.json`.
pub static CODEX_HOOKS: HookGroupsFile = HookGroupsFile {
    describe: "Codex hooks file",
    harness: "codex",
    hooks: &HOOKS,
    tool_hooks: &crate::install::hook_groups::POST_TOOL_USE,
    mcp: None,
    disable_all_key: None,
    shape: &CLAUDE_ENTRY,
};

/// Codex's home: `$CODEX_HOME`, else `~/.codex`.
pub fn codex_home(home: &Path) -> PathBuf {
    match std::env::var_os("CODEX_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => home.join(".codex"),
    }
}

/// The Codex target.
pub static CODEX: CodexTarget = CodexTarget;

/// Codex CLI.
#[derive(Debug)]
pub struct CodexTarget;

impl InstallTarget for CodexTarget {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn title(&self) -> &'static str {
        "Codex CLI"
    }

    fn supports_project(&self) -> bool {
        false
    }

    fn events(&self) -> &'static str {
        "SessionStart, UserPromptSubmit, PreToolUse (Bash), PostToolUse (with capture.tools on), Stop, SessionEnd, PreCompact, SubagentStop"
    }

    fn places(&self, home: &Path, _scope: &Scope) -> Vec<Place> {
        vec![Place {
            path: codex_home(home).join("hooks.json"),
            format: &CODEX_HOOKS,
            holds: Parts::HOOKS,
        }]
    }

    fn notes(&self, _scope: &Scope) -> Vec<String> {
        let exe = std::env::current_exe()
            .map(|p| shell_quote(&p.to_string_lossy()))
            .unwrap_or_else(|_| "ovhook".into());
        vec![format!(
            "for OpenViking's MCP tools in Codex, add to config.toml: \
                 [mcp_servers.openviking] command = \"{exe}\" args = [\"mcp\"]"
        )]
    }

    fn hook_trust(&self) -> Option<&'static dyn HookTrust> {
        Some(&super::trust::CODEX_TRUST)
    }

    fn plugin_serves(&self, home: &Path) -> Option<String> {
        super::plugin::installed(home)
            .into_iter()
            .find(|p| p.runs_stable_home)
            .map(|p| p.id)
    }

    fn plugin_running(&self, home: &Path, _exe: &Path) -> Option<String> {
        self.plugin_serves(home)
            .map(|id| format!("the Codex plugin {id}"))
    }

    fn plugin_removal(&self, id: &str) -> String {
        format!("codex plugin remove {id}")
    }

    fn reconcile_plugins(
        &self,
        home: &Path,
        _exe: &Path,
        config_hooks: bool,
    ) -> anyhow::Result<Vec<PluginNote>> {
        if !config_hooks {
            return Ok(Vec::new());
        }
        Ok(super::plugin::installed(home)
            .into_iter()
            .map(|p| {
                PluginNote::Warning(format!(
                    "the ovhook Codex plugin {} is installed too ({}): every event would run \
                     twice. Keep one: codex plugin remove {}, or ovhook uninstall --harness codex",
                    p.id,
                    p.root.display(),
                    p.id
                ))
            })
            .collect())
    }
}
