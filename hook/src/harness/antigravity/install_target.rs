//! Where Antigravity CLI (`agy`) reads the configuration that runs ovhook.
//!
//! | scope | file | holds |
//! |---|---|---|
//! | user | `~/.gemini/config/hooks.json` | hooks |
//! | project | `<repo>/.agents/hooks.json` | hooks |
//!
//! ```text
//! { "<hook name>": { "enabled"?: bool,
//!                    "<Event>": [ { "type": "command", "command": "<shell line>", "timeout": <seconds> } ] },
//!   ...every other hook name belongs to the user or another tool and is kept as is... }
//! ```
//!
//! Ours is the hook named `openviking-memory`, whole: install writes it, uninstall removes it,
//! nothing else in the file is touched. Only SessionStart, PreInvocation, PostInvocation and
//! Stop load (other event names are dropped by Antigravity, its log says so); PostInvocation
//! has nothing for us. Antigravity runs a hook's command with `sh -c`.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::install::hook_groups::{first_word, shell_quote};
use crate::install::marker::INTEGRATION_ID;
use crate::install::target::{InstallTarget, Parts, Place, PlaceFormat, Scope};

/// Our hooks: Antigravity event, subcommand, `timeout` in seconds.
pub const HOOKS: [(&str, &str, u64); 3] = [
    ("SessionStart", "session-start", 15),
    ("PreInvocation", "user-prompt-submit", 10),
    ("Stop", "stop", 10),
];

/// `hooks.json`.
pub static AGY_HOOKS: AgyHooks = AgyHooks;

/// Antigravity's `hooks.json`.
#[derive(Debug)]
pub struct AgyHooks;

impl AgyHooks {
    fn ours(root: &Map<String, Value>) -> impl Iterator<Item = &Value> {
        root.get(INTEGRATION_ID)
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|group| group.values())
            .filter_map(Value::as_array)
            .flatten()
    }
}

fn command(exe: &Path, sub: &str) -> String {
    format!(
        "{} --harness antigravity {sub}",
        shell_quote(&exe.to_string_lossy())
    )
}

impl PlaceFormat for AgyHooks {
    fn describe(&self) -> &'static str {
        "Antigravity hooks"
    }

    fn validate(&self, _root: &Map<String, Value>) -> anyhow::Result<()> {
        // Our key is replaced whole; every other key is left as it is, whatever it holds.
        Ok(())
    }

    fn merge(&self, root: &mut Map<String, Value>, exe: &Path, want: Parts) -> Vec<String> {
        if !want.hooks {
            self.remove(root);
            return Vec::new();
        }
        let mut group = Map::new();
        group.insert("enabled".into(), json!(true));
        for (event, sub, timeout) in HOOKS {
            group.insert(
                event.into(),
                json!([{ "type": "command", "command": command(exe, sub), "timeout": timeout }]),
            );
        }
        // In place when it is there (a re-install rewrites the file byte for byte), else last.
        match root.get_mut(INTEGRATION_ID) {
            Some(slot) => *slot = Value::Object(group),
            None => {
                root.insert(INTEGRATION_ID.into(), Value::Object(group));
            }
        }
        Vec::new()
    }

    fn remove(&self, root: &mut Map<String, Value>) -> usize {
        let n = Self::ours(root).count();
        match root.remove(INTEGRATION_ID) {
            Some(_) => n.max(1),
            None => 0,
        }
    }

    fn binaries(&self, root: &Map<String, Value>) -> Vec<String> {
        Self::ours(root)
            .filter_map(|e| e.get("command").and_then(Value::as_str))
            .map(first_word)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    fn warnings(&self, root: &Map<String, Value>, path: &Path) -> Vec<String> {
        let off =
            root.get(INTEGRATION_ID).and_then(|g| g.get("enabled")) == Some(&Value::Bool(false));
        if off {
            vec![format!(
                "{}: \"{INTEGRATION_ID}.enabled\" is false: Antigravity runs none of ovhook's hooks",
                path.display()
            )]
        } else {
            Vec::new()
        }
    }
}

/// `~/.gemini/config/hooks.json`.
pub fn user_hooks_path(home: &Path) -> PathBuf {
    home.join(".gemini").join("config").join("hooks.json")
}

/// `<root>/.agents/hooks.json`.
pub fn project_hooks_path(root: &Path) -> PathBuf {
    root.join(".agents").join("hooks.json")
}

/// The Antigravity CLI target.
pub static ANTIGRAVITY: AntigravityTarget = AntigravityTarget;

/// Antigravity CLI.
#[derive(Debug)]
pub struct AntigravityTarget;

impl InstallTarget for AntigravityTarget {
    fn name(&self) -> &'static str {
        "antigravity"
    }

    fn title(&self) -> &'static str {
        "Antigravity CLI"
    }

    fn supports_project(&self) -> bool {
        true
    }

    fn events(&self) -> &'static str {
        "SessionStart, PreInvocation, Stop"
    }

    fn places(&self, home: &Path, scope: &Scope) -> Vec<Place> {
        let path = match scope {
            Scope::User => user_hooks_path(home),
            Scope::Project { root } => project_hooks_path(root),
        };
        vec![Place {
            path,
            format: &AGY_HOOKS,
            holds: Parts::HOOKS,
        }]
    }

    fn notes(&self, scope: &Scope) -> Vec<String> {
        let mut notes = vec![
            "Antigravity CLI loads hooks.json when it starts: restart agy (untested against the real CLI)"
                .to_owned(),
            "Antigravity runs no pre-tool hook: viking:// paths are not guarded there; add the \
             OpenViking MCP server in agy yourself (ovhook mcp)"
                .to_owned(),
        ];
        if let Scope::Project { root } = scope {
            notes.push(format!(
                "{} is inside the repository and may be committed: it names this machine's \
                 ovhook binary and holds no credentials or URLs",
                project_hooks_path(root).display()
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
    fn our_named_hook_is_written_whole_and_removed_whole() {
        let foreign = json!({
            "remember": {"enabled": true,
                         "Stop": [{"type": "command", "command": "remember stop", "timeout": 30}]}
        });
        let mut root: Map<String, Value> = serde_json::from_value(foreign.clone()).expect("map");
        AGY_HOOKS.validate(&root).expect("valid");
        let exe = Path::new("/opt/ovhook");
        AGY_HOOKS.merge(&mut root, exe, Parts::HOOKS);
        let once = root.clone();
        AGY_HOOKS.merge(&mut root, exe, Parts::HOOKS);
        assert_eq!(root, once, "a re-install changes nothing");
        assert_eq!(root["remember"], foreign["remember"]);
        let ours = &root[INTEGRATION_ID];
        assert_eq!(ours["enabled"], true);
        assert_eq!(
            ours["PreInvocation"][0],
            json!({"type": "command", "command": "'/opt/ovhook' --harness antigravity user-prompt-submit", "timeout": 10})
        );
        assert_eq!(AGY_HOOKS.binaries(&root), ["/opt/ovhook"]);
        let mut off = root.clone();
        off[INTEGRATION_ID]["enabled"] = json!(false);
        assert_eq!(AGY_HOOKS.warnings(&off, Path::new("/h")).len(), 1);
        assert!(AGY_HOOKS.warnings(&root, Path::new("/h")).is_empty());
        assert_eq!(AGY_HOOKS.remove(&mut root), 3);
        assert_eq!(Value::Object(root), foreign);
    }
}
