//! Shape of the shipped Claude Code plugin tree under `hook/plugin/claude-code/`: its manifests
//! parse, name files that exist (the binary is the one `scripts/dist.sh` puts at `bin/ovhook`),
//! agree on name and version, and run the same hooks and MCP server that
//! `ovhook install --harness claude-code` writes into Claude Code's settings.

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

    // Every ${CLAUDE_PLUGIN_ROOT} path is the one binary dist.sh places.
    for file in ["hooks/hooks.json", ".mcp.json"] {
        let text = std::fs::read_to_string(root.join(file)).expect(file);
        let named: Vec<&str> = text
            .match_indices("${CLAUDE_PLUGIN_ROOT}/")
            .map(|(i, m)| {
                let rest = &text[i + m.len()..];
                &rest[..rest.find(['"', '\\', ' ']).unwrap_or(rest.len())]
            })
            .collect();
        assert!(!named.is_empty(), "{file} runs the plugin's binary");
        assert!(
            named.iter().all(|p| *p == "bin/ovhook"),
            "{file}: {named:?}"
        );
    }
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
                    cmd.starts_with("\"${CLAUDE_PLUGIN_ROOT}/bin/ovhook\" "),
                    "the plugin root is quoted (it may hold spaces): {cmd}"
                );
            }
        }
    }

    let user = json(&home.path().join(".claude.json"));
    let written = &user["mcpServers"]["openviking"];
    let shipped = &json(&tree().join(".mcp.json"))["mcpServers"]["openviking"];
    assert_eq!(shipped["command"], "${CLAUDE_PLUGIN_ROOT}/bin/ovhook");
    for key in ["type", "args", "env"] {
        assert_eq!(shipped[key], written[key], "mcpServers.openviking.{key}");
    }
}
