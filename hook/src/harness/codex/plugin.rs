//! The ovhook Codex plugin (`hook/plugin/codex/`) as Codex CLI records it once installed, and
//! the trust keys of its hooks.
//!
//! # Context
//!
//! * A marketplace is a folder (or git repository) holding `.agents/plugins/marketplace.json`
//!   (Codex also reads `.claude-plugin/marketplace.json`):
//!   `{"name": "<marketplace>", "plugins": [{"name", "source": {"source": "local", "path"}}]}`.
//!   `codex plugin marketplace add <folder>` records it in `config.toml` as
//!   `[marketplaces.<marketplace>] source_type = "local", source = "<folder>"`.
//! * `codex plugin add <plugin>@<marketplace>` copies the plugin folder to
//!   `$CODEX_HOME/plugins/cache/<marketplace>/<plugin>/<version>/` and writes
//!   `[plugins."<plugin>@<marketplace>"] enabled = true`; Codex then runs the cached copy, so
//!   the marketplace folder may go.
//! * The plugin's `.codex-plugin/plugin.json` names its hooks file (`"hooks":
//!   "./hooks/hooks.json"`, Claude Code's hook shape). Codex runs each command through a shell.
//! * Codex runs a plugin hook only once trusted, as it does a `hooks.json` hook, and
//!   `codex plugin add` records no trust. The trust key of a plugin hook is
//!   `<plugin>@<marketplace>:<hooks file, relative to the plugin root>:<event>:<group>:<handler>`
//!   (`ovhook@ovhook:hooks/hooks.json:stop:0:0`); the hash is the one of a `hooks.json` hook
//!   ([`super::trust::trusted_hash`]). A key naming the cached file's absolute path is not read.
//!
//! A plugin is ovhook's when its hooks file holds hooks of ours (our status line, or a command
//! running `ovhook --harness codex`).

use std::path::{Path, PathBuf};

use serde_json::Value;
use toml_edit::DocumentMut;

use super::install_target::{codex_home, CODEX_HOOKS};
use super::trust::{our_hooks, OurHook};
use crate::install::bin_home;

/// The largest manifest, hooks file or `config.toml` read.
const MAX_BYTES: u64 = 4 << 20;

/// One enabled install of the ovhook Codex plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledPlugin {
    /// `<plugin>@<marketplace>`.
    pub id: String,
    /// The cached copy Codex runs.
    pub root: PathBuf,
    /// The hooks file, relative to `root`, as the trust keys name it (`hooks/hooks.json`).
    pub hooks_file: String,
    /// Our hooks in it, with their trust keys and hashes.
    pub hooks: Vec<OurHook>,
    /// The binary its hooks run, as Codex's shell expands it.
    pub binary: PathBuf,
    /// True when that binary is the stable home's (install places it; the plugin has none).
    pub runs_stable_home: bool,
}

/// `$CODEX_HOME/config.toml`, parsed; `None` when absent or not TOML.
pub fn read_config(home: &Path) -> Option<DocumentMut> {
    let text = ov_engine::regular_file::read_text(&codex_home(home).join("config.toml"), MAX_BYTES)
        .ok()
        .flatten()?;
    text.parse::<DocumentMut>().ok()
}

fn read_json(path: &Path) -> Option<Value> {
    // Only a regular file, never a blocking read (a FIFO planted here is skipped).
    ov_engine::regular_file::read(path, MAX_BYTES)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

/// The cached copy of `<plugin>@<marketplace>` Codex runs: the version folder holding a
/// `.codex-plugin/plugin.json` (the newest, should an upgrade have left another).
fn cached_root(home: &Path, plugin: &str, market: &str) -> Option<PathBuf> {
    let dir = codex_home(home)
        .join("plugins")
        .join("cache")
        .join(market)
        .join(plugin);
    std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(".codex-plugin/plugin.json").is_file())
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
}

/// `./hooks/hooks.json` -> `hooks/hooks.json`; `None` for a path leaving the plugin root.
fn relative(path: &str) -> Option<String> {
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            p => parts.push(p),
        }
    }
    (!parts.is_empty() && !path.starts_with('/')).then(|| parts.join("/"))
}

/// The plugin at `root` (installed as `id`), when its hooks file holds hooks of ours.
fn read_plugin(home: &Path, id: &str, root: PathBuf) -> Option<InstalledPlugin> {
    let manifest = read_json(&root.join(".codex-plugin/plugin.json"))?;
    let hooks_file = relative(manifest.get("hooks")?.as_str()?)?;
    let doc = read_json(&root.join(&hooks_file))?;
    let hooks = our_hooks(&format!("{id}:{hooks_file}"), doc.as_object()?);
    let command = doc
        .get("hooks")?
        .as_object()?
        .values()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|g| g.get("hooks").and_then(Value::as_array))
        .flatten()
        .filter(|h| CODEX_HOOKS.is_ours(h))
        .find_map(|h| h.get("command").and_then(Value::as_str))?;
    let binary = bin_home::command_binary(home, command, &[]);
    Some(InstalledPlugin {
        id: id.to_owned(),
        runs_stable_home: binary == bin_home::ovhook(home),
        hooks_file,
        hooks,
        binary,
        root,
    })
}

/// Every enabled install of the ovhook plugin (`[plugins."<id>"]` in `config.toml` not
/// `enabled = false`, its cached copy present, its hooks ours).
pub fn installed(home: &Path) -> Vec<InstalledPlugin> {
    let Some(config) = read_config(home) else {
        return Vec::new();
    };
    let Some(plugins) = config.get("plugins").and_then(|p| p.as_table_like()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (id, entry) in plugins.iter() {
        let enabled = entry
            .as_table_like()
            .and_then(|t| t.get("enabled"))
            .and_then(|e| e.as_bool())
            .unwrap_or(true);
        let Some((plugin, market)) = id.split_once('@').filter(|_| enabled) else {
            continue;
        };
        if let Some(p) = cached_root(home, plugin, market)
            .and_then(|root| read_plugin(home, id, root))
            .filter(|p| !p.hooks.is_empty())
        {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    /// The plugin as the repository ships it.
    fn shipped() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("plugin/codex")
    }

    /// `codex plugin add` of `source` as `<name>@<market>`, done by hand.
    fn add(home: &Path, source: &Path, name: &str, market: &str, enabled: bool) -> PathBuf {
        let root = codex_home(home).join(format!("plugins/cache/{market}/{name}/0.1.0"));
        for rel in [".codex-plugin/plugin.json", "hooks/hooks.json"] {
            let dest = root.join(rel);
            std::fs::create_dir_all(dest.parent().expect("dir")).expect("mkdir");
            std::fs::copy(source.join(rel), dest).expect("copy");
        }
        let config = codex_home(home).join("config.toml");
        let mut text = std::fs::read_to_string(&config).unwrap_or_default();
        text.push_str(&format!(
            "\n[plugins.\"{name}@{market}\"]\nenabled = {enabled}\n"
        ));
        std::fs::write(config, text).expect("config");
        root
    }

    #[test]
    fn the_shipped_hooks_file_is_the_install_targets_hooks() {
        let path = shipped().join("hooks/hooks.json");
        let want = format!(
            "{}\n",
            serde_json::to_string_pretty(&CODEX_HOOKS.plugin_hooks()).expect("json")
        );
        if std::env::var_os("OVHOOK_BLESS").is_some() {
            std::fs::write(&path, &want).expect("bless");
        }
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            want,
            "{} differs from the hooks a config-file install writes (OVHOOK_BLESS=1 rewrites it)",
            path.display()
        );
        let manifest = read_json(&shipped().join(".codex-plugin/plugin.json")).expect("manifest");
        assert_eq!(manifest["hooks"], "./hooks/hooks.json");
    }

    #[test]
    fn finds_the_installed_plugin_with_its_keys_and_binary() {
        let t = tempfile::tempdir().expect("tmp");
        let home = t.path();
        assert!(installed(home).is_empty());
        let root = add(home, &shipped(), "ovhook", "ovhook", true);
        let found = installed(home);
        assert_eq!(found.len(), 1, "{found:?}");
        let p = &found[0];
        assert_eq!(
            (p.id.as_str(), p.root.as_path()),
            ("ovhook@ovhook", root.as_path())
        );
        assert_eq!(p.hooks_file, "hooks/hooks.json");
        assert_eq!(p.binary, bin_home::ovhook(home));
        assert!(p.runs_stable_home);
        assert_eq!(p.hooks.len(), CODEX_HOOKS.hooks.len());
        let keys: Vec<&str> = p.hooks.iter().map(|h| h.key.as_str()).collect();
        assert!(
            keys.contains(&"ovhook@ovhook:hooks/hooks.json:stop:0:0"),
            "{keys:?}"
        );
        assert!(
            keys.contains(&"ovhook@ovhook:hooks/hooks.json:pre_tool_use:0:0"),
            "{keys:?}"
        );
    }

    #[test]
    fn disabled_foreign_and_escaping_plugins_are_not_ours() {
        let t = tempfile::tempdir().expect("tmp");
        let home = t.path();
        add(home, &shipped(), "ovhook", "ovhook", false);
        assert!(installed(home).is_empty(), "disabled");

        let foreign = t.path().join("foreign");
        std::fs::create_dir_all(foreign.join(".codex-plugin")).expect("dir");
        std::fs::create_dir_all(foreign.join("hooks")).expect("dir");
        std::fs::write(
            foreign.join(".codex-plugin/plugin.json"),
            r#"{"name":"n","hooks":"./hooks/hooks.json"}"#,
        )
        .expect("w");
        std::fs::write(
            foreign.join("hooks/hooks.json"),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify"}]}]}}"#,
        )
        .expect("w");
        add(home, &foreign, "n", "m", true);
        assert!(installed(home).is_empty(), "foreign");

        assert_eq!(
            relative("./hooks/hooks.json").as_deref(),
            Some("hooks/hooks.json")
        );
        assert_eq!(relative("../x.json"), None);
        assert_eq!(relative("/etc/x.json"), None);
    }
}
