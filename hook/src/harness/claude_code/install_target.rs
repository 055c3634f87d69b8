//! Where Claude Code reads the configuration that runs ovhook.
//!
//! | scope | file | holds |
//! |---|---|---|
//! | user | `~/.claude/settings.json` | hooks: `hooks.<Event>[{matcher?, hooks:[{type:"command", command, timeout, statusMessage}]}]` |
//! | user | `~/.claude.json` | MCP: `mcpServers.openviking` `{type:"stdio", command, args, env}` |
//! | project | `<git root>/.claude/settings.json` | hooks only |
//!
//! A hook's `command` is a shell line, `'<ovhook>' --harness claude-code <event>`; its
//! `timeout` is in seconds; only PreToolUse has a `matcher` (`Read|Glob|Grep`). Our entries
//! are those whose `statusMessage` starts with `openviking-memory:`, or whose command runs a
//! binary named `ovhook` with `--harness claude-code`.

use std::path::{Path, PathBuf};

use serde_json::Value;

pub use crate::install::hook_groups::first_word;
use crate::install::hook_groups::{
    claude_shape_hooks, with_compaction_and_subagents, HookGroupsFile, HookSpec, CLAUDE_ENTRY,
};
use crate::install::mcp_servers::McpServersFile;
use crate::install::target::{InstallTarget, Parts, Place, PluginNote, Scope};

/// The Claude Code target.
pub static CLAUDE_CODE: ClaudeCodeTarget = ClaudeCodeTarget;

/// Claude Code's `settings.json` (user and project files share it).
pub static CLAUDE_SETTINGS: HookGroupsFile = HookGroupsFile {
    describe: "Claude Code settings",
    harness: "claude-code",
    hooks: &OUR_HOOKS,
    tool_hooks: &[],
    mcp: None,
    disable_all_key: Some("disableAllHooks"),
    shape: &CLAUDE_ENTRY,
};

/// `~/.claude.json`.
pub static CLAUDE_JSON: McpServersFile = McpServersFile {
    describe: "Claude Code user file (~/.claude.json)",
    entry_type: Some("stdio"),
    all_tools: false,
};

/// The hooks ovhook installs.
pub static OUR_HOOKS: [HookSpec; 7] =
    with_compaction_and_subagents(claude_shape_hooks("Read|Glob|Grep", 5));

/// `<home>/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when set).
pub fn user_settings_path(home: &Path) -> PathBuf {
    super::transcript::config_dir(home).join("settings.json")
}

/// `<home>/.claude.json`.
pub fn user_file_path(home: &Path) -> PathBuf {
    home.join(".claude.json")
}

/// `<root>/.claude/settings.json`.
pub fn project_settings_path(root: &Path) -> PathBuf {
    root.join(".claude").join("settings.json")
}

/// Claude Code.
#[derive(Debug)]
pub struct ClaudeCodeTarget;

impl InstallTarget for ClaudeCodeTarget {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn title(&self) -> &'static str {
        "Claude Code"
    }

    fn supports_project(&self) -> bool {
        true
    }

    fn places(&self, home: &Path, scope: &Scope) -> Vec<Place> {
        match scope {
            Scope::User => vec![
                Place {
                    path: user_settings_path(home),
                    format: &CLAUDE_SETTINGS,
                    holds: Parts::HOOKS,
                },
                Place {
                    path: user_file_path(home),
                    format: &CLAUDE_JSON,
                    holds: Parts::MCP,
                },
            ],
            Scope::Project { root } => vec![Place {
                path: project_settings_path(root),
                format: &CLAUDE_SETTINGS,
                holds: Parts::HOOKS,
            }],
        }
    }

    fn events(&self) -> &'static str {
        "SessionStart, UserPromptSubmit, PreToolUse (Read|Glob|Grep), Stop, SessionEnd, PreCompact, SubagentStop"
    }

    fn notes(&self, scope: &Scope) -> Vec<String> {
        match scope {
            Scope::User => Vec::new(),
            Scope::Project { root } => vec![format!(
                "{} is inside the repository and may be committed: it names this machine's \
                 ovhook binary and holds no credentials or URLs",
                project_settings_path(root).display()
            )],
        }
    }

    fn plugin_serves(&self, home: &Path) -> Option<String> {
        super::plugin::installed(home)
            .into_iter()
            .find(|p| p.runs_stable_home)
            .map(|p| p.id)
    }

    /// The plugin runs the stable home's binary, whatever `exe` is.
    fn plugin_running(&self, home: &Path, _exe: &Path) -> Option<String> {
        self.plugin_serves(home)
            .map(|id| format!("the Claude Code plugin {id}"))
    }

    fn plugin_removal(&self, id: &str) -> String {
        format!("claude plugin uninstall {id}")
    }

    /// Nothing is relinked: the plugin runs the stable home's binary (which install just placed)
    /// or, as bundles before the stable home shipped it, its own copy in Claude Code's cache
    /// (updating the plugin upgrades that one).
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
                    "the ovhook Claude Code plugin {} is installed too ({}): every event would \
                     run twice. Keep one: claude plugin disable {}, or ovhook uninstall \
                     --harness claude-code",
                    p.id,
                    p.root.display(),
                    p.id
                ))
            })
            .collect())
    }
}

/// An entry written by ovhook.
pub fn is_ours(entry: &Value) -> bool {
    CLAUDE_SETTINGS.is_ours(entry)
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use crate::install::target::PlaceFormat;
    use serde_json::json;

    #[test]
    fn commands_quote_the_binary_and_read_back() {
        let exe = Path::new("/opt/my bin/it's/ovhook");
        let cmd = CLAUDE_SETTINGS.command(exe, "stop");
        assert_eq!(
            cmd,
            r"'/opt/my bin/it'\''s/ovhook' --harness claude-code stop"
        );
        assert_eq!(first_word(&cmd), "/opt/my bin/it's/ovhook");
        assert!(is_ours(&json!({"type": "command", "command": cmd})));
        assert!(is_ours(
            &json!({"command": "/usr/bin/ovhook --harness claude-code stop"})
        ));
        assert!(!is_ours(&json!({"command": "/usr/bin/ovhook stop"})));
        assert!(!is_ours(
            &json!({"command": "echo ovhook --harness claude-code"})
        ));
    }

    #[test]
    fn merge_keeps_foreign_hooks_is_idempotent_and_removes_cleanly() {
        let foreign = json!({
            "model": "x",
            "hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]
            }
        });
        let Value::Object(mut root) = foreign.clone() else {
            panic!()
        };
        let exe = Path::new("/opt/ovhook");
        CLAUDE_SETTINGS.validate(&root).expect("valid");
        CLAUDE_SETTINGS.merge(&mut root, exe, Parts::HOOKS);
        let once = root.clone();
        CLAUDE_SETTINGS.merge(&mut root, exe, Parts::HOOKS);
        assert_eq!(root, once, "idempotent");
        let hooks = root["hooks"].as_object().expect("hooks");
        for spec in &OUR_HOOKS {
            let (event, sub, matcher, timeout) =
                (spec.event, spec.sub, spec.matcher, spec.timeout_s);
            let ours: Vec<&Value> = hooks[event]
                .as_array()
                .expect("list")
                .iter()
                .filter(|g| g["hooks"].as_array().is_some_and(|h| h.iter().any(is_ours)))
                .collect();
            assert_eq!(ours.len(), 1, "{event}");
            assert_eq!(ours[0].get("matcher").and_then(Value::as_str), matcher);
            let e = &ours[0]["hooks"][0];
            assert_eq!(e["type"], "command");
            assert_eq!(e["timeout"], timeout);
            assert!(e["command"].as_str().expect("cmd").ends_with(sub));
        }
        assert_eq!(
            hooks["Stop"].as_array().expect("list").len(),
            2,
            "foreign kept"
        );
        assert_eq!(CLAUDE_SETTINGS.binaries(&root), ["/opt/ovhook"]);
        assert_eq!(CLAUDE_SETTINGS.remove(&mut root), OUR_HOOKS.len());
        assert_eq!(
            Value::Object(root),
            foreign,
            "uninstall leaves the file as it was"
        );
    }

    #[test]
    fn malformed_shapes_are_refused() {
        for bad in [
            json!({"hooks": []}),
            json!({"hooks": {"Stop": {}}}),
            json!({"hooks": {"Stop": [1]}}),
            json!({"hooks": {"Stop": [{"hooks": {}}]}}),
        ] {
            let Value::Object(root) = bad else { panic!() };
            assert!(CLAUDE_SETTINGS.validate(&root).is_err(), "{root:?}");
        }
    }
}
