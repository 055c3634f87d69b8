//! Where GitHub Copilot CLI reads the configuration that runs ovhook.
//!
//! | scope | file | holds |
//! |---|---|---|
//! | user | `$COPILOT_HOME/settings.json` (`~/.copilot/settings.json`) | hooks (`hooks.<event>`) |
//! | user | `$COPILOT_HOME/mcp-config.json` | MCP (`mcpServers`, `type: "local"`) |
//!
//! ```text
//! { "hooks": { "<event>": [ { "type": "command", "bash": "<shell line>", "timeoutSec": N,
//!                             "env": { "OPENVIKING_INTEGRATION_ID": "openviking-memory" } } ] },
//!   ...every other key belongs to Copilot or the user and is kept as is... }
//! ```
//!
//! The camelCase event names are used: their payloads are the documented ones and their
//! output is honoured. There is no matcher level: the guard sees every tool call and
//! passes all but the file and shell tools. An entry is ours when its `env` carries the
//! integration id or its `bash` line runs `ovhook --harness copilot`.

use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::{json, Map, Value};

use super::transcript::state_dir;
use crate::install::hook_groups::{first_word, shell_quote};
use crate::install::json_doc::object_at;
use crate::install::marker::{mentions_integration, INTEGRATION_ID};
use crate::install::mcp_servers::McpServersFile;
use crate::install::target::{InstallTarget, Parts, Place, PlaceFormat, Scope};

/// Our hooks: Copilot event, subcommand, `timeoutSec`.
pub const HOOKS: [(&str, &str, u64); 7] = [
    ("sessionStart", "session-start", 15),
    ("userPromptSubmitted", "user-prompt-submit", 10),
    ("preToolUse", "pre-tool-use", 5),
    ("agentStop", "stop", 10),
    ("sessionEnd", "session-end", 10),
    // Sends and commits before the compaction, within its own 10 s budget.
    ("preCompact", "pre-compact", 30),
    ("subagentStop", "subagent-stop", 10),
];

/// `settings.json`'s `hooks`.
pub static COPILOT_SETTINGS: CopilotSettings = CopilotSettings;

/// `mcp-config.json`.
pub static COPILOT_MCP: McpServersFile = McpServersFile {
    describe: "Copilot CLI MCP config",
    entry_type: Some("local"),
    all_tools: true,
};

/// Copilot's `settings.json` hooks.
#[derive(Debug)]
pub struct CopilotSettings;

fn is_ours(entry: &Value) -> bool {
    mentions_integration(entry)
        || entry
            .get("bash")
            .and_then(Value::as_str)
            .is_some_and(|b| b.contains("ovhook") && b.contains("--harness copilot"))
}

fn command(exe: &Path, sub: &str) -> String {
    format!(
        "{} --harness copilot {sub}",
        shell_quote(&exe.to_string_lossy())
    )
}

impl PlaceFormat for CopilotSettings {
    fn describe(&self) -> &'static str {
        "Copilot CLI settings"
    }

    fn validate(&self, root: &Map<String, Value>) -> anyhow::Result<()> {
        if let Some(hooks) = root.get("hooks") {
            let Value::Object(events) = hooks else {
                bail!("\"hooks\" is not an object");
            };
            for (name, entries) in events {
                if !entries.is_array() {
                    bail!("\"hooks.{name}\" is not a list");
                }
            }
        }
        Ok(())
    }

    fn merge(&self, root: &mut Map<String, Value>, exe: &Path, want: Parts) -> Vec<String> {
        if !want.hooks {
            self.remove(root);
            return Vec::new();
        }
        let events = object_at(root, "hooks");
        for (event, sub, timeout) in HOOKS {
            let entry = json!({
                "type": "command",
                "bash": command(exe, sub),
                "timeoutSec": timeout,
                "env": { "OPENVIKING_INTEGRATION_ID": INTEGRATION_ID },
            });
            let list = events
                .entry(event)
                .or_insert_with(|| Value::Array(Vec::new()));
            if !list.is_array() {
                *list = Value::Array(Vec::new());
            }
            if let Value::Array(list) = list {
                let at = list.iter().position(is_ours).unwrap_or(list.len());
                list.retain(|e| !is_ours(e));
                list.insert(at.min(list.len()), entry);
            }
        }
        Vec::new()
    }

    fn remove(&self, root: &mut Map<String, Value>) -> usize {
        let Some(Value::Object(events)) = root.get_mut("hooks") else {
            return 0;
        };
        let mut removed = 0;
        for list in events.values_mut() {
            if let Value::Array(list) = list {
                let before = list.len();
                list.retain(|e| !is_ours(e));
                removed += before - list.len();
            }
        }
        events.retain(|_, l| !matches!(l, Value::Array(l) if l.is_empty()));
        if events.is_empty() {
            root.remove("hooks");
        }
        removed
    }

    fn binaries(&self, root: &Map<String, Value>) -> Vec<String> {
        root.get("hooks")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|e| e.values())
            .filter_map(Value::as_array)
            .flatten()
            .filter(|e| is_ours(e))
            .filter_map(|e| e.get("bash").and_then(Value::as_str))
            .map(first_word)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    fn warnings(&self, root: &Map<String, Value>, path: &Path) -> Vec<String> {
        if root.get("disableAllHooks") == Some(&Value::Bool(true)) {
            vec![format!(
                "{}: \"disableAllHooks\" is true: Copilot CLI runs no hooks, ovhook's included",
                path.display()
            )]
        } else {
            Vec::new()
        }
    }
}

/// The Copilot target.
pub static COPILOT: CopilotTarget = CopilotTarget;

/// GitHub Copilot CLI.
#[derive(Debug)]
pub struct CopilotTarget;

impl CopilotTarget {
    fn settings_path(home: &Path) -> PathBuf {
        state_dir(home).join("settings.json")
    }
}

impl InstallTarget for CopilotTarget {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn title(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn supports_project(&self) -> bool {
        false
    }

    fn events(&self) -> &'static str {
        "sessionStart, userPromptSubmitted, preToolUse, agentStop, sessionEnd, preCompact, subagentStop"
    }

    fn places(&self, home: &Path, _scope: &Scope) -> Vec<Place> {
        vec![
            Place {
                path: Self::settings_path(home),
                format: &COPILOT_SETTINGS,
                holds: Parts::HOOKS,
            },
            Place {
                path: state_dir(home).join("mcp-config.json"),
                format: &COPILOT_MCP,
                holds: Parts::MCP,
            },
        ]
    }

    fn notes(&self, _scope: &Scope) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    #[test]
    fn merges_in_place_and_keeps_foreign_entries() {
        let mut root: Map<String, Value> = serde_json::from_value(json!({
            "model": "x",
            "hooks": {"agentStop": [{"type": "command", "bash": "echo mine"}]}
        }))
        .expect("map");
        let exe = Path::new("/opt/ovhook");
        COPILOT_SETTINGS.merge(&mut root, exe, Parts::HOOKS);
        let once = root.clone();
        COPILOT_SETTINGS.merge(&mut root, exe, Parts::HOOKS);
        assert_eq!(root, once);
        assert_eq!(root["hooks"]["agentStop"][0]["bash"], "echo mine");
        assert_eq!(
            root["hooks"]["agentStop"][1]["bash"],
            "'/opt/ovhook' --harness copilot stop"
        );
        assert_eq!(COPILOT_SETTINGS.binaries(&root), ["/opt/ovhook"]);
        let mut off = root.clone();
        off.insert("disableAllHooks".into(), json!(true));
        assert_eq!(COPILOT_SETTINGS.warnings(&off, Path::new("/s")).len(), 1);
        assert_eq!(COPILOT_SETTINGS.remove(&mut root), HOOKS.len());
        assert_eq!(
            Value::Object(root),
            json!({"model": "x", "hooks": {"agentStop": [{"type": "command", "bash": "echo mine"}]}})
        );
    }
}
