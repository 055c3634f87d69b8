//! Where Codex CLI reads the configuration that runs ovhook.
//!
//! | scope | file | holds |
//! |---|---|---|
//! | user | `$CODEX_HOME/hooks.json` (`~/.codex/hooks.json`) | hooks (Claude Code's shape) |
//!
//! Codex runs a hook it does not manage only after the user has trusted that exact
//! definition (`/hooks` in the Codex TUI; `codex exec --dangerously-bypass-hook-trust` for
//! one run). Its MCP servers live in `config.toml`, which ovhook does not edit: the install
//! prints the table to add.

use std::path::{Path, PathBuf};

use crate::install::hook_groups::{claude_shape_hooks, shell_quote, HookGroupsFile, HookSpec};
use crate::install::target::{InstallTarget, Parts, Place, Scope};

/// The hooks ovhook installs into Codex. PreToolUse sees shell commands (`Bash`) and MCP
/// tools; the guard acts on shell commands only.
pub static HOOKS: [HookSpec; 5] = claude_shape_hooks("Bash", 10);

/// `hooks.json`.
pub static CODEX_HOOKS: HookGroupsFile = HookGroupsFile {
    describe: "Codex hooks file",
    harness: "codex",
    hooks: &HOOKS,
    mcp: None,
    disable_all_key: None,
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
        "SessionStart, UserPromptSubmit, PreToolUse (Bash), Stop, SessionEnd"
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
        vec![
            "Codex runs these hooks once you trust them: start `codex` and approve them in /hooks"
                .to_owned(),
            format!(
                "for OpenViking's MCP tools in Codex, add to config.toml: \
                 [mcp_servers.openviking] command = \"{exe}\" args = [\"mcp\"]"
            ),
        ]
    }
}
