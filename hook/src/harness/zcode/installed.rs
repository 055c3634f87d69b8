//! What of ZCode is on this machine: its version, ovhook plugin installs, and the workspace
//! config files a session started in a folder would load.
//!
//! # Context
//!
//! * Version: `ZCODE_APP_VERSION` (set by ZCode in every child process), else the desktop app's
//!   `Info.plist` (`CFBundleShortVersionString`), else the `User-Agent: ZCode/<v>` of the newest
//!   rollout file's first line. Desktop builds 3.10 and later load hooks only from the workspace.
//! * Plugins: installed copies live in `~/.zcode/cli/plugins/cache/<marketplace>/<plugin>/<ver>/`
//!   with a `.zcode-plugin/plugin.json`; `plugins.enabledPlugins."<name>@<marketplace>": false`
//!   in `~/.zcode/cli/config.json` disables one. The binary a copy runs is read from its
//!   `hooks/hooks.json` ([`super::plugin`]).
//! * Workspace hooks: `zcode.json` and `.zcode/config.json` in every folder from the session's
//!   working folder up to the git root.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where the version was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// As found, e.g. `3.10.2` or `0.16.5`.
    pub text: String,
    /// Where it was found.
    pub source: String,
}

impl Version {
    /// `(major, minor)`, when the text starts with two numbers.
    pub fn major_minor(&self) -> Option<(u32, u32)> {
        let mut parts = self.text.split(|c: char| !c.is_ascii_digit());
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        Some((major, minor))
    }

    /// True for a desktop build that loads hooks only from the workspace (3.10 and later).
    pub fn workspace_hooks_only(&self) -> bool {
        self.major_minor().is_some_and(|v| v >= (3, 10))
    }
}

/// The ZCode version readable on this machine.
pub fn version(home: &Path, app_version_env: Option<String>) -> Option<Version> {
    if let Some(v) = app_version_env.filter(|v| !v.trim().is_empty()) {
        return Some(Version {
            text: v.trim().to_owned(),
            source: "ZCODE_APP_VERSION".into(),
        });
    }
    for plist in [
        PathBuf::from("/Applications/ZCode.app/Contents/Info.plist"),
        home.join("Applications/ZCode.app/Contents/Info.plist"),
    ] {
        if let Some(v) = std::fs::read_to_string(&plist)
            .ok()
            .and_then(|t| plist_version(&t))
        {
            return Some(Version {
                text: v,
                source: plist.display().to_string(),
            });
        }
    }
    let newest = newest_rollout(&home.join(".zcode/cli/rollout"))?;
    let mut head = Vec::new();
    std::fs::File::open(&newest)
        .ok()?
        .take(256 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let at = text.find("ZCode/")? + "ZCode/".len();
    let v: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
        .collect();
    (!v.is_empty()).then(|| Version {
        text: v,
        source: newest.display().to_string(),
    })
}

fn plist_version(text: &str) -> Option<String> {
    let after = &text[text.find("<key>CFBundleShortVersionString</key>")?..];
    let start = after.find("<string>")? + "<string>".len();
    let end = after[start..].find("</string>")? + start;
    Some(after[start..end].trim().to_owned()).filter(|v| !v.is_empty())
}

fn newest_rollout(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with("model-io-") && n.ends_with(".jsonl")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
}

/// An installed copy of ovhook's ZCode plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginInstall {
    /// The plugin's folder (`${ZCODE_PLUGIN_ROOT}`).
    pub root: PathBuf,
    /// `<plugin>@<marketplace>`, from its place in the cache.
    pub id: Option<String>,
    /// False when `plugins.enabledPlugins` turns it off.
    pub enabled: bool,
    /// The binary its hooks run, as ZCode expands it (`${ZCODE_PLUGIN_ROOT}`, and `$HOME` in a
    /// `command` hook's shell).
    pub binary: PathBuf,
    /// True when that binary is the stable home's (install places it; the plugin has none).
    /// Otherwise the plugin carries its own `bin/ovhook` (bundles before the stable home).
    pub runs_stable_home: bool,
}

/// The binary the hooks of the plugin at `root` run: the command of its first hook, expanded as
/// ZCode would; the plugin's own `bin/ovhook` when its hooks file says nothing.
fn hook_binary(home: &Path, root: &Path) -> PathBuf {
    let command = read_small(&root.join("hooks/hooks.json"))
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|doc| {
            doc.get("hooks")?
                .as_object()?
                .values()
                .filter_map(Value::as_array)
                .flatten()
                .filter_map(|g| g.get("hooks").and_then(Value::as_array))
                .flatten()
                .find_map(|h| h.get("command").and_then(Value::as_str).map(str::to_owned))
        });
    match command {
        Some(cmd) => crate::install::bin_home::command_binary(
            home,
            &cmd,
            &[("ZCODE_PLUGIN_ROOT", root), ("CLAUDE_PLUGIN_ROOT", root)],
        ),
        None => root.join("bin").join("ovhook"),
    }
}

/// The plugin name in `.zcode-plugin/plugin.json`.
pub const PLUGIN_NAME: &str = "openviking";

/// Every installed copy of our plugin under `~/.zcode/cli/plugins/cache/`.
pub fn plugin_installs(home: &Path) -> Vec<PluginInstall> {
    let cache = home.join(".zcode/cli/plugins/cache");
    let enabled_map = read_small(&super::install_target::user_config_path(home))
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v.pointer("/plugins/enabledPlugins").cloned());
    let mut roots = Vec::new();
    find_manifests(&cache, 0, &mut roots);
    roots.sort();
    roots
        .into_iter()
        .map(|root| {
            // `<cache>/<marketplace>/<plugin>/<version>`: key `<plugin>@<marketplace>`.
            let rel: Vec<String> = root
                .strip_prefix(&cache)
                .map(|r| {
                    r.components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            let key = match rel.as_slice() {
                [mkt, plugin, ..] => Some(format!("{plugin}@{mkt}")),
                _ => None,
            };
            let enabled = key
                .as_ref()
                .and_then(|k| enabled_map.as_ref()?.get(k)?.as_bool())
                .unwrap_or(true);
            let binary = hook_binary(home, &root);
            PluginInstall {
                runs_stable_home: binary == crate::install::bin_home::ovhook(home),
                binary,
                id: key,
                root,
                enabled,
            }
        })
        .collect()
}

fn find_manifests(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 4 {
        return;
    }
    let manifest = dir.join(".zcode-plugin").join("plugin.json");
    let is_ours = read_small(&manifest)
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|v| v.get("name").and_then(Value::as_str) == Some(PLUGIN_NAME));
    if is_ours {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            find_manifests(&e.path(), depth + 1, out);
        }
    }
}

/// The workspace config files ZCode would load for a session in `cwd` inside the repository at
/// `root`, nearest first (only those that exist).
pub fn workspace_files(cwd: &Path, root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        for f in [d.join("zcode.json"), d.join(".zcode").join("config.json")] {
            if f.is_file() {
                out.push(f);
            }
        }
        if d == root {
            break;
        }
        dir = d.parent();
    }
    out
}

/// A small JSON file's bytes: only a regular file, never a blocking read (a FIFO planted in
/// its place is skipped).
fn read_small(path: &Path) -> Option<Vec<u8>> {
    ov_engine::regular_file::read(path, 16 << 20).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_sources_in_order() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path();
        assert_eq!(version(home, None), None);
        let dir = home.join(".zcode/cli/rollout");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join("model-io-sess_a.jsonl"),
            r#"{"type":"model_io","request":{"headers":{"User-Agent":"ZCode/0.16.5"}}}"#,
        )
        .expect("w");
        let v = version(home, None).expect("from rollout");
        assert_eq!(v.text, "0.16.5");
        assert!(!v.workspace_hooks_only());
        let v = version(home, Some("3.10.2".into())).expect("env");
        assert_eq!(
            (v.text.as_str(), v.source.as_str()),
            ("3.10.2", "ZCODE_APP_VERSION")
        );
        assert!(v.workspace_hooks_only());
        assert_eq!(
            plist_version(
                "<dict><key>CFBundleShortVersionString</key>\n\t<string>3.7.5</string></dict>"
            ),
            Some("3.7.5".into())
        );
    }
}
