//! Where Qwen Code reads the configuration that runs ovhook.
//!
//! | scope | file | holds |
//! |---|---|---|
//! | user | `~/.qwen/settings.json` | hooks (`hooks.<Event>`, Claude Code's shape), MCP (`mcpServers`) |
//!
//! Qwen Code fires no SessionEnd in `-p` mode; SessionEnd is installed for interactive
//! sessions. Qwen's own `read_file` and `grep_search` reject a `viking://` path before
//! PreToolUse fires, so the guard sees `glob` patterns (and shell commands) only.

use std::path::{Path, PathBuf};

use crate::install::hook_groups::{claude_shape_hooks, HookGroupsFile, HookSpec, CLAUDE_ENTRY};
use crate::install::mcp_servers::McpServersFile;
use crate::install::target::{InstallTarget, Parts, Place, Scope};

/// The hooks ovhook installs into Qwen Code.
pub static HOOKS: [HookSpec; 5] =
    claude_shape_hooks("read_file|glob|grep_search|run_shell_command", 10);

/// `mcpServers` entries in Qwen's settings.
pub static QWEN_MCP: McpServersFile = McpServersFile {
    describe: "Qwen Code settings",
    entry_type: None,
    all_tools: false,
};

/// `~/.qwen/settings.json`.
pub static QWEN_SETTINGS: HookGroupsFile = HookGroupsFile {
    describe: "Qwen Code settings",
    harness: "qwen",
    hooks: &HOOKS,
    tool_hooks: &crate::install::hook_groups::POST_TOOL_USE,
    mcp: Some(&QWEN_MCP),
    disable_all_key: None,
    shape: &CLAUDE_ENTRY,
};

/// `<home>/.qwen/settings.json`.
pub fn user_settings_path(home: &Path) -> PathBuf {
    home.join(".qwen").join("settings.json")
}

/// The Qwen Code target.
pub static QWEN: QwenTarget = QwenTarget;

/// Qwen Code.
#[derive(Debug)]
pub struct QwenTarget;

impl InstallTarget for QwenTarget {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn title(&self) -> &'static str {
        "Qwen Code"
    }

    fn supports_project(&self) -> bool {
        false
    }

    fn events(&self) -> &'static str {
        "SessionStart, UserPromptSubmit, PreToolUse (read_file|glob|grep_search|run_shell_command), PostToolUse (with capture.tools on), Stop, SessionEnd"
    }

    fn places(&self, home: &Path, _scope: &Scope) -> Vec<Place> {
        vec![Place {
            path: user_settings_path(home),
            format: &QWEN_SETTINGS,
            holds: Parts::ALL,
        }]
    }

    fn notes(&self, _scope: &Scope) -> Vec<String> {
        Vec::new()
    }
}
