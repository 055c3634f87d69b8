//! ZCode's `config.json` (`~/.zcode/cli/config.json`, a repository's `.zcode/config.json`): read,
//! validate, merge our entries, remove ours.
//!
//! # Context
//!
//! ```text
//! { "hooks": { "enabled": true,
//!              "events": { "<Event>": [ { "matcher"?: "...", "hooks": [ {entry}, ... ] }, ... ] } },
//!   "mcp":   { "servers": { "<name>": { "command", "args", "env", "enabled", "timeoutMs" } } },
//!   ...every other key belongs to ZCode or the user and is kept as is... }
//! ```
//!
//! * Exactly 7 event keys are valid ([`VALID_EVENTS`]); ZCode 0.16.5 rejects the whole hooks block
//!   (every hook in the file) when `events` holds any other key.
//! * Config-file hooks get no `${…}` template expansion: commands are absolute paths.
//! * `type: "process"` hooks take `timeoutMs` (milliseconds); `type: "command"` hooks `timeout`
//!   (seconds).
//!
//! # Design: the marker
//!
//! Hook entries are strict-validated and no `env` field is documented for them, so a hook entry
//! of ours is recognised by its `statusMessage` starting with [`STATUS_PREFIX`](crate::install::marker::STATUS_PREFIX)
//! (`openviking-memory: …`), or by a `command` whose file name is `ovhook` with one of our hook
//! subcommands as `args[0]` (an entry written by an older ovhook). The MCP server entry does take
//! `env`, so it carries `OPENVIKING_INTEGRATION_ID=openviking-memory`, the same marker the Node
//! plugin used. Entries of the Node plugin are recognised as its installer did: their JSON
//! mentions `OPENVIKING_INTEGRATION_ID` or `openviking-memory`, or `openviking` together with one
//! of its script names.
//!
//! Ours are removed entry by entry (foreign entries in a shared group stay); a group left empty
//! is dropped, and our new group takes the place of the first one removed, so a re-install
//! rewrites the file byte for byte.

use std::path::Path;

use anyhow::{bail, Context};
use serde_json::{json, Map, Value};

use crate::install::json_doc::object_at;
use crate::install::marker::{has_our_status, mentions_node_plugin};
use crate::install::marker::{mentions_integration, INTEGRATION_ID, MCP_NAME};

/// The event keys ZCode accepts under `hooks.events`.
pub const VALID_EVENTS: [&str; 7] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
];

/// The hooks ovhook installs: event, subcommand, matcher, `timeoutMs`, status message.
pub const OUR_HOOKS: [(&str, &str, Option<&str>, u64, &str); 4] = [
    (
        "SessionStart",
        "session-start",
        None,
        15_000,
        "openviking-memory: loading your profile",
    ),
    (
        "UserPromptSubmit",
        "user-prompt-submit",
        None,
        10_000,
        "openviking-memory: recalling memories",
    ),
    (
        "PreToolUse",
        "pre-tool-use",
        Some("Read|Glob|Grep"),
        5_000,
        "openviking-memory: checking viking:// paths",
    ),
    (
        "Stop",
        "stop",
        None,
        10_000,
        "openviking-memory: saving the turn",
    ),
];

/// The parsed file.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    /// The top-level object (key order preserved).
    pub root: Map<String, Value>,
    /// The exact bytes read, `None` when the file did not exist.
    pub original: Option<Vec<u8>>,
}

impl ConfigFile {
    /// Reads and validates the file's shape. A missing file is an empty config; a malformed
    /// one is an error naming the path and the problem (the file is never touched).
    pub fn read(path: &Path) -> anyhow::Result<ConfigFile> {
        let bytes = match ov_engine::regular_file::read(path, 16 << 20) {
            Ok(Some(b)) => b,
            Ok(None) => {
                return Ok(ConfigFile {
                    root: Map::new(),
                    original: None,
                })
            }
            Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
        };
        let root = Self::parse(&bytes).with_context(|| {
            format!(
                "{} is not a valid ZCode config; fix it (or move it away) and re-run",
                path.display()
            )
        })?;
        Ok(ConfigFile {
            root,
            original: Some(bytes),
        })
    }

    fn parse(bytes: &[u8]) -> anyhow::Result<Map<String, Value>> {
        let root = crate::install::json_doc::parse_object(bytes)?;
        validate(&root)?;
        Ok(root)
    }

    fn events(&self) -> Option<&Map<String, Value>> {
        self.root.get("hooks")?.get("events")?.as_object()
    }

    /// `hooks.enabled` (absent = false: config-file hooks are off by default).
    pub fn hooks_enabled(&self) -> bool {
        self.root
            .get("hooks")
            .and_then(|h| h.get("enabled"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// Keys of `hooks.events` outside [`VALID_EVENTS`].
    pub fn unknown_event_keys(&self) -> Vec<String> {
        self.events()
            .map(|e| {
                e.keys()
                    .filter(|k| !VALID_EVENTS.contains(&k.as_str()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Our hook entries under `event`, with their group's matcher.
    pub fn our_entries(&self, event: &str) -> Vec<(Option<&Value>, &Value)> {
        self.entries(event).filter(|(_, e)| is_ours(e)).collect()
    }

    /// Entries of OpenViking's Node plugin, every event counted.
    pub fn node_plugin_entries(&self) -> usize {
        let Some(events) = self.events() else {
            return 0;
        };
        events
            .keys()
            .map(|ev| self.entries(ev).filter(|(_, e)| is_node_plugin(e)).count())
            .sum()
    }

    fn entries<'a>(
        &'a self,
        event: &str,
    ) -> impl Iterator<Item = (Option<&'a Value>, &'a Value)> + 'a {
        self.events()
            .and_then(|e| e.get(event))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|group| {
                let matcher = group.get("matcher");
                group
                    .get("hooks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(move |e| (matcher, e))
            })
    }

    /// Hook entries that are neither ours nor the Node plugin's, every event counted.
    pub fn foreign_entries(&self) -> usize {
        let Some(events) = self.events() else {
            return 0;
        };
        events
            .keys()
            .map(|ev| {
                self.entries(ev)
                    .filter(|(_, e)| !is_ours(e) && !is_node_plugin(e))
                    .count()
            })
            .sum()
    }

    /// `mcp.servers.openviking`, if present.
    pub fn mcp_entry(&self) -> Option<&Value> {
        self.root.get("mcp")?.get("servers")?.get(MCP_NAME)
    }
}

/// What the user must do when `hooks.enabled` keeps every hook in the file at `path` off;
/// `None` when it is `true`. Install says it (it never changes the switch) and so does doctor.
pub fn disabled_hint(file: &ConfigFile, path: &Path) -> Option<String> {
    if file.hooks_enabled() {
        return None;
    }
    let state = match file.root.get("hooks").and_then(|h| h.get("enabled")) {
        None => "is not set (ZCode's default: off)",
        Some(Value::Bool(false)) => "is false",
        Some(_) => "is not true",
    };
    Some(format!(
        "{}: hooks.enabled {state}, so ZCode runs no hook from this file, ovhook's included. \
         ovhook leaves that switch to you: to run the hooks, set \"hooks\": {{\"enabled\": true}} \
         in that file (it also switches on every other hook listed there)",
        path.display()
    ))
}

/// Checks the shape ZCode requires of the parts we touch.
pub fn validate(root: &Map<String, Value>) -> anyhow::Result<()> {
    if let Some(hooks) = root.get("hooks") {
        let Value::Object(hooks) = hooks else {
            bail!("\"hooks\" is not an object");
        };
        if let Some(events) = hooks.get("events") {
            let Value::Object(events) = events else {
                bail!("\"hooks.events\" is not an object");
            };
            for (name, groups) in events {
                let Value::Array(groups) = groups else {
                    bail!("\"hooks.events.{name}\" is not a list");
                };
                if groups.iter().any(|g| !g.is_object()) {
                    bail!("\"hooks.events.{name}\" holds a group that is not an object");
                }
            }
        }
    }
    if let Some(mcp) = root.get("mcp") {
        let Value::Object(mcp) = mcp else {
            bail!("\"mcp\" is not an object");
        };
        if mcp.get("servers").is_some_and(|s| !s.is_object()) {
            bail!("\"mcp.servers\" is not an object");
        }
    }
    Ok(())
}

/// Puts our four hooks for the binary at `exe` into `root`, each where the first of ours (or
/// the Node plugin's) was, else at the end of its event's list.
///
/// `hooks.enabled` is the user's switch for every hook in the file and is never changed: only
/// when it is absent (ZCode's default: off) and the file lists no hook but ours is it set to
/// `true`, which switches on nothing but ours. Otherwise [`disabled_hint`] tells the user.
pub fn merge_hooks(root: &mut Map<String, Value>, exe: &Path) {
    let exe_str = exe.to_string_lossy().into_owned();
    let only_ours = ConfigFile {
        root: root.clone(),
        original: None,
    }
    .foreign_entries()
        == 0;
    let hooks = object_at(root, "hooks");
    if only_ours && !hooks.contains_key("enabled") {
        hooks.insert("enabled".into(), Value::Bool(true));
    }
    let events = object_at(hooks, "events");
    for (event, sub, matcher, timeout_ms, status) in OUR_HOOKS {
        let mut group = Map::new();
        if let Some(m) = matcher {
            group.insert("matcher".into(), Value::String(m.into()));
        }
        group.insert(
            "hooks".into(),
            json!([{
                "type": "process",
                "command": exe_str,
                "args": [sub],
                "timeoutMs": timeout_ms,
                "statusMessage": status,
            }]),
        );
        let groups = events
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        if !groups.is_array() {
            *groups = Value::Array(Vec::new());
        }
        if let Value::Array(list) = groups {
            let at = remove_ours_from_groups(list).unwrap_or(list.len());
            list.insert(at.min(list.len()), Value::Object(group));
        }
    }
}

/// Puts our MCP server (`mcp.servers.openviking` running `exe mcp`) into `root`. A foreign
/// server of that name is left in place, with a note for the user.
pub fn merge_mcp(root: &mut Map<String, Value>, exe: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    let mcp = object_at(root, "mcp");
    let servers = object_at(mcp, "servers");
    let entry = json!({
        "command": exe.to_string_lossy(),
        "args": ["mcp"],
        "enabled": true,
        "timeoutMs": 30000,
        "env": { "OPENVIKING_INTEGRATION_ID": INTEGRATION_ID },
    });
    match servers.get_mut(MCP_NAME) {
        Some(existing) if !mentions_integration(existing) => notes.push(format!(
            "mcp.servers.{MCP_NAME} exists and is not ovhook's: left as is (remove it and \
             re-run to use ovhook's MCP proxy)"
        )),
        Some(existing) => *existing = entry,
        None => {
            servers.insert(MCP_NAME.into(), entry);
        }
    }
    notes
}

/// Removes our hook entries and the Node plugin's, and the containers this leaves empty
/// (`hooks.enabled` stays). Returns how many entries were removed.
pub fn remove_hooks(root: &mut Map<String, Value>) -> usize {
    let mut removed = 0;
    if let Some(Value::Object(hooks)) = root.get_mut("hooks") {
        if let Some(Value::Object(events)) = hooks.get_mut("events") {
            for groups in events.values_mut() {
                if let Value::Array(list) = groups {
                    let before = count_entries(list);
                    remove_ours_from_groups(list);
                    removed += before - count_entries(list);
                }
            }
            events.retain(|_, g| !matches!(g, Value::Array(l) if l.is_empty()));
            if events.is_empty() {
                hooks.remove("events");
            }
        }
    }
    removed
}

/// Removes our MCP server and the containers this leaves empty. Returns 1 if it was there.
pub fn remove_mcp(root: &mut Map<String, Value>) -> usize {
    let mut removed = 0;
    if let Some(Value::Object(mcp)) = root.get_mut("mcp") {
        if let Some(Value::Object(servers)) = mcp.get_mut("servers") {
            if servers.get(MCP_NAME).is_some_and(mentions_integration) {
                servers.remove(MCP_NAME);
                removed += 1;
            }
            if servers.is_empty() {
                mcp.remove("servers");
            }
        }
        if mcp.is_empty() {
            root.remove("mcp");
        }
    }
    removed
}

/// The `command` of every hook entry of ours and of our MCP server.
pub fn our_commands(root: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(events) = root
        .get("hooks")
        .and_then(|h| h.get("events"))
        .and_then(Value::as_object)
    {
        for groups in events.values().filter_map(Value::as_array) {
            for group in groups {
                for e in group
                    .get("hooks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if is_ours(e) {
                        if let Some(c) = e.get("command").and_then(Value::as_str) {
                            out.push(c.to_owned());
                        }
                    }
                }
            }
        }
    }
    if let Some(server) = root
        .get("mcp")
        .and_then(|m| m.get("servers"))
        .and_then(|s| s.get(MCP_NAME))
        .filter(|s| mentions_integration(s))
    {
        if let Some(c) = server.get("command").and_then(Value::as_str) {
            out.push(c.to_owned());
        }
    }
    out
}

fn count_entries(groups: &[Value]) -> usize {
    groups
        .iter()
        .map(|g| g.get("hooks").and_then(Value::as_array).map_or(0, Vec::len))
        .sum()
}

/// Removes our (and the Node plugin's) entries; drops groups left empty. Returns the index of
/// the first group that held one of ours, after removal.
fn remove_ours_from_groups(groups: &mut Vec<Value>) -> Option<usize> {
    let mut first = None;
    let mut kept = Vec::with_capacity(groups.len());
    for mut group in std::mem::take(groups) {
        if let Some(Value::Array(entries)) = group.get_mut("hooks") {
            let before = entries.len();
            entries.retain(|e| !(is_ours(e) || is_node_plugin(e)));
            let had_ours = entries.len() != before;
            if had_ours && first.is_none() {
                first = Some(kept.len());
            }
            if had_ours && entries.is_empty() {
                continue;
            }
        }
        kept.push(group);
    }
    *groups = kept;
    first
}

/// An entry written by ovhook (see the module docs for the marker).
pub fn is_ours(entry: &Value) -> bool {
    if has_our_status(entry, "statusMessage") {
        return true;
    }
    let command_is_ovhook = entry
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(crate::install::hook_groups::is_ovhook_binary);
    let sub = entry
        .get("args")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str);
    command_is_ovhook && sub.is_some_and(|s| OUR_HOOKS.iter().any(|h| h.1 == s))
}

/// An entry of OpenViking's Node plugin.
pub fn is_node_plugin(entry: &Value) -> bool {
    !is_ours(entry) && mentions_node_plugin(entry)
}
