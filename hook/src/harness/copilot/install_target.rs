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

use serde_json::json;

use super::transcript::state_dir;
use crate::install::flat_hooks::FlatHooksFile;
use crate::install::marker::INTEGRATION_ID;
use crate::install::mcp_servers::McpServersFile;
use crate::install::target::{InstallTarget, Parts, Place, Scope};

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
pub static COPILOT_SETTINGS: FlatHooksFile = FlatHooksFile {
    describe: "Copilot CLI settings",
    agent: "Copilot CLI",
    harness: "copilot",
    hooks: &HOOKS,
    command_key: "bash",
    entry: |bash, timeout| {
        json!({
            "type": "command",
            "bash": bash,
            "timeoutSec": timeout,
            "env": { "OPENVIKING_INTEGRATION_ID": INTEGRATION_ID },
        })
    },
    version_key: None,
    disable_all_key: Some("disableAllHooks"),
};

/// `mcp-config.json`.
pub static COPILOT_MCP: McpServersFile = McpServersFile {
    describe: "Copilot CLI MCP config",
    entry_type: Some("local"),
    all_tools: true,
};

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
    use serde_json::{Map, Value};

    use super::*;
    use crate::install::target::PlaceFormat;

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
