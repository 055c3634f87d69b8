//! Claude Code's hook-settings shape (`~/.claude/settings.json`), which other agents adopted
//! (Qwen Code's `~/.qwen/settings.json`, Codex's `~/.codex/hooks.json`): our entries in it,
//! merged and removed without touching anyone else's.
//!
//! # Context
//!
//! ```text
//! { "hooks": { "<Event>": [ { "matcher"?: "Read|Glob|Grep",
//!                             "hooks": [ { "type": "command", "command": "<shell line>",
//!                                          "timeout": <seconds>, "statusMessage": "…" } ] } ] },
//!   "mcpServers": { … }   (in files that also list MCP servers: see `mcp` below)
//!   ...every other key belongs to the agent or the user and is kept as is... }
//! ```
//!
//! `command` is run by a shell: ours is `'<exe>' --harness <name> <subcommand>`, the path
//! single-quoted (a `'` in it written `'\''`).
//!
//! An agent with the same shape and its own entry fields (Gemini CLI: `timeout` in
//! milliseconds, `description` for the status line) supplies its spelling as an
//! [`EntryShape`]: the entry, the key of the status line, the keys of `hooks` that are
//! settings, and the settings that turn hooks off.
//!
//! # Design: which entries are ours
//!
//! An entry is ours when its status line (the shape's `status_key`) starts
//! with `openviking-memory:` or its
//! command runs a binary named `ovhook` with `--harness <this harness>`; entries of
//! OpenViking's Node plugins are recognised as for ZCode and replaced. Ours are removed
//! entry by entry (foreign entries in a shared group stay); a group left empty is dropped,
//! and our new group takes the place of the first one removed, so a re-install rewrites the
//! file byte for byte.

use std::path::Path;

use anyhow::bail;
use serde_json::{json, Map, Value};

use super::json_doc::object_at;
use super::marker::{has_our_status, mentions_node_plugin};
use super::mcp_servers::McpServersFile;
use super::target::{Parts, PlaceFormat};

/// One hook ovhook installs.
#[derive(Debug, Clone, Copy)]
pub struct HookSpec {
    /// The agent's event name (`"SessionStart"`).
    pub event: &'static str,
    /// Our subcommand (`"session-start"`).
    pub sub: &'static str,
    /// The group's `matcher`, if any.
    pub matcher: Option<&'static str>,
    /// `timeout`, in seconds.
    pub timeout_s: u64,
    /// `statusMessage` (starts with `openviking-memory:`).
    pub status: &'static str,
}

/// The five hooks ovhook installs into an agent with Claude Code's hook events, with the
/// same timeouts and status lines everywhere; only PreToolUse's matcher (the agent's own
/// tool names) and SessionEnd's timeout differ between agents.
pub const fn claude_shape_hooks(
    pre_tool_matcher: &'static str,
    session_end_timeout_s: u64,
) -> [HookSpec; 5] {
    [
        HookSpec {
            event: "SessionStart",
            sub: "session-start",
            matcher: None,
            timeout_s: 15,
            status: "openviking-memory: loading your profile",
        },
        HookSpec {
            event: "UserPromptSubmit",
            sub: "user-prompt-submit",
            matcher: None,
            timeout_s: 10,
            status: "openviking-memory: recalling memories",
        },
        HookSpec {
            event: "PreToolUse",
            sub: "pre-tool-use",
            matcher: Some(pre_tool_matcher),
            timeout_s: 5,
            status: "openviking-memory: checking viking:// paths",
        },
        HookSpec {
            event: "Stop",
            sub: "stop",
            matcher: None,
            timeout_s: 10,
            status: "openviking-memory: saving the turn",
        },
        HookSpec {
            event: "SessionEnd",
            sub: "session-end",
            matcher: None,
            timeout_s: session_end_timeout_s,
            status: "openviking-memory: saving the session",
        },
    ]
}

/// PreCompact: the session is sent and committed before the agent compacts its context
/// (the hook waits for it, within its own budget of 10 s: the timeout leaves room).
pub const PRE_COMPACT: HookSpec = HookSpec {
    event: "PreCompact",
    sub: "pre-compact",
    matcher: None,
    timeout_s: 30,
    status: "openviking-memory: saving the session before compaction",
};

/// SubagentStop: a subagent's turn, kept as `capture.subagents` says.
pub const SUBAGENT_STOP: HookSpec = HookSpec {
    event: "SubagentStop",
    sub: "subagent-stop",
    matcher: None,
    timeout_s: 10,
    status: "openviking-memory: saving the subagent's turn",
};

/// `hooks` and, after them, [`PRE_COMPACT`] and [`SUBAGENT_STOP`]: an agent that fires both
/// (Claude Code, Codex).
pub const fn with_compaction_and_subagents(hooks: [HookSpec; 5]) -> [HookSpec; 7] {
    let [a, b, c, d, e] = hooks;
    [a, b, c, d, e, PRE_COMPACT, SUBAGENT_STOP]
}

/// The PostToolUse hook of `capture.tools`, for an agent whose payloads carry the tool calls
/// (Codex, Qwen Code).
pub static POST_TOOL_USE: [HookSpec; 1] = [HookSpec {
    event: "PostToolUse",
    sub: "post-tool-use",
    matcher: None,
    timeout_s: 5,
    status: "openviking-memory: noting the tool call",
}];

/// How an agent spells one hook entry and which keys of its `hooks` object are settings:
/// data the harness supplies ([`CLAUDE_ENTRY`] for Claude Code's own spelling).
#[derive(Debug)]
pub struct EntryShape {
    /// The key holding our status line (`statusMessage`).
    pub status_key: &'static str,
    /// Keys of `hooks` that are settings, not events (kept as they are).
    pub settings_keys: &'static [&'static str],
    /// Our entry running the shell line `command` for `spec`.
    pub entry: fn(command: String, spec: &HookSpec) -> Value,
    /// Why the agent runs none of the file's hooks, when a setting of its own says so.
    pub all_off: fn(root: &Map<String, Value>) -> Option<String>,
    /// What in the file turns off some of `ours` (our entries in it), if anything does.
    pub ours_off: fn(root: &Map<String, Value>, ours: &[&Value]) -> Option<String>,
}

/// Claude Code's spelling (Qwen Code's and Codex's too): `timeout` in seconds,
/// `statusMessage`; every key of `hooks` is an event.
pub static CLAUDE_ENTRY: EntryShape = EntryShape {
    status_key: "statusMessage",
    settings_keys: &[],
    entry: claude_entry,
    all_off: |_| None,
    ours_off: |_, _| None,
};

fn claude_entry(command: String, spec: &HookSpec) -> Value {
    json!({
        "type": "command",
        "command": command,
        "timeout": spec.timeout_s,
        "statusMessage": spec.status,
    })
}

/// A settings file holding hooks in Claude Code's shape (and, optionally, MCP servers).
#[derive(Debug)]
pub struct HookGroupsFile {
    /// What the file is, for messages.
    pub describe: &'static str,
    /// The `--harness` name our commands pass.
    pub harness: &'static str,
    /// Our hooks.
    pub hooks: &'static [HookSpec],
    /// Our hooks of `capture.tools` (PostToolUse), written only while it is on
    /// ([`Parts::tools`]); none for an agent whose transcript carries the tool calls.
    pub tool_hooks: &'static [HookSpec],
    /// The file also lists MCP servers (`mcpServers`) in this format.
    pub mcp: Option<&'static McpServersFile>,
    /// A top-level key that, when `true`, turns every hook in the file off
    /// (`disableAllHooks` in Claude Code).
    pub disable_all_key: Option<&'static str>,
    /// How the agent spells an entry.
    pub shape: &'static EntryShape,
}

/// `s` quoted for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Our shell line for harness `harness`'s subcommand `sub`: the binary `exe`, quoted.
pub fn ovhook_command(exe: &Path, harness: &str, sub: &str) -> String {
    format!(
        "{} --harness {harness} {sub}",
        shell_quote(&exe.to_string_lossy())
    )
}

/// Whether `path` names an `ovhook` binary (`ovhook`, `ovhook.exe`), wherever it is.
pub fn is_ovhook_binary(path: &str) -> bool {
    Path::new(path)
        .file_name()
        .is_some_and(|n| n == "ovhook" || n == "ovhook.exe")
}

/// Whether shell line `line` runs an `ovhook` binary for `harness` (`--harness <harness>`, the
/// name a whole word: `--harness cursorx` is not Cursor's).
pub fn runs_ovhook_for(line: &str, harness: &str) -> bool {
    is_ovhook_binary(&first_word(line))
        && line
            .split_whitespace()
            .collect::<Vec<_>>()
            .windows(2)
            .any(|w| matches!(w, [flag, name] if *flag == "--harness" && *name == harness))
}

/// The first word of a shell line, unquoted (single quotes, `'\''`, or a bare word).
pub fn first_word(line: &str) -> String {
    let line = line.trim_start();
    let mut out = String::new();
    let mut chars = line.chars();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' => quoted = !quoted,
            '\\' if !quoted => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            c if c.is_whitespace() && !quoted => break,
            c => out.push(c),
        }
    }
    out
}

impl HookGroupsFile {
    /// Our command line for `sub`.
    pub fn command(&self, exe: &Path, sub: &str) -> String {
        ovhook_command(exe, self.harness, sub)
    }

    /// An entry written by ovhook for this harness.
    pub fn is_ours(&self, entry: &Value) -> bool {
        if has_our_status(entry, self.shape.status_key) {
            return true;
        }
        entry
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(|cmd| runs_ovhook_for(cmd, self.harness))
    }

    fn entries<'a>(&self, root: &'a Map<String, Value>) -> impl Iterator<Item = &'a Value> + 'a {
        let settings = self.shape.settings_keys;
        root.get("hooks")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|events| events.iter())
            .filter(move |(k, _)| !settings.contains(&k.as_str()))
            .filter_map(|(_, groups)| groups.as_array())
            .flatten()
            .filter_map(|g| g.get("hooks").and_then(Value::as_array))
            .flatten()
    }

    /// Removes ours (and the Node plugin's) from one event's groups; drops groups left
    /// empty. Returns how many entries went and where the first group of ours was.
    fn remove_from(&self, groups: &mut Vec<Value>) -> (usize, Option<usize>) {
        let mut first = None;
        let mut removed = 0;
        let mut kept = Vec::with_capacity(groups.len());
        for mut group in std::mem::take(groups) {
            if let Some(Value::Array(entries)) = group.get_mut("hooks") {
                let before = entries.len();
                entries.retain(|e| !(self.is_ours(e) || mentions_node_plugin(e)));
                let gone = before - entries.len();
                removed += gone;
                if gone > 0 && first.is_none() {
                    first = Some(kept.len());
                }
                if gone > 0 && entries.is_empty() {
                    continue;
                }
            }
            kept.push(group);
        }
        *groups = kept;
        (removed, first)
    }

    fn remove_hooks(&self, root: &mut Map<String, Value>) -> usize {
        let Some(Value::Object(events)) = root.get_mut("hooks") else {
            return 0;
        };
        let settings = self.shape.settings_keys;
        let mut removed = 0;
        for (event, groups) in events.iter_mut() {
            if settings.contains(&event.as_str()) {
                continue;
            }
            if let Value::Array(list) = groups {
                removed += self.remove_from(list).0;
            }
        }
        events.retain(|k, g| {
            settings.contains(&k.as_str()) || !matches!(g, Value::Array(l) if l.is_empty())
        });
        if events.is_empty() {
            root.remove("hooks");
        }
        removed
    }

    /// Our group for `spec`, its one entry running the shell line `command`.
    fn group(&self, command: String, spec: &HookSpec) -> Map<String, Value> {
        let mut group = Map::new();
        if let Some(m) = spec.matcher {
            group.insert("matcher".into(), json!(m));
        }
        group.insert("hooks".into(), json!([(self.shape.entry)(command, spec)]));
        group
    }

    /// Our hooks as a plugin's hooks file holds them (`{"hooks": {"<Event>": [group]}}`): the
    /// events, matchers, timeouts and status lines a config-file install writes, each command
    /// running the stable home's binary through the agent's shell
    /// ([`super::bin_home::plugin_command`]). A plugin folder ships this document.
    pub fn plugin_hooks(&self) -> Value {
        let mut events = Map::new();
        for spec in self.hooks {
            let command = super::bin_home::plugin_command(self.harness, spec.sub);
            let group = Value::Object(self.group(command, spec));
            match events.get_mut(spec.event) {
                Some(Value::Array(list)) => list.push(group),
                _ => {
                    events.insert(spec.event.into(), Value::Array(vec![group]));
                }
            }
        }
        json!({ "hooks": events })
    }

    fn merge_hooks(&self, root: &mut Map<String, Value>, exe: &Path, tools: bool) {
        let events = object_at(root, "hooks");
        if !tools {
            for spec in self.tool_hooks {
                if let Some(Value::Array(list)) = events.get_mut(spec.event) {
                    self.remove_from(list);
                    if list.is_empty() {
                        events.remove(spec.event);
                    }
                }
            }
        }
        let wanted = self.tool_hooks.iter().filter(|_| tools);
        for spec in self.hooks.iter().chain(wanted) {
            let group = self.group(self.command(exe, spec.sub), spec);
            let groups = events
                .entry(spec.event)
                .or_insert_with(|| Value::Array(Vec::new()));
            if !groups.is_array() {
                *groups = Value::Array(Vec::new());
            }
            if let Value::Array(list) = groups {
                let at = self.remove_from(list).1.unwrap_or(list.len());
                list.insert(at.min(list.len()), Value::Object(group));
            }
        }
    }
}

impl PlaceFormat for HookGroupsFile {
    fn describe(&self) -> &'static str {
        self.describe
    }

    fn validate(&self, root: &Map<String, Value>) -> anyhow::Result<()> {
        if let Some(hooks) = root.get("hooks") {
            let Value::Object(events) = hooks else {
                bail!("\"hooks\" is not an object");
            };
            for (name, groups) in events {
                if self.shape.settings_keys.contains(&name.as_str()) {
                    continue;
                }
                let Value::Array(groups) = groups else {
                    bail!("\"hooks.{name}\" is not a list");
                };
                for g in groups {
                    let Value::Object(g) = g else {
                        bail!("\"hooks.{name}\" holds a group that is not an object");
                    };
                    if g.get("hooks").is_some_and(|h| !h.is_array()) {
                        bail!("\"hooks.{name}[].hooks\" is not a list");
                    }
                }
            }
        }
        match self.mcp {
            Some(m) => m.validate(root),
            None => Ok(()),
        }
    }

    fn merge(&self, root: &mut Map<String, Value>, exe: &Path, want: Parts) -> Vec<String> {
        if want.hooks {
            self.merge_hooks(root, exe, want.tools);
        } else {
            self.remove_hooks(root);
        }
        match self.mcp {
            Some(m) => m.merge(root, exe, want),
            None => Vec::new(),
        }
    }

    fn remove(&self, root: &mut Map<String, Value>) -> usize {
        self.remove_hooks(root) + self.mcp.map_or(0, |m| m.remove(root))
    }

    fn present(&self, root: &Map<String, Value>) -> Parts {
        let any = !self.binaries(root).is_empty();
        let events = root.get("hooks").and_then(Value::as_object);
        let tools = self.tool_hooks.iter().any(|spec| {
            events
                .and_then(|e| e.get(spec.event))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|g| g.get("hooks").and_then(Value::as_array))
                .flatten()
                .any(|e| self.is_ours(e))
        });
        Parts {
            hooks: any,
            mcp: any,
            tools,
        }
    }

    fn binaries(&self, root: &Map<String, Value>) -> Vec<String> {
        let mut out: Vec<String> = self
            .entries(root)
            .filter(|e| self.is_ours(e))
            .filter_map(|e| e.get("command").and_then(Value::as_str))
            .map(first_word)
            .collect();
        if let Some(m) = self.mcp {
            out.extend(m.binaries(root));
        }
        out.sort();
        out.dedup();
        out
    }

    fn warnings(&self, root: &Map<String, Value>, path: &Path) -> Vec<String> {
        let off = match self.disable_all_key {
            Some(key) if root.get(key) == Some(&Value::Bool(true)) => {
                Some(format!("\"{key}\" is true"))
            }
            _ => None,
        };
        let off = off.or_else(|| (self.shape.all_off)(root));
        let mut out: Vec<String> = off
            .map(|why| {
                format!(
                    "{}: {why}: {} runs no hooks, ovhook's included",
                    path.display(),
                    self.describe
                )
            })
            .into_iter()
            .collect();
        let ours: Vec<&Value> = self.entries(root).filter(|e| self.is_ours(e)).collect();
        if let Some(why) = (self.shape.ours_off)(root, &ours) {
            out.push(format!("{}: {why}", path.display()));
        }
        out
    }
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    static SPECS: [HookSpec; 2] = [
        HookSpec {
            event: "SessionStart",
            sub: "session-start",
            matcher: None,
            timeout_s: 15,
            status: "openviking-memory: loading your profile",
        },
        HookSpec {
            event: "PreToolUse",
            sub: "pre-tool-use",
            matcher: Some("Read"),
            timeout_s: 5,
            status: "openviking-memory: checking viking:// paths",
        },
    ];
    static FILE: HookGroupsFile = HookGroupsFile {
        describe: "test settings",
        harness: "qwen",
        hooks: &SPECS,
        tool_hooks: &[],
        mcp: None,
        disable_all_key: Some("disableAllHooks"),
        shape: &CLAUDE_ENTRY,
    };

    #[test]
    fn our_line_names_its_harness_as_a_whole_word() {
        let line = ovhook_command(Path::new("/h/o p/ovhook"), "cursor", "stop");
        assert_eq!(line, "'/h/o p/ovhook' --harness cursor stop");
        assert!(runs_ovhook_for(&line, "cursor"));
        assert!(!runs_ovhook_for(&line, "curso"));
        assert!(!runs_ovhook_for(
            "/h/ovhook --harness cursorx stop",
            "cursor"
        ));
        assert!(!runs_ovhook_for(
            "/h/not-ovhook --harness cursor stop",
            "cursor"
        ));
        assert!(is_ovhook_binary("C:/x/ovhook.exe") && !is_ovhook_binary("ovhooks"));
    }

    #[test]
    fn shell_words_round_trip() {
        for p in [
            "/opt/bin/ovhook",
            "/home/a b/ovhook",
            "/x/it's/ovhook",
            "/x/$HOME/ovhook",
        ] {
            let line = format!("{} --harness qwen stop", shell_quote(p));
            assert_eq!(first_word(&line), p, "{line}");
        }
        assert_eq!(
            first_word("/usr/bin/ovhook --harness qwen stop"),
            "/usr/bin/ovhook"
        );
    }

    #[test]
    fn merges_in_place_keeps_foreign_and_removes_only_ours() {
        let mut root: Map<String, Value> = serde_json::from_value(json!({
            "model": "x",
            "hooks": {"SessionStart": [
                {"hooks": [{"type": "command", "command": "echo mine"}]},
                {"hooks": [{"type": "command", "command": "/old/ovhook --harness qwen session-start"}]}
            ]}
        }))
        .expect("map");
        let exe = Path::new("/new dir/ovhook");
        FILE.merge(&mut root, exe, Parts::HOOKS);
        let once = root.clone();
        FILE.merge(&mut root, exe, Parts::HOOKS);
        assert_eq!(root, once);
        let ss = root["hooks"]["SessionStart"].as_array().expect("list");
        assert_eq!(ss.len(), 2);
        assert_eq!(ss[0]["hooks"][0]["command"], "echo mine");
        assert_eq!(
            ss[1]["hooks"][0]["command"],
            "'/new dir/ovhook' --harness qwen session-start"
        );
        assert_eq!(root["hooks"]["PreToolUse"][0]["matcher"], "Read");
        assert_eq!(FILE.binaries(&root), ["/new dir/ovhook"]);
        let mut off = root.clone();
        off.insert("disableAllHooks".into(), json!(true));
        assert_eq!(FILE.warnings(&off, Path::new("/s.json")).len(), 1);
        let mut off = root.clone();
        off.insert("disableAllHooks".into(), json!(true));
        assert_eq!(FILE.warnings(&off, Path::new("/s.json")).len(), 1);
        assert_eq!(FILE.remove(&mut root), 2);
        assert_eq!(
            Value::Object(root),
            json!({"model": "x", "hooks": {"SessionStart": [
                {"hooks": [{"type": "command", "command": "echo mine"}]}]}})
        );
    }

    #[test]
    fn another_harness_entries_are_not_ours() {
        let codex = json!({"type": "command", "command": "/b/ovhook --harness codex stop"});
        assert!(!FILE.is_ours(&codex));
        assert!(FILE.is_ours(&json!({"command": "/b/ovhook --harness qwen stop"})));
        let bad: Map<String, Value> =
            serde_json::from_value(json!({"hooks": {"Stop": {}}})).expect("map");
        assert!(FILE.validate(&bad).is_err());
    }
}
