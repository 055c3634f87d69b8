//! Shape of the shipped Claude Code plugin tree under `hook/plugin/claude-code/`: its manifests
//! parse, agree on name and version, run the stable home's binary (the one `ovhook install`
//! places at `~/.openviking/ovhook/bin/ovhook`, the very path install's own entries name) with the
//! same hooks and MCP server that `ovhook install --harness claude-code` writes into Claude Code's
//! settings; the repository's `.claude-plugin/marketplace.json` lists the plugin by its folder.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn tree() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("plugin/claude-code")
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The command line without its first (quoted) word.
fn after_binary(cmd: &str) -> &str {
    let rest = cmd.trim_start();
    let end = match rest.chars().next() {
        Some(q @ ('"' | '\'')) => rest[1..].find(q).map(|i| i + 2).expect("closing quote"),
        _ => rest.find(' ').unwrap_or(rest.len()),
    };
    rest[end..].trim_start()
}

/// Hooks as `(event, matcher, rest of the command, timeout, statusMessage, type)`.
fn hooks(root: &Value) -> Vec<(String, Value, String, Value, Value, Value)> {
    let mut out = Vec::new();
    for (event, groups) in root["hooks"].as_object().expect("hooks object") {
        for g in groups.as_array().expect("groups") {
            for h in g["hooks"].as_array().expect("hooks array") {
                out.push((
                    event.clone(),
                    g["matcher"].clone(),
                    after_binary(h["command"].as_str().expect("command")).to_owned(),
                    h["timeout"].clone(),
                    h["statusMessage"].clone(),
                    h["type"].clone(),
                ));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn manifests_agree_and_name_existing_files() {
    let root = tree();
    let plugin = json(&root.join(".claude-plugin/plugin.json"));
    assert_eq!(plugin["name"], "ovhook");
    assert_eq!(plugin["version"], env!("CARGO_PKG_VERSION"));
    // Claude Code loads hooks/hooks.json and .mcp.json from the plugin root by default;
    // naming them again in plugin.json makes it load the hooks twice.
    assert!(plugin.get("hooks").is_none() && plugin.get("mcpServers").is_none());

    let market = json(&root.join(".claude-plugin/marketplace.json"));
    assert_eq!(market["name"], "ovhook");
    assert!(market["owner"]["name"].is_string());
    let entries = market["plugins"].as_array().expect("plugins");
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["name"], plugin["name"]);
    assert_eq!(entries[0]["version"], plugin["version"]);
    let source = entries[0]["source"].as_str().expect("source path");
    assert!(
        root.join(source)
            .join(".claude-plugin/plugin.json")
            .is_file(),
        "the marketplace's source holds the plugin"
    );
    assert!(root.join("README.md").is_file());

    // The plugin carries no binary: it runs the stable home's.
    for file in ["hooks/hooks.json", ".mcp.json"] {
        let text = std::fs::read_to_string(root.join(file)).expect(file);
        assert!(!text.contains("PLUGIN_ROOT"), "{file}");
        assert!(text.contains("/.openviking/ovhook/bin/ovhook"), "{file}");
    }

    // The repository is a marketplace too (added by its git URL, Claude Code clones it).
    let repo_root = root.join("../../..");
    let by_repo = json(&repo_root.join(".claude-plugin/marketplace.json"));
    assert_eq!(by_repo["name"], market["name"]);
    let entry = &by_repo["plugins"][0];
    assert_eq!(entry["name"], plugin["name"]);
    assert_eq!(entry["version"], plugin["version"]);
    let source = entry["source"]
        .as_str()
        .expect("a folder of the repository");
    assert_eq!(
        std::fs::canonicalize(repo_root.join(source)).expect("source"),
        std::fs::canonicalize(&root).expect("tree")
    );
}

#[test]
fn hooks_and_mcp_match_what_install_writes() {
    let home = tempfile::tempdir().expect("tmp");
    let out = Command::new(env!("CARGO_BIN_EXE_ovhook"))
        .args(["install", "--harness", "claude-code", "--url", "off"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .output()
        .expect("ovhook install");
    assert!(out.status.success(), "{out:?}");
    let settings = json(&home.path().join(".claude/settings.json"));
    let plugin_hooks = json(&tree().join("hooks/hooks.json"));
    assert_eq!(hooks(&plugin_hooks), hooks(&settings));
    for (_, _, rest, _, _, _) in hooks(&plugin_hooks) {
        assert!(rest.starts_with("--harness claude-code "), "{rest}");
    }
    for group in plugin_hooks["hooks"].as_object().expect("hooks").values() {
        for g in group.as_array().expect("groups") {
            for h in g["hooks"].as_array().expect("hooks") {
                let cmd = h["command"].as_str().expect("command");
                assert!(
                    cmd.starts_with("\"$HOME/.openviking/ovhook/bin/ovhook\" "),
                    "the home is quoted (it may hold spaces): {cmd}"
                );
            }
        }
    }

    let user = json(&home.path().join(".claude.json"));
    let written = &user["mcpServers"]["openviking"];
    let shipped = &json(&tree().join(".mcp.json"))["mcpServers"]["openviking"];
    assert_eq!(shipped["command"], "${HOME}/.openviking/ovhook/bin/ovhook");
    // The path install writes is the one the plugin names, with the home expanded.
    assert_eq!(
        written["command"],
        format!("{}/.openviking/ovhook/bin/ovhook", home.path().display())
    );
    for key in ["type", "args", "env"] {
        assert_eq!(shipped[key], written[key], "mcpServers.openviking.{key}");
    }
}
