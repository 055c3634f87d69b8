//! What marks an entry in an agent's configuration as ovhook's, or as OpenViking's Node
//! plugin's (which an install replaces): the same for every agent.
//!
//! A hook entry of ours carries a status line starting with [`STATUS_PREFIX`]; an MCP server
//! entry of ours is named [`MCP_NAME`] and carries `OPENVIKING_INTEGRATION_ID` =
//! [`INTEGRATION_ID`] in its `env`, the marker OpenViking's Node plugins use too. A Node
//! plugin's entry mentions that marker, or `openviking` together with one of its script names.

use serde_json::Value;

/// The integration id shared with OpenViking's other plugins.
pub const INTEGRATION_ID: &str = "openviking-memory";

/// Every status line of ours starts with this.
pub const STATUS_PREFIX: &str = "openviking-memory:";

/// The MCP server name.
pub const MCP_NAME: &str = "openviking";

/// Script names of OpenViking's Node plugins (the anchor's `isOpenVikingHook`).
const NODE_SCRIPTS: [&str; 11] = [
    "cursor-hook.mjs",
    "trae-hook.mjs",
    "zcode-hook.mjs",
    "session-start.mjs",
    "auto-recall.mjs",
    "auto-capture.mjs",
    "pre-compact.mjs",
    "session-end.mjs",
    "trae-auto-recall.mjs",
    "trae-auto-capture.mjs",
    "uri-guard.mjs",
];

/// An entry whose `key` holds a status line of ours.
pub fn has_our_status(entry: &Value, key: &str) -> bool {
    entry
        .get(key)
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with(STATUS_PREFIX))
}

/// An entry of OpenViking's Node plugin, for an entry not of ours (ours mention the
/// integration id too: the caller checks them first).
pub fn mentions_node_plugin(entry: &Value) -> bool {
    let text = entry.to_string();
    text.contains("OPENVIKING_INTEGRATION_ID")
        || text.contains(INTEGRATION_ID)
        || (text.to_ascii_lowercase().contains("openviking")
            && NODE_SCRIPTS.iter().any(|s| text.contains(s)))
}

/// True for a server entry carrying our integration marker.
pub fn mentions_integration(v: &Value) -> bool {
    v.to_string().contains(INTEGRATION_ID)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn node_plugin_entries_are_told_by_marker_or_script() {
        assert!(mentions_node_plugin(
            &json!({"command": "node /x/openviking/auto-recall.mjs"})
        ));
        assert!(mentions_node_plugin(
            &json!({"env": {"OPENVIKING_INTEGRATION_ID": "x"}})
        ));
        assert!(!mentions_node_plugin(
            &json!({"command": "node /x/auto-recall.mjs"})
        ));
        assert!(has_our_status(
            &json!({"statusMessage": "openviking-memory: saving"}),
            "statusMessage"
        ));
        assert!(mentions_integration(&json!({"env": {"K": INTEGRATION_ID}})));
    }
}
