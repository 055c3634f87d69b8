//! Where Gemini CLI reads the configuration that runs ovhook.
//!
//! | scope | file | holds |
//! |---|---|---|
//! | user | `~/.gemini/settings.json` (`$GEMINI_CLI_HOME/.gemini/settings.json`) | hooks (`hooks.<Event>`, Claude Code's shape in Gemini's spelling), MCP (`mcpServers`) |
//! | project | `<repo>/.gemini/settings.json` | hooks |
//!
//! ```text
//! { "hooks": { "<Event>": [ { "matcher"?: "read_file|…",
//!                             "hooks": [ { "type": "command", "name": "openviking-memory-<sub>",
//!                                          "command": "<shell line>", "timeout": <ms>,
//!                                          "description": "openviking-memory: …" } ] } ],
//!              "enabled"?, "disabled"?, "notifications"? (the older spelling of hooksConfig's: kept) },
//!   ...every other key belongs to Gemini or the user and is kept as is... }
//! ```
//!
//! Events: SessionStart, BeforeAgent (our UserPromptSubmit), BeforeTool (PreToolUse; the
//! matcher is a regular expression over Gemini's tool names), AfterAgent (Stop),
//! SessionEnd. Gemini runs no hook of any settings file in a folder the user has not
//! trusted (its folder-trust prompt, recorded in `~/.gemini/trustedFolders.json`).

use std::path::{Path, PathBuf};

use super::transcript::gemini_dir;
use serde_json::{json, Map, Value};

use crate::install::hook_groups::{EntryShape, HookGroupsFile, HookSpec};
use crate::install::mcp_servers::McpServersFile;
use crate::install::target::{InstallTarget, Parts, Place, Scope};

/// The hooks ovhook installs into Gemini CLI (timeouts in seconds here, written in ms).
pub static HOOKS: [HookSpec; 5] = [
    HookSpec {
        event: "SessionStart",
        sub: "session-start",
        matcher: None,
        timeout_s: 15,
        status: "openviking-memory: loading your profile",
    },
    HookSpec {
        event: "BeforeAgent",
        sub: "user-prompt-submit",
        matcher: None,
        timeout_s: 10,
        status: "openviking-memory: recalling memories",
    },
    HookSpec {
        event: "BeforeTool",
        sub: "pre-tool-use",
        matcher: Some("read_file|glob|grep_search|run_shell_command"),
        timeout_s: 5,
        status: "openviking-memory: checking viking:// paths",
    },
    HookSpec {
        event: "AfterAgent",
        sub: "stop",
        matcher: None,
        timeout_s: 10,
        status: "openviking-memory: saving the turn",
    },
    HookSpec {
        event: "SessionEnd",
        sub: "session-end",
        matcher: None,
        timeout_s: 10,
        status: "openviking-memory: saving the session",
    },
];

/// `mcpServers` entries in Gemini's settings.
pub static GEMINI_MCP: McpServersFile = McpServersFile {
    describe: "Gemini CLI settings",
    entry_type: None,
    all_tools: false,
};

/// `~/.gemini/settings.json` (user) and `<repo>/.gemini/settings.json` (project).
pub static GEMINI_SETTINGS: HookGroupsFile = HookGroupsFile {
    describe: "Gemini CLI settings",
    harness: "gemini",
    hooks: &HOOKS,
    tool_hooks: &[],
    mcp: Some(&GEMINI_MCP),
    disable_all_key: None,
    shape: &GEMINI_ENTRY,
};

/// Gemini's spelling of an entry: `timeout` in milliseconds, `name` and `description` (its
/// schema has no `statusMessage`); `hooks.enabled`, `hooks.disabled` and `hooks.notifications`
/// (the older spelling of `hooksConfig`'s) are settings, not events; `hooksConfig.enabled:
/// false` turns every hook off, and a name of ours in `hooksConfig.disabled` turns that one off.
pub static GEMINI_ENTRY: EntryShape = EntryShape {
    status_key: "description",
    settings_keys: &["enabled", "disabled", "notifications"],
    entry: gemini_entry,
    all_off: hooks_config_off,
    ours_off: hooks_config_disabled,
};

fn gemini_entry(command: String, spec: &HookSpec) -> Value {
    json!({
        "type": "command",
        "name": format!("openviking-memory-{}", spec.sub),
        "command": command,
        "timeout": spec.timeout_s.saturating_mul(1000),
        "description": spec.status,
    })
}

fn hooks_config_off(root: &Map<String, Value>) -> Option<String> {
    let enabled = root.get("hooksConfig").and_then(|c| c.get("enabled"));
    (enabled == Some(&Value::Bool(false))).then(|| "\"hooksConfig.enabled\" is false".to_owned())
}

/// Gemini skips every hook whose name (else command) `hooksConfig.disabled` lists.
fn hooks_config_disabled(root: &Map<String, Value>, ours: &[&Value]) -> Option<String> {
    let disabled: Vec<&str> = root
        .get("hooksConfig")
        .and_then(|c| c.get("disabled"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let off: Vec<&str> = ours
        .iter()
        .filter_map(|e| e.get("name").or_else(|| e.get("command"))?.as_str())
        .filter(|name| disabled.contains(name))
        .collect();
    (!off.is_empty()).then(|| {
        format!(
            "\"hooksConfig.disabled\" turns off ovhook's {}",
            off.join(", ")
        )
    })
}

/// The user's `settings.json`.
pub fn user_settings_path(home: &Path) -> PathBuf {
    gemini_dir(home).join("settings.json")
}

/// `<root>/.gemini/settings.json`.
pub fn project_settings_path(root: &Path) -> PathBuf {
    root.join(".gemini").join("settings.json")
}

/// The Gemini CLI target.
pub static GEMINI: GeminiTarget = GeminiTarget;

/// Gemini CLI.
#[derive(Debug)]
pub struct GeminiTarget;

impl InstallTarget for GeminiTarget {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn supports_project(&self) -> bool {
        true
    }

    fn events(&self) -> &'static str {
        "SessionStart, BeforeAgent, BeforeTool (read_file|glob|grep_search|run_shell_command), AfterAgent, SessionEnd"
    }

    fn places(&self, home: &Path, scope: &Scope) -> Vec<Place> {
        match scope {
            Scope::User => vec![Place {
                path: user_settings_path(home),
                format: &GEMINI_SETTINGS,
                holds: Parts::ALL,
            }],
            Scope::Project { root } => vec![Place {
                path: project_settings_path(root),
                format: &GEMINI_SETTINGS,
                holds: Parts::HOOKS,
            }],
        }
    }

    fn notes(&self, scope: &Scope) -> Vec<String> {
        let mut notes = vec![
            "Gemini CLI runs hooks only in folders you trust (its folder-trust prompt)".to_owned(),
        ];
        if let Scope::Project { root } = scope {
            notes.push(format!(
                "{} is inside the repository and may be committed: it names this machine's \
                 ovhook binary and holds no credentials or URLs",
                project_settings_path(root).display()
            ));
        }
        notes
    }
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use crate::install::target::PlaceFormat;

    #[test]
    fn gemini_entries_keep_gemini_settings_and_foreign_hooks() {
        let mut root: Map<String, Value> = serde_json::from_value(json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "hooks": {
                "enabled": true,
                "disabled": [],
                "AfterAgent": [{"hooks": [{"type": "command", "command": "echo mine"}]}]
            }
        }))
        .expect("map");
        GEMINI_SETTINGS.validate(&root).expect("valid");
        let exe = Path::new("/opt/ovhook");
        GEMINI_SETTINGS.merge(&mut root, exe, Parts::HOOKS);
        let once = root.clone();
        GEMINI_SETTINGS.merge(&mut root, exe, Parts::HOOKS);
        assert_eq!(root, once);
        GEMINI_SETTINGS.validate(&root).expect("still valid");
        let ours = &root["hooks"]["AfterAgent"][1]["hooks"][0];
        assert_eq!(ours["command"], "'/opt/ovhook' --harness gemini stop");
        assert_eq!(ours["timeout"], 10_000, "Gemini counts milliseconds");
        assert_eq!(ours["name"], "openviking-memory-stop");
        assert!(ours.get("statusMessage").is_none());
        assert_eq!(
            root["hooks"]["BeforeTool"][0]["matcher"],
            "read_file|glob|grep_search|run_shell_command"
        );
        assert_eq!(GEMINI_SETTINGS.binaries(&root), ["/opt/ovhook"]);
        let mut off = root.clone();
        off.insert("hooksConfig".into(), json!({"enabled": false}));
        assert_eq!(GEMINI_SETTINGS.warnings(&off, Path::new("/s")).len(), 1);
        off.insert(
            "hooksConfig".into(),
            json!({"disabled": ["openviking-memory-stop", "echo mine"]}),
        );
        let said = GEMINI_SETTINGS.warnings(&off, Path::new("/s"));
        assert_eq!(said.len(), 1);
        assert!(
            said[0].ends_with("turns off ovhook's openviking-memory-stop"),
            "{said:?}"
        );
        assert!(GEMINI_SETTINGS.warnings(&root, Path::new("/s")).is_empty());
        assert_eq!(GEMINI_SETTINGS.remove(&mut root), 5);
        assert_eq!(
            Value::Object(root),
            json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "hooks": {
                    "enabled": true,
                    "disabled": [],
                    "AfterAgent": [{"hooks": [{"type": "command", "command": "echo mine"}]}]
                }
            })
        );
    }
}
