//! Files that list MCP servers under a top-level `mcpServers` object (`~/.agents/mcp.json`,
//! Claude Code's `~/.claude.json`, Qwen Code's `~/.qwen/settings.json`, Copilot CLI's
//! `~/.copilot/mcp-config.json`): our server is `mcpServers.openviking`, running `ovhook mcp`,
//! marked by `env.OPENVIKING_INTEGRATION_ID`.

use std::path::Path;

use anyhow::bail;
use serde_json::{json, Map, Value};

use super::json_doc::object_at;
use super::marker::{mentions_integration, INTEGRATION_ID, MCP_NAME};
use super::target::{Parts, PlaceFormat};

/// A `mcpServers` file.
#[derive(Debug)]
pub struct McpServersFile {
    /// What the file is, for messages.
    pub describe: &'static str,
    /// The entry's `type`, for files that want one (`"stdio"` in Claude Code's
    /// `~/.claude.json`, `"local"` in Copilot CLI's `mcp-config.json`).
    pub entry_type: Option<&'static str>,
    /// Entries list the tools the agent may call (`"tools": ["*"]`, Copilot CLI).
    pub all_tools: bool,
}

impl McpServersFile {
    fn entry(&self, exe: &Path) -> Value {
        let mut e = Map::new();
        if let Some(t) = self.entry_type {
            e.insert("type".into(), json!(t));
        }
        e.insert("command".into(), json!(exe.to_string_lossy()));
        e.insert("args".into(), json!(["mcp"]));
        e.insert(
            "env".into(),
            json!({ "OPENVIKING_INTEGRATION_ID": INTEGRATION_ID }),
        );
        if self.all_tools {
            e.insert("tools".into(), json!(["*"]));
        }
        Value::Object(e)
    }
}

impl PlaceFormat for McpServersFile {
    fn describe(&self) -> &'static str {
        self.describe
    }

    fn validate(&self, root: &Map<String, Value>) -> anyhow::Result<()> {
        if root.get("mcpServers").is_some_and(|s| !s.is_object()) {
            bail!("\"mcpServers\" is not an object");
        }
        Ok(())
    }

    fn merge(&self, root: &mut Map<String, Value>, exe: &Path, want: Parts) -> Vec<String> {
        if !want.mcp {
            self.remove(root);
            return Vec::new();
        }
        let servers = object_at(root, "mcpServers");
        match servers.get_mut(MCP_NAME) {
            Some(existing) if !mentions_integration(existing) => vec![format!(
                "mcpServers.{MCP_NAME} exists and is not ovhook's: left as is"
            )],
            Some(existing) => {
                *existing = self.entry(exe);
                Vec::new()
            }
            None => {
                servers.insert(MCP_NAME.into(), self.entry(exe));
                Vec::new()
            }
        }
    }

    fn remove(&self, root: &mut Map<String, Value>) -> usize {
        let Some(Value::Object(servers)) = root.get_mut("mcpServers") else {
            return 0;
        };
        let removed = servers.get(MCP_NAME).is_some_and(mentions_integration);
        if removed {
            servers.remove(MCP_NAME);
        }
        if servers.is_empty() {
            root.remove("mcpServers");
        }
        usize::from(removed)
    }

    fn binaries(&self, root: &Map<String, Value>) -> Vec<String> {
        root.get("mcpServers")
            .and_then(|s| s.get(MCP_NAME))
            .filter(|s| mentions_integration(s))
            .and_then(|s| s.get("command"))
            .and_then(Value::as_str)
            .map(|c| vec![c.to_owned()])
            .unwrap_or_default()
    }
}
