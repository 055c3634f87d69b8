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
//! Entries are flat (no matcher groups) and hold only `command` and `timeout`: a
//! [`FlatHooksFile`], whose entries are ours when their command runs a binary named `ovhook`
//! with `--harness cursor`.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::install::flat_hooks::FlatHooksFile;
use crate::install::mcp_servers::McpServersFile;
use crate::install::target::{InstallTarget, Parts, Place, Scope};

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
pub static CURSOR_HOOKS: FlatHooksFile = FlatHooksFile {
    describe: "Cursor hooks",
    agent: "Cursor",
    harness: "cursor",
    hooks: &HOOKS,
    command_key: "command",
    entry: |command, timeout| json!({ "command": command, "timeout": timeout }),
    version_key: Some("version"),
    disable_all_key: None,
};

/// `~/.cursor/mcp.json`.
pub static CURSOR_MCP: McpServersFile = McpServersFile {
    describe: "Cursor MCP config",
    entry_type: None,
    all_tools: false,
};

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
    use serde_json::{Map, Value};

    use super::*;
    use crate::install::target::PlaceFormat;

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
        // Another harness's ovhook entry is not ours: neither listed nor removed.
        let mut other: Map<String, Value> = serde_json::from_value(
            json!({"hooks": {"stop": [{"command": "/b/ovhook --harness antigravity stop"}]}}),
        )
        .expect("map");
        assert!(CURSOR_HOOKS.binaries(&other).is_empty());
        assert_eq!(CURSOR_HOOKS.remove(&mut other), 0);
    }
}
