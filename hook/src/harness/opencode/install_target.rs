//! Where OpenCode and Kilo Code read the configuration that runs ovhook.
//!
//! | agent | scope | file | holds |
//! |---|---|---|---|
//! | OpenCode | user | `~/.config/opencode/opencode.json` | our shim in `plugin`, MCP (`mcp.openviking`) |
//! | OpenCode | project | `<root>/opencode.json` | our shim in `plugin` |
//! | Kilo Code | user | `~/.config/kilo/kilo.json` | our shim in `plugin`, MCP (`mcp.openviking`) |
//! | Kilo Code | project | `<root>/kilo.json` | our shim in `plugin` |
//!
//! ```text
//! { "plugin": [ "file:///home/u/.openviking/ovhook/bin/ovhook-opencode.js", ...others ],
//!   "mcp": { "openviking": { "type": "local", "command": ["/home/u/.openviking/ovhook/bin/ovhook", "mcp"] } },
//!   ...every other key belongs to the agent or the user and is kept as is... }
//! ```
//!
//! The shim itself ([`super::SHIM`]) is written by install next to the binary it runs, in the
//! binaries' stable home (`ovhook-<agent>.js`), and removed with the binaries. A `plugin`
//! entry is ours when it is a `file://` URL naming a file `ovhook-<agent>.js`. Neither agent
//! has command hooks or a hook list to merge into, so the `plugin` list is where the hooks go.
//! The MCP entry is ours when its `command` runs a binary named `ovhook` with `mcp`.

use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::{json, Map, Value};

use crate::install::atomic;
use crate::install::json_doc::object_at;
use crate::install::target::{InstallTarget, Parts, Place, PlaceFormat, PluginNote, Scope};

/// The config file's list of plugins.
const KEY: &str = "plugin";
/// The config file's MCP servers, and our entry's name there.
const MCP_KEY: &str = "mcp";
const MCP_NAME: &str = "openviking";

/// The shim's file name for `harness`.
pub fn shim_name(harness: &str) -> String {
    format!("ovhook-{harness}.js")
}

/// One agent's config file.
#[derive(Debug)]
pub struct PluginListFile {
    describe: &'static str,
    harness: &'static str,
}

impl PluginListFile {
    fn is_ours(&self, entry: &Value) -> bool {
        entry.as_str().is_some_and(|s| {
            s.starts_with("file://") && s.ends_with(&format!("/{}", shim_name(self.harness)))
        })
    }

    fn ours<'a>(&self, root: &'a Map<String, Value>) -> impl Iterator<Item = &'a str> + 'a {
        let name = shim_name(self.harness);
        root.get(KEY)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(move |s| s.starts_with("file://") && s.ends_with(&format!("/{name}")))
    }
}

/// The binary an MCP entry of ours runs.
fn mcp_binary(entry: &Value) -> Option<&str> {
    let cmd = entry.get("command")?.as_array()?;
    let exe = cmd.first()?.as_str()?;
    let ours = Path::new(exe).file_name().is_some_and(|n| n == "ovhook")
        && cmd.get(1).and_then(Value::as_str) == Some("mcp");
    ours.then_some(exe)
}

fn our_mcp(root: &Map<String, Value>) -> Option<&str> {
    root.get(MCP_KEY)?.get(MCP_NAME).and_then(mcp_binary)
}

impl PluginListFile {
    fn remove_plugin(&self, root: &mut Map<String, Value>) -> usize {
        let Some(Value::Array(items)) = root.get_mut(KEY) else {
            return 0;
        };
        let before = items.len();
        items.retain(|e| !self.is_ours(e));
        let removed = before - items.len();
        if removed > 0 && items.is_empty() {
            root.remove(KEY);
        }
        removed
    }

    fn remove_mcp(&self, root: &mut Map<String, Value>) -> usize {
        if our_mcp(root).is_none() {
            return 0;
        }
        let Some(Value::Object(servers)) = root.get_mut(MCP_KEY) else {
            return 0;
        };
        servers.remove(MCP_NAME);
        if servers.is_empty() {
            root.remove(MCP_KEY);
        }
        1
    }
}

/// The shim's path in an entry (`file://` stripped).
fn entry_path(entry: &str) -> PathBuf {
    PathBuf::from(entry.strip_prefix("file://").unwrap_or(entry))
}

impl PlaceFormat for PluginListFile {
    fn describe(&self) -> &'static str {
        self.describe
    }

    fn validate(&self, root: &Map<String, Value>) -> anyhow::Result<()> {
        if !matches!(root.get(KEY), None | Some(Value::Array(_))) {
            bail!("\"{KEY}\" is not a list");
        }
        if !matches!(root.get(MCP_KEY), None | Some(Value::Object(_))) {
            bail!("\"{MCP_KEY}\" is not an object");
        }
        Ok(())
    }

    fn merge(&self, root: &mut Map<String, Value>, exe: &Path, want: Parts) -> Vec<String> {
        let entry = exe.parent().map(|dir| {
            format!(
                "file://{}",
                dir.join(shim_name(self.harness)).to_string_lossy()
            )
        });
        let wanted = entry.filter(|_| want.hooks);
        let current: Vec<&str> = self.ours(root).collect();
        if !(current.len() == 1 && current.first().copied() == wanted.as_deref()) {
            self.remove_plugin(root);
            if let Some(entry) = wanted {
                let list = root.entry(KEY).or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(items) = list {
                    items.push(Value::String(entry));
                }
            }
        }
        let exe_text = exe.to_string_lossy();
        if want.mcp && our_mcp(root) != Some(&*exe_text) {
            let entry = json!({"type": "local", "command": [exe_text, "mcp"]});
            object_at(root, MCP_KEY).insert(MCP_NAME.into(), entry);
        } else if !want.mcp {
            self.remove_mcp(root);
        }
        Vec::new()
    }

    fn remove(&self, root: &mut Map<String, Value>) -> usize {
        self.remove_plugin(root) + self.remove_mcp(root)
    }

    /// The binary our shim runs: `ovhook` next to it; and the MCP entry's.
    fn binaries(&self, root: &Map<String, Value>) -> Vec<String> {
        self.ours(root)
            .filter_map(|e| {
                entry_path(e)
                    .parent()
                    .map(|d| d.join("ovhook").to_string_lossy().into_owned())
            })
            .chain(our_mcp(root).map(str::to_owned))
            .collect()
    }

    fn present(&self, root: &Map<String, Value>) -> Parts {
        Parts {
            hooks: self.ours(root).next().is_some(),
            mcp: our_mcp(root).is_some(),
            tools: false,
        }
    }

    fn warnings(&self, root: &Map<String, Value>, path: &Path) -> Vec<String> {
        self.ours(root)
            .map(entry_path)
            .filter(|shim| !shim.is_file())
            .map(|shim| {
                format!(
                    "{} loads {}, which does not exist (re-run ovhook install --harness {})",
                    path.display(),
                    shim.display(),
                    self.harness
                )
            })
            .collect()
    }
}

/// OpenCode's `opencode.json`.
pub static OPENCODE_CONFIG: PluginListFile = PluginListFile {
    describe: "OpenCode config",
    harness: "opencode",
};

/// Kilo Code's `kilo.json`.
pub static KILO_CONFIG: PluginListFile = PluginListFile {
    describe: "Kilo Code config",
    harness: "kilo",
};

/// One agent of the family, as an install target.
pub struct FamilyTarget {
    /// The harness's name.
    name: &'static str,
    /// The shim's file name ([`shim_name`]).
    shim_file: &'static str,
    title: &'static str,
    /// Folder under `~/.config`.
    config_dir: &'static str,
    /// The config file's name.
    file: &'static str,
    format: &'static PluginListFile,
}

/// The OpenCode target.
pub static OPENCODE: FamilyTarget = FamilyTarget {
    name: "opencode",
    shim_file: "ovhook-opencode.js",
    title: "OpenCode",
    config_dir: "opencode",
    file: "opencode.json",
    format: &OPENCODE_CONFIG,
};

/// The Kilo Code target.
pub static KILO: FamilyTarget = FamilyTarget {
    name: "kilo",
    shim_file: "ovhook-kilo.js",
    title: "Kilo Code",
    config_dir: "kilo",
    file: "kilo.json",
    format: &KILO_CONFIG,
};

impl FamilyTarget {
    /// The user config file: `<home>/.config/<agent>/<file>`.
    pub fn user_config_path(&self, home: &Path) -> PathBuf {
        home.join(".config").join(self.config_dir).join(self.file)
    }
}

impl InstallTarget for FamilyTarget {
    fn name(&self) -> &'static str {
        self.name
    }

    fn title(&self) -> &'static str {
        self.title
    }

    fn supports_project(&self) -> bool {
        true
    }

    fn events(&self) -> &'static str {
        "a plugin: chat.message (SessionStart, UserPromptSubmit), tool.execute.before (read|glob|grep|bash), session.idle (Stop), dispose (SessionEnd), experimental.session.compacting (PreCompact)"
    }

    fn places(&self, home: &Path, scope: &Scope) -> Vec<Place> {
        let path = match scope {
            Scope::User => self.user_config_path(home),
            Scope::Project { root } => root.join(self.file),
        };
        let holds = match scope {
            Scope::User => Parts::ALL,
            Scope::Project { .. } => Parts::HOOKS,
        };
        vec![Place {
            path,
            format: self.format,
            holds,
        }]
    }

    fn notes(&self, _scope: &Scope) -> Vec<String> {
        vec![format!(
            "{} loads plugins at start: restart running sessions",
            self.title
        )]
    }

    fn beside_binary(&self) -> Option<&'static str> {
        Some(self.shim_file)
    }

    /// Writes the shim next to `exe` (the binaries' home), unless it is already there.
    fn reconcile_plugins(
        &self,
        _home: &Path,
        exe: &Path,
        config_hooks: bool,
    ) -> anyhow::Result<Vec<PluginNote>> {
        let Some(dir) = exe.parent().filter(|_| config_hooks) else {
            return Ok(Vec::new());
        };
        let path = dir.join(shim_name(self.name));
        let text = super::shim_for(self.name);
        // Read as a bounded regular file only: a FIFO under the shim's name must not hang
        // the install (atomic::write then refuses it).
        let current = ov_engine::regular_file::read(&path, text.len() as u64 + 1);
        if current.is_ok_and(|old| old.as_deref() == Some(text.as_bytes())) {
            return Ok(Vec::new());
        }
        atomic::write(&path, text.as_bytes(), 0o644)?;
        Ok(vec![PluginNote::Moved(format!(
            "plugin shim {}",
            path.display()
        ))])
    }
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn merges_our_entry_once_keeps_foreign_and_removes_only_ours() {
        let mut root =
            obj(json!({"plugin": ["opencode-wakatime", "file:///x/other.js"], "model": "m"}));
        let exe = Path::new("/h/.openviking/ovhook/bin/ovhook");
        OPENCODE_CONFIG.merge(&mut root, exe, Parts::HOOKS);
        let once = root.clone();
        OPENCODE_CONFIG.merge(&mut root, exe, Parts::HOOKS);
        assert_eq!(root, once);
        assert_eq!(
            root["plugin"],
            json!([
                "opencode-wakatime",
                "file:///x/other.js",
                "file:///h/.openviking/ovhook/bin/ovhook-opencode.js"
            ])
        );
        assert_eq!(
            OPENCODE_CONFIG.binaries(&root),
            ["/h/.openviking/ovhook/bin/ovhook"]
        );
        // Kilo's entry is not OpenCode's.
        assert!(KILO_CONFIG.binaries(&root).is_empty());
        // The MCP entry, beside a foreign one.
        root.insert(
            "mcp".into(),
            json!({"other": {"type": "remote", "url": "http://x"}}),
        );
        OPENCODE_CONFIG.merge(&mut root, exe, Parts::ALL);
        assert_eq!(root["mcp"]["openviking"]["command"], json!([exe, "mcp"]));
        assert_eq!(OPENCODE_CONFIG.present(&root), Parts::ALL);
        OPENCODE_CONFIG.merge(&mut root, exe, Parts::HOOKS);
        assert_eq!(
            root["mcp"],
            json!({"other": {"type": "remote", "url": "http://x"}})
        );
        // A moved binary replaces the entry.
        OPENCODE_CONFIG.merge(&mut root, Path::new("/n/ovhook"), Parts::HOOKS);
        assert_eq!(OPENCODE_CONFIG.binaries(&root), ["/n/ovhook"]);
        assert_eq!(OPENCODE_CONFIG.remove(&mut root), 1);
        assert_eq!(
            root["plugin"],
            json!(["opencode-wakatime", "file:///x/other.js"])
        );
        assert_eq!(root["model"], "m");
        // A list that only held ours goes.
        let mut root = Map::new();
        OPENCODE_CONFIG.merge(&mut root, exe, Parts::HOOKS);
        OPENCODE_CONFIG.remove(&mut root);
        assert!(OPENCODE_CONFIG.is_residue(&root));
    }

    #[test]
    fn a_plugin_key_that_is_no_list_refuses() {
        assert!(OPENCODE_CONFIG
            .validate(&obj(json!({"plugin": "x"})))
            .is_err());
        assert!(OPENCODE_CONFIG
            .validate(&obj(json!({"plugin": []})))
            .is_ok());
    }

    #[test]
    fn the_shim_is_written_next_to_the_binary_once_and_a_missing_one_is_reported() {
        let dir = tempfile::tempdir().expect("tmp");
        let exe = dir.path().join("ovhook");
        let mut root = Map::new();
        KILO_CONFIG.merge(&mut root, &exe, Parts::HOOKS);
        let cfg = dir.path().join("kilo.json");
        assert_eq!(KILO_CONFIG.warnings(&root, &cfg).len(), 1);
        let notes = KILO
            .reconcile_plugins(dir.path(), &exe, true)
            .expect("shim");
        assert_eq!(notes.len(), 1);
        let text = std::fs::read_to_string(dir.path().join("ovhook-kilo.js")).expect("written");
        assert!(text.contains("const HARNESS = \"kilo\";"));
        assert!(KILO
            .reconcile_plugins(dir.path(), &exe, true)
            .expect("again")
            .is_empty());
        assert!(KILO_CONFIG.warnings(&root, &cfg).is_empty());
        for t in [&OPENCODE, &KILO] {
            assert_eq!(t.beside_binary(), Some(shim_name(t.name).as_str()));
        }
    }
}
