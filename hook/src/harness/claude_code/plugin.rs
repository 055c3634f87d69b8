//! The ovhook Claude Code plugin as Claude Code records it once installed.
//!
//! `claude plugin install <plugin>@<marketplace>` copies the plugin into
//! `<config dir>/plugins/cache/<marketplace>/<plugin>/<version>/` and lists it in
//! `<config dir>/plugins/installed_plugins.json`:
//! `{"version": 2, "plugins": {"<plugin>@<marketplace>": [{"scope", "installPath", "version", ...}]}}`.
//! `enabledPlugins."<plugin>@<marketplace>": false` in `<config dir>/settings.json` disables one.
//! Each marketplace is in `<config dir>/plugins/known_marketplaces.json`:
//! `{"<marketplace>": {"source": {"source": "directory"|"git"|"github"|..., ...}, "installLocation"}}`;
//! a git marketplace is cloned into `<config dir>/plugins/marketplaces/<name>/`, a directory
//! marketplace is read where it was added. Claude Code loads a plugin only while its
//! marketplace's `installLocation` exists: with a directory marketplace moved or deleted every
//! plugin of it fails to load (`cache-miss`), even though the cached copy is intact.
//!
//! A plugin is ovhook's when its `hooks/hooks.json` runs a binary named `ovhook` with
//! `--harness claude-code`: the stable home's (`"$HOME/.openviking/ovhook/bin/ovhook"`, what
//! `hook/plugin/claude-code/` ships) or, as release bundles before the stable home did, the
//! plugin's own copy (`"${CLAUDE_PLUGIN_ROOT}/bin/ovhook"`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::transcript::config_dir;

/// One enabled install of the ovhook plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledPlugin {
    /// `<plugin>@<marketplace>`.
    pub id: String,
    /// The installed copy's root (`${CLAUDE_PLUGIN_ROOT}` when its hooks run).
    pub root: PathBuf,
    /// The binary its hooks run, as Claude Code's shell expands it.
    pub binary: PathBuf,
    /// True when that binary is the stable home's (install places it; the plugin has none).
    pub runs_stable_home: bool,
}

/// The binary the Stop hook of a plugin's `hooks/hooks.json` runs, expanded as Claude Code's
/// shell would (`${CLAUDE_PLUGIN_ROOT}` is the plugin root, `$HOME` the home folder); `None`
/// when the file has no hook of ours.
fn hook_binary(home: &Path, root: &Path) -> Option<PathBuf> {
    let text = ov_engine::regular_file::read_text(&root.join("hooks/hooks.json"), 16 << 20)
        .ok()
        .flatten()?;
    let doc: Value = serde_json::from_str(&text).ok()?;
    let commands = doc
        .get("hooks")?
        .as_object()?
        .values()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|g| g.get("hooks").and_then(Value::as_array))
        .flatten()
        .filter_map(|h| h.get("command").and_then(Value::as_str));
    for cmd in commands {
        if !cmd.contains("--harness claude-code") {
            continue;
        }
        let bin =
            crate::install::bin_home::command_binary(home, cmd, &[("CLAUDE_PLUGIN_ROOT", root)]);
        if bin.file_name().is_some_and(|n| n == "ovhook") {
            return Some(bin);
        }
    }
    None
}

/// Every enabled install of the ovhook plugin; none when Claude Code lists no plugins.
pub fn installed(home: &Path) -> Vec<InstalledPlugin> {
    let dir = config_dir(home);
    let Some(list) = read_json(&dir.join("plugins/installed_plugins.json")) else {
        return Vec::new();
    };
    let enabled = read_json(&dir.join("settings.json"))
        .and_then(|s| s.get("enabledPlugins").cloned())
        .unwrap_or(Value::Null);
    let stable = crate::install::bin_home::ovhook(home);
    let mut out = Vec::new();
    for (id, installs) in list
        .get("plugins")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if enabled.get(id) == Some(&Value::Bool(false)) {
            continue;
        }
        for install in installs.as_array().into_iter().flatten() {
            let Some(root) = install.get("installPath").and_then(Value::as_str) else {
                continue;
            };
            let root = PathBuf::from(root);
            if let Some(binary) = hook_binary(home, &root) {
                out.push(InstalledPlugin {
                    id: id.clone(),
                    runs_stable_home: binary == stable,
                    root,
                    binary,
                });
            }
        }
    }
    out
}

/// Why Claude Code cannot load `plugin` although it is installed: its marketplace is unknown or
/// the marketplace's folder is gone (a directory marketplace moved or deleted: `cache-miss`).
pub fn load_problem(home: &Path, plugin: &InstalledPlugin) -> Option<String> {
    let market = plugin.id.split_once('@').map(|(_, m)| m)?;
    let known = read_json(&config_dir(home).join("plugins/known_marketplaces.json"));
    let Some(entry) = known.as_ref().and_then(|k| k.get(market)) else {
        return Some(format!(
            "Claude Code knows no marketplace {market}: the plugin does not load (claude plugin \
             marketplace add it again)"
        ));
    };
    let location = entry.get("installLocation").and_then(Value::as_str)?;
    if Path::new(location).is_dir() {
        return None;
    }
    let kind = entry
        .pointer("/source/source")
        .and_then(Value::as_str)
        .unwrap_or("?");
    Some(format!(
        "its marketplace {market} ({kind}) was read from {location}, which is gone: Claude Code \
         does not load the plugin (cache-miss) and nothing is captured. Add the marketplace from \
         the repository (claude plugin marketplace add <git URL or owner/repo>; Claude Code keeps \
         its own clone) or from a folder that stays, then claude plugin install {}",
        plugin.id
    ))
}

fn read_json(path: &Path) -> Option<Value> {
    // Only a regular file, never a blocking read (a FIFO planted here is skipped).
    ov_engine::regular_file::read(path, 16 << 20)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    fn install(home: &Path, id: &str, root: &Path, hooks: &str) {
        std::fs::create_dir_all(root.join("hooks")).expect("dir");
        std::fs::write(root.join("hooks/hooks.json"), hooks).expect("hooks");
        let list = serde_json::json!({"version": 2, "plugins": {id: [{"scope": "user", "installPath": root}]}});
        std::fs::create_dir_all(home.join(".claude/plugins")).expect("dir");
        std::fs::write(
            home.join(".claude/plugins/installed_plugins.json"),
            list.to_string(),
        )
        .expect("list");
    }

    #[test]
    fn finds_ours_skips_foreign_and_disabled() {
        let t = tempfile::tempdir().expect("tmp");
        let home = t.path();
        assert!(installed(home).is_empty());
        let root = home.join("cache/ovhook");
        install(
            home,
            "ovhook@ovhook",
            &root,
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"\"${CLAUDE_PLUGIN_ROOT}/bin/ovhook\" --harness claude-code stop"}]}]}}"#,
        );
        let found = installed(home);
        assert_eq!(
            found,
            vec![InstalledPlugin {
                id: "ovhook@ovhook".into(),
                root: root.clone(),
                binary: root.join("bin/ovhook"),
                runs_stable_home: false,
            }]
        );
        // The stable home's binary, as `hook/plugin/claude-code/` names it.
        install(
            home,
            "ovhook@ovhook",
            &root,
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"\"$HOME/.openviking/ovhook/bin/ovhook\" --harness claude-code stop"}]}]}}"#,
        );
        let found = installed(home);
        assert_eq!(found[0].binary, home.join(".openviking/ovhook/bin/ovhook"));
        assert!(found[0].runs_stable_home);
        std::fs::write(
            home.join(".claude/settings.json"),
            r#"{"enabledPlugins":{"ovhook@ovhook":false}}"#,
        )
        .expect("settings");
        assert!(installed(home).is_empty(), "a disabled plugin runs nothing");
        std::fs::remove_file(home.join(".claude/settings.json")).expect("rm");
        install(
            home,
            "other@m",
            &root,
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify"}]}]}}"#,
        );
        assert!(installed(home).is_empty(), "a foreign plugin is not ours");
    }
}
