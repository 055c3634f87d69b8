//! Shape of the shipped ZCode plugin files under `hook/plugin/zcode/`.

use std::path::PathBuf;

use serde_json::Value;

const VALID: [&str; 7] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
];

fn plugin(rel: &str) -> (String, Value) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("plugin/zcode")
        .join(rel);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    (text, v)
}

#[test]
fn manifest_and_integration_ids() {
    let (_, manifest) = plugin(".zcode-plugin/plugin.json");
    assert_eq!(manifest["name"], "openviking");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    // ZCode reads the plugin's MCP servers from the file the manifest names.
    assert_eq!(manifest["mcpServers"], "./.mcp.json");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("plugin/zcode");
    assert!(root.join(".mcp.json").is_file() && root.join("hooks/hooks.json").is_file());
    let (_, integ) = plugin("openviking.integration.json");
    assert_eq!(integ["schemaVersion"], 1);
    assert_eq!(integ["id"], "openviking-memory");
    assert_eq!(integ["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(integ["clients"], serde_json::json!(["zcode"]));
    assert_eq!(integ["capabilities"], serde_json::json!(["hooks", "mcp"]));
}

#[test]
fn hooks_json_runs_the_stable_home_through_the_shell_on_valid_events() {
    let (text, hooks) = plugin("hooks/hooks.json");
    assert!(
        !text.contains("PLUGIN_ROOT"),
        "the plugin carries no binary"
    );
    let events = hooks["hooks"].as_object().expect("hooks");
    let names: Vec<&String> = events.keys().collect();
    assert_eq!(names.len(), 4);
    for (event, groups) in events {
        assert!(VALID.contains(&event.as_str()), "{event}");
        let groups = groups.as_array().expect("groups");
        assert_eq!(groups.len(), 1);
        assert_eq!(
            groups[0].get("matcher").is_some(),
            event == "PreToolUse",
            "{event}"
        );
        for e in groups[0]["hooks"].as_array().expect("entries") {
            // `command` hooks run through a shell (which expands $HOME), timeout in seconds.
            assert_eq!(e["type"], "command");
            let cmd = e["command"].as_str().expect("command");
            assert!(
                cmd.starts_with("\"$HOME/.openviking/ovhook/bin/ovhook\" --harness zcode "),
                "{cmd}"
            );
            assert!(e["timeout"].as_u64().is_some() && e.get("timeoutMs").is_none());
            assert!(e["statusMessage"]
                .as_str()
                .is_some_and(|s| s.starts_with("openviking-memory:")));
        }
    }
}

#[test]
fn mcp_json_runs_ovhook_mcp_with_no_expansion_by_zcode() {
    let (text, mcp) = plugin(".mcp.json");
    assert!(!text.contains("PLUGIN_ROOT"));
    let s = &mcp["mcpServers"]["openviking"];
    assert_eq!(s["command"], "sh");
    assert_eq!(
        s["args"],
        serde_json::json!(["-c", "exec \"$HOME/.openviking/ovhook/bin/ovhook\" mcp"])
    );
    assert_eq!(s["env"]["OPENVIKING_INTEGRATION_ID"], "openviking-memory");
    for k in s.as_object().expect("server").keys() {
        assert!(
            ["command", "args", "cwd", "env", "enabled", "timeoutMs"].contains(&k.as_str()),
            "{k}"
        );
    }
}
