//! The ovhook Claude Code plugin as Claude Code records it once installed.
//!
//! `claude plugin install <plugin>@<marketplace>` copies the plugin into
//! `<config dir>/plugins/cache/<marketplace>/<plugin>/<version>/` and lists it in
//! `<config dir>/plugins/installed_plugins.json`:
//! `{"version": 2, "plugins": {"<plugin>@<marketplace>": [{"scope", "installPath", "version", ...}]}}`.
//! `enabledPlugins."<plugin>@<marketplace>": false` in `<config dir>/settings.json` disables one.
//! A plugin is ovhook's when its `hooks/hooks.json` runs `${CLAUDE_PLUGIN_ROOT}/bin/ovhook` with
//! `--harness claude-code`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::transcript_source::config_dir;

/// The binary every hook of the plugin runs, relative to its root.
pub const PLUGIN_BINARY: &str = "bin/ovhook";

/// One enabled install of the ovhook plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledPlugin {
    /// `<plugin>@<marketplace>`.
    pub id: String,
    /// The installed copy's root (`${CLAUDE_PLUGIN_ROOT}` when its hooks run).
    pub root: PathBuf,
}

impl InstalledPlugin {
    /// The binary its hooks run.
    pub fn binary(&self) -> PathBuf {
        self.root.join(PLUGIN_BINARY)
    }
}

/// Whether a plugin's `hooks/hooks.json` runs ovhook for Claude Code.
fn runs_ovhook(root: &Path) -> bool {
    std::fs::read_to_string(root.join("hooks/hooks.json")).is_ok_and(|t| {
        t.contains("${CLAUDE_PLUGIN_ROOT}/bin/ovhook") && t.contains("--harness claude-code")
    })
}

/// Every enabled install of the ovhook plugin; none when Claude Code lists no plugins.
pub fn installed(home: &Path) -> Vec<InstalledPlugin> {
    let dir = config_dir(home);
    let read = |p: PathBuf| {
        std::fs::read(p)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    };
    let Some(list) = read(dir.join("plugins/installed_plugins.json")) else {
        return Vec::new();
    };
    let enabled = read(dir.join("settings.json"))
        .and_then(|s| s.get("enabledPlugins").cloned())
        .unwrap_or(Value::Null);
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
            if runs_ovhook(&root) {
                out.push(InstalledPlugin {
                    id: id.clone(),
                    root,
                });
            }
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
                root: root.clone()
            }]
        );
        assert_eq!(found[0].binary(), root.join("bin/ovhook"));
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
