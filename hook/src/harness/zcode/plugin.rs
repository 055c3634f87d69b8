//! The ovhook ZCode plugin (`hook/plugin/zcode/`): what its hooks file and MCP file hold, built
//! from the hooks a config-file install writes ([`super::config_file::OUR_HOOKS`]), so the two
//! forms list the same events.
//!
//! # Context
//!
//! * ZCode runs a plugin hook of `type: "command"` through a shell (`timeout` in seconds); a
//!   `process` hook is argv with no shell (`timeoutMs`). It expands `${ZCODE_PLUGIN_ROOT}` in
//!   plugin hooks and plugin MCP servers only.
//! * An installed plugin is a copy in `~/.zcode/cli/plugins/cache/<marketplace>/<plugin>/<ver>/`
//!   ([`super::installed::plugin_installs`]); marketplaces are listed in
//!   `~/.zcode/cli/plugins/known_marketplaces.json` and installs in `installed_plugins.json`;
//!   `plugins.enabledPlugins."<plugin>@<marketplace>": false` in `~/.zcode/cli/config.json`
//!   disables one.
//!
//! # Design
//!
//! The plugin carries no binary: its hooks run the stable home's,
//! `"$HOME/.openviking/ovhook/bin/ovhook" --harness zcode <event>` as `command` hooks (the shell
//! expands `$HOME`; the quotes keep a home with a space one word), and its MCP server runs
//! `sh -c 'exec "$HOME/.openviking/ovhook/bin/ovhook" mcp'`, which needs no expansion by ZCode.
//! `ovhook install --harness zcode` places that binary; the plugin then works wherever it was
//! installed from, the source folder deleted.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::config_file::OUR_HOOKS;
use crate::install::bin_home;
use crate::install::marker::{INTEGRATION_ID, MCP_NAME};

/// The plugin's `hooks/hooks.json`.
pub fn plugin_hooks() -> Value {
    let mut events = Map::new();
    for (event, sub, matcher, timeout_ms, status) in OUR_HOOKS {
        let mut group = Map::new();
        if let Some(m) = matcher {
            group.insert("matcher".into(), json!(m));
        }
        group.insert(
            "hooks".into(),
            json!([{
                "type": "command",
                "command": bin_home::plugin_command("zcode", sub),
                "timeout": timeout_ms.div_ceil(1000),
                "statusMessage": status,
            }]),
        );
        events.insert(event.into(), json!([group]));
    }
    json!({ "hooks": events })
}

/// The plugin's `.mcp.json`.
pub fn plugin_mcp() -> Value {
    json!({ "mcpServers": { MCP_NAME: {
        "command": "sh",
        "args": ["-c", format!("exec {} mcp", bin_home::SHELL_WORD)],
        "env": { "OPENVIKING_INTEGRATION_ID": INTEGRATION_ID },
    }}})
}

/// True when the plugin copy at `root` holds this ovhook's hooks file and MCP file (as JSON,
/// whatever its layout).
pub fn is_current(root: &Path) -> bool {
    let read = |rel: &str| {
        ov_engine::regular_file::read(&root.join(rel), 1 << 20)
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    };
    read("hooks/hooks.json") == Some(plugin_hooks()) && read(".mcp.json") == Some(plugin_mcp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_copy_of_the_shipped_plugin_is_current_an_old_one_is_not() {
        let shipped = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("plugin/zcode");
        assert!(is_current(&shipped));
        let t = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(t.path().join("hooks")).expect("dir");
        std::fs::copy(shipped.join(".mcp.json"), t.path().join(".mcp.json")).expect("copy");
        std::fs::write(
            t.path().join("hooks/hooks.json"),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"process","command":"${ZCODE_PLUGIN_ROOT}/bin/ovhook","args":["stop"],"timeoutMs":10000}]}]}}"#,
        )
        .expect("w");
        assert!(!is_current(t.path()));
    }

    fn check(rel: &str, want: &Value) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("plugin/zcode")
            .join(rel);
        let text = format!("{}\n", serde_json::to_string_pretty(want).expect("json"));
        if std::env::var_os("OVHOOK_BLESS").is_some() {
            std::fs::write(&path, &text).expect("bless");
        }
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            text,
            "{} differs from what the config-file install writes (OVHOOK_BLESS=1 rewrites it)",
            path.display()
        );
    }

    #[test]
    fn the_shipped_files_are_the_install_targets_hooks_and_server() {
        check("hooks/hooks.json", &plugin_hooks());
        check(".mcp.json", &plugin_mcp());
    }
}
