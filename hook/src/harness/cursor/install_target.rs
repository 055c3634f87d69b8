//! Where Cursor reads the configuration that runs ovhook.
//!
//! | scope | file | holds |
//! |---|---|---|
//! | user | `~/.cursor/hooks.json` | hooks |
//! | user | `~/.cursor/mcp.json` | MCP (`mcpServers`) |
//! | project | `<repo>/.cursor/hooks.json` (run in trusted workspaces only) | hooks |
//!
//! ```text
//! { "version": 1,
//!   "hooks": { "<event>": [ { "command": "<shell line>", "timeout": <seconds> } ] },
//!   ...every other key belongs to Cursor or the user and is kept as is... }
//! ```
//!
//! Entries are flat (no matcher groups) and hold only `command` and `timeout`, so an entry is
//! ours when its command runs a binary named `ovhook` with `--harness cursor`. Ours are
//! removed entry by entry; a re-install puts each back where the first of ours was, so it
//! rewrites the file byte for byte.

use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::{json, Map, Value};

use crate::install::hook_groups::{first_word, shell_quote};
use crate::install::json_doc::object_at;
use crate::install::mcp_servers::McpServersFile;
use crate::install::target::{InstallTarget, Parts, Place, PlaceFormat, Scope};

/// Our hooks: Cursor event, subcommand, `timeout` in seconds.
pub const HOOKS: [(&str, &str, u64); 6] = [
    ("sessionStart", "session-start", 15),
    ("beforeSubmitPrompt", "user-prompt-submit", 10),
    ("beforeReadFile", "pre-tool-use", 5),
    ("stop", "stop", 10),
    ("preCompact", "pre-compact", 30),
    ("sessionEnd", "session-end", 10),
];

/// `hooks.json`.
pub static CURSOR_HOOKS: CursorHooks = CursorHooks;

/// `~/.cursor/mcp.json`.
pub static CURSOR_MCP: McpServersFile = McpServersFile {
    describe: "Cursor MCP config",
    entry_type: None,
    all_tools: false,
};

/// Cursor's `hooks.json`.
#[derive(Debug)]
pub struct CursorHooks;

fn is_ours(entry: &Value) -> bool {
    let Some(cmd) = entry.get("command").and_then(Value::as_str) else {
        return false;
    };
    let exe = first_word(cmd);
    Path::new(&exe)
        .file_name()
        .is_some_and(|n| n == "ovhook" || n == "ovhook.exe")
        && cmd.contains("--harness cursor")
}

fn command(exe: &Path, sub: &str) -> String {
    format!(
        "{} --harness cursor {sub}",
        shell_quote(&exe.to_string_lossy())
    )
}

impl PlaceFormat for CursorHooks {
    fn describe(&self) -> &'static str {
        "Cursor hooks"
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
        if !root.get("version").is_some_and(Value::is_number) {
            root.insert("version".into(), json!(1));
        }
        let events = object_at(root, "hooks");
        for (event, sub, timeout) in HOOKS {
            let entry = json!({ "command": command(exe, sub), "timeout": timeout });
            let list = events
                .entry(event)
                .or_insert_with(|| Value::Array(Vec::new()));
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
            .filter_map(|e| e.get("command").and_then(Value::as_str))
            .map(first_word)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    fn is_residue(&self, root: &Map<String, Value>) -> bool {
        root.keys().all(|k| k == "version")
    }
}

/// `~/.cursor`.
pub fn cursor_dir(home: &Path) -> PathBuf {
    home.join(".cursor")
}

/// The Cursor target.
pub static CURSOR: CursorTarget = CursorTarget;

/// Cursor.
#[derive(Debug)]
pub struct CursorTarget;

impl InstallTarget for CursorTarget {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn title(&self) -> &'static str {
        "Cursor"
    }

    fn supports_project(&self) -> bool {
        true
    }

    fn events(&self) -> &'static str {
        "sessionStart, beforeSubmitPrompt, beforeReadFile, stop, preCompact, sessionEnd"
    }

    fn places(&self, home: &Path, scope: &Scope) -> Vec<Place> {
        match scope {
            Scope::User => vec![
                Place {
                    path: cursor_dir(home).join("hooks.json"),
                    format: &CURSOR_HOOKS,
                    holds: Parts::HOOKS,
                },
                Place {
                    path: cursor_dir(home).join("mcp.json"),
                    format: &CURSOR_MCP,
                    holds: Parts::MCP,
                },
            ],
            Scope::Project { root } => vec![Place {
                path: cursor_dir(root).join("hooks.json"),
                format: &CURSOR_HOOKS,
                holds: Parts::HOOKS,
            }],
        }
    }

    fn notes(&self, scope: &Scope) -> Vec<String> {
        let mut notes = vec![
            "Cursor loads hooks.json when it starts: restart Cursor (untested against the real app)"
                .to_owned(),
        ];
        if let Scope::Project { root } = scope {
            notes.push(format!(
                "{} is inside the repository and may be committed (Cursor runs it in trusted \
                 workspaces): it names this machine's ovhook binary and holds no credentials or URLs",
                cursor_dir(root).join("hooks.json").display()
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

    #[test]
    fn merges_in_place_keeps_foreign_entries_and_removes_only_ours() {
        let foreign = json!({
            "version": 1,
            "hooks": {"stop": [{"command": "./hooks/audit.sh"}],
                      "afterFileEdit": [{"command": "./hooks/format.sh"}]}
        });
        let mut root: Map<String, Value> = serde_json::from_value(foreign.clone()).expect("map");
        CURSOR_HOOKS.validate(&root).expect("valid");
        let exe = Path::new("/opt/ov hook/ovhook");
        CURSOR_HOOKS.merge(&mut root, exe, Parts::HOOKS);
        let once = root.clone();
        CURSOR_HOOKS.merge(&mut root, exe, Parts::HOOKS);
        assert_eq!(root, once, "a re-install changes nothing");
        assert_eq!(root["hooks"]["stop"][0]["command"], "./hooks/audit.sh");
        assert_eq!(
            root["hooks"]["stop"][1],
            json!({"command": "'/opt/ov hook/ovhook' --harness cursor stop", "timeout": 10})
        );
        assert_eq!(
            root["hooks"]["beforeReadFile"][0]["command"],
            "'/opt/ov hook/ovhook' --harness cursor pre-tool-use"
        );
        assert_eq!(CURSOR_HOOKS.binaries(&root), ["/opt/ov hook/ovhook"]);
        assert_eq!(CURSOR_HOOKS.remove(&mut root), HOOKS.len());
        assert_eq!(Value::Object(root), foreign);
        let mut fresh = Map::new();
        CURSOR_HOOKS.merge(&mut fresh, exe, Parts::HOOKS);
        assert_eq!(fresh["version"], 1);
        CURSOR_HOOKS.remove(&mut fresh);
        assert!(CURSOR_HOOKS.is_residue(&fresh), "{fresh:?}");
        let bad: Map<String, Value> =
            serde_json::from_value(json!({"hooks": {"stop": {}}})).expect("map");
        assert!(CURSOR_HOOKS.validate(&bad).is_err());
        let other = json!({"command": "/b/ovhook --harness antigravity stop"});
        assert!(!is_ours(&other));
    }
}
