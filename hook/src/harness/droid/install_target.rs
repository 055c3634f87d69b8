//! Where Factory Droid reads the configuration that runs ovhook.
//!
//! | scope | file | holds |
//! |---|---|---|
//! | user | `~/.factory/settings.json` | hooks (`hooks.<Event>`, Claude Code's shape) |
//!
//! Where Droid keeps its MCP servers was not recorded: install writes hooks only, and its note
//! says how to add the OpenViking MCP server by hand. PreToolUse matches Droid's file and
//! shell tools (`Read|LS|Grep|Glob|Execute`). Droid's tool payloads carry no tool output shape
//! we have recorded, so PostToolUse is not installed.

use std::path::{Path, PathBuf};

use crate::install::hook_groups::{claude_shape_hooks, HookGroupsFile, HookSpec, CLAUDE_ENTRY};
use crate::install::target::{InstallTarget, Parts, Place, Scope};

/// The hooks ovhook installs into Droid.
pub static HOOKS: [HookSpec; 5] = claude_shape_hooks("Read|LS|Grep|Glob|Execute", 10);

/// `~/.factory/settings.json`.
pub static DROID_SETTINGS: HookGroupsFile = HookGroupsFile {
    describe: "Droid settings",
    harness: "droid",
    hooks: &HOOKS,
    tool_hooks: &[],
    mcp: None,
    disable_all_key: None,
    shape: &CLAUDE_ENTRY,
};

/// `<home>/.factory`, Droid's configuration folder.
pub fn factory_dir(home: &Path) -> PathBuf {
    home.join(".factory")
}

/// `<home>/.factory/settings.json`.
pub fn user_settings_path(home: &Path) -> PathBuf {
    factory_dir(home).join("settings.json")
}

/// The Droid target.
pub static DROID: DroidTarget = DroidTarget;

/// Factory Droid.
#[derive(Debug)]
pub struct DroidTarget;

impl InstallTarget for DroidTarget {
    fn name(&self) -> &'static str {
        "droid"
    }

    fn title(&self) -> &'static str {
        "Factory Droid"
    }

    fn supports_project(&self) -> bool {
        false
    }

    fn events(&self) -> &'static str {
        "SessionStart, UserPromptSubmit, PreToolUse (Read|LS|Grep|Glob|Execute), Stop, SessionEnd"
    }

    fn places(&self, home: &Path, _scope: &Scope) -> Vec<Place> {
        vec![Place {
            path: user_settings_path(home),
            format: &DROID_SETTINGS,
            holds: Parts::HOOKS,
        }]
    }

    fn notes(&self, _scope: &Scope) -> Vec<String> {
        vec!["Droid's MCP servers are not written by install: for OpenViking's MCP tools in \
              Droid, add a stdio MCP server named openviking that runs the ovhook binary the \
              hooks above run, with the argument mcp"
            .to_owned()]
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
    use serde_json::{json, Value};

    #[test]
    fn hooks_go_in_claude_codes_shape_beside_foreign_ones() {
        let foreign = json!({
            "model": "x",
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]}
        });
        let Value::Object(mut root) = foreign.clone() else {
            panic!()
        };
        let exe = Path::new("/opt/ovhook");
        DROID_SETTINGS.validate(&root).expect("valid");
        DROID_SETTINGS.merge(&mut root, exe, Parts::HOOKS);
        let hooks = root["hooks"].as_object().expect("hooks");
        let events: Vec<_> = HOOKS.iter().map(|h| h.event).collect();
        assert_eq!(
            events,
            ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd"]
        );
        let pre = &hooks["PreToolUse"][0];
        assert_eq!(pre["matcher"], "Read|LS|Grep|Glob|Execute");
        assert_eq!(pre["hooks"][0]["type"], "command");
        assert_eq!(
            pre["hooks"][0]["command"],
            "'/opt/ovhook' --harness droid pre-tool-use"
        );
        assert_eq!(hooks["Stop"].as_array().map(Vec::len), Some(2));
        assert!(root.get("mcpServers").is_none(), "no MCP entry is written");
        let notes = DROID.notes(&Scope::User);
        assert!(
            notes.iter().any(|n| n.contains("openviking") && n.ends_with("mcp")),
            "the install says how to add the MCP server by hand: {notes:?}"
        );
        assert_eq!(DROID_SETTINGS.remove(&mut root), HOOKS.len());
        assert_eq!(Value::Object(root), foreign);
        assert_eq!(
            user_settings_path(Path::new("/h")),
            Path::new("/h/.factory/settings.json")
        );
    }
}
