//! Where Claude Code reads the configuration that runs ovhook.
//!
//! | scope | file | holds |
//! |---|---|---|
//! | user | `~/.claude/settings.json` | hooks: `hooks.<Event>[{matcher?, hooks:[{type:"command", command, timeout, statusMessage}]}]` |
//! | user | `~/.claude.json` | MCP: `mcpServers.openviking` `{type:"stdio", command, args, env}` |
//! | project | `<git root>/.claude/settings.json` | hooks only |
//!
//! A hook's `command` is a shell line, `'<ovhook>' --harness claude-code <event>`; its
//! `timeout` is in seconds; only PreToolUse has a `matcher` (`Read|Glob|Grep`). Our entries
//! are those whose `statusMessage` starts with `openviking-memory:`, or whose command runs a
//! binary named `ovhook` with `--harness claude-code`.

use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::{json, Map, Value};

use crate::harness::zcode::config_file::STATUS_PREFIX;
use crate::install::json_doc::object_at;
use crate::install::mcp_servers::McpServersFile;
use crate::install::target::{InstallTarget, Parts, Place, PlaceFormat, Scope};

/// The Claude Code target.
pub static CLAUDE_CODE: ClaudeCodeTarget = ClaudeCodeTarget;

/// Claude Code's `settings.json` (user and project files share it).
pub static CLAUDE_SETTINGS: ClaudeSettings = ClaudeSettings;

/// `~/.claude.json`.
pub static CLAUDE_JSON: McpServersFile = McpServersFile {
    describe: "Claude Code user file (~/.claude.json)",
    stdio_type: true,
};

/// The hooks ovhook installs: event, subcommand, matcher, timeout (s), status message.
pub const OUR_HOOKS: [(&str, &str, Option<&str>, u64, &str); 5] = [
    (
        "SessionStart",
        "session-start",
        None,
        15,
        "openviking-memory: loading your profile",
    ),
    (
        "UserPromptSubmit",
        "user-prompt-submit",
        None,
        10,
        "openviking-memory: recalling memories",
    ),
    (
        "PreToolUse",
        "pre-tool-use",
        Some("Read|Glob|Grep"),
        5,
        "openviking-memory: checking viking:// paths",
    ),
    (
        "Stop",
        "stop",
        None,
        10,
        "openviking-memory: saving the turn",
    ),
    (
        "SessionEnd",
        "session-end",
        None,
        5,
        "openviking-memory: saving the session",
    ),
];

/// `<home>/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when set).
pub fn user_settings_path(home: &Path) -> PathBuf {
    super::transcript_source::config_dir(home).join("settings.json")
}

/// `<home>/.claude.json`.
pub fn user_file_path(home: &Path) -> PathBuf {
    home.join(".claude.json")
}

/// `<root>/.claude/settings.json`.
pub fn project_settings_path(root: &Path) -> PathBuf {
    root.join(".claude").join("settings.json")
}

/// Claude Code.
#[derive(Debug)]
pub struct ClaudeCodeTarget;

impl InstallTarget for ClaudeCodeTarget {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn title(&self) -> &'static str {
        "Claude Code"
    }

    fn supports_project(&self) -> bool {
        true
    }

    fn places(&self, home: &Path, scope: &Scope) -> Vec<Place> {
        match scope {
            Scope::User => vec![
                Place {
                    path: user_settings_path(home),
                    format: &CLAUDE_SETTINGS,
                    holds: Parts::HOOKS,
                },
                Place {
                    path: user_file_path(home),
                    format: &CLAUDE_JSON,
                    holds: Parts::MCP,
                },
            ],
            Scope::Project { root } => vec![Place {
                path: project_settings_path(root),
                format: &CLAUDE_SETTINGS,
                holds: Parts::HOOKS,
            }],
        }
    }

    fn events(&self) -> &'static str {
        "SessionStart, UserPromptSubmit, PreToolUse (Read|Glob|Grep), Stop, SessionEnd"
    }

    fn notes(&self, scope: &Scope) -> Vec<String> {
        match scope {
            Scope::User => Vec::new(),
            Scope::Project { root } => vec![format!(
                "{} is inside the repository and may be committed: it names this machine's \
                 ovhook binary and holds no credentials or URLs",
                project_settings_path(root).display()
            )],
        }
    }
}

/// `s` quoted for a POSIX shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The first word of a shell line, unquoted (single quotes, `'\''`, or a bare word).
pub fn first_word(line: &str) -> String {
    let line = line.trim_start();
    let mut out = String::new();
    let mut chars = line.chars().peekable();
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

/// The shell line of our hook for `sub`.
pub fn hook_command(exe: &Path, sub: &str) -> String {
    format!(
        "{} --harness claude-code {sub}",
        shell_quote(&exe.to_string_lossy())
    )
}

/// An entry written by ovhook.
pub fn is_ours(entry: &Value) -> bool {
    if entry
        .get("statusMessage")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with(STATUS_PREFIX))
    {
        return true;
    }
    let Some(cmd) = entry.get("command").and_then(Value::as_str) else {
        return false;
    };
    let bin = first_word(cmd);
    let name = Path::new(&bin)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    name.is_some_and(|n| n == "ovhook" || n == "ovhook.exe")
        && cmd.contains("--harness claude-code")
}

/// Removes our entries; drops groups left empty. Returns (removed, index of the first group
/// that held one of ours).
fn remove_ours_from_groups(groups: &mut Vec<Value>) -> (usize, Option<usize>) {
    let mut first = None;
    let mut removed = 0;
    let mut kept = Vec::with_capacity(groups.len());
    for mut group in std::mem::take(groups) {
        if let Some(Value::Array(entries)) = group.get_mut("hooks") {
            let before = entries.len();
            entries.retain(|e| !is_ours(e));
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

/// Claude Code's `settings.json`.
#[derive(Debug)]
pub struct ClaudeSettings;

impl PlaceFormat for ClaudeSettings {
    fn describe(&self) -> &'static str {
        "Claude Code settings"
    }

    fn validate(&self, root: &Map<String, Value>) -> anyhow::Result<()> {
        let Some(hooks) = root.get("hooks") else {
            return Ok(());
        };
        let Value::Object(hooks) = hooks else {
            bail!("\"hooks\" is not an object");
        };
        for (event, groups) in hooks {
            let Value::Array(groups) = groups else {
                bail!("\"hooks.{event}\" is not a list");
            };
            for g in groups {
                let Value::Object(g) = g else {
                    bail!("\"hooks.{event}\" holds a group that is not an object");
                };
                if g.get("hooks").is_some_and(|h| !h.is_array()) {
                    bail!("\"hooks.{event}[].hooks\" is not a list");
                }
            }
        }
        Ok(())
    }

    fn merge(&self, root: &mut Map<String, Value>, exe: &Path, want: Parts) -> Vec<String> {
        if !want.hooks {
            self.remove(root);
            return Vec::new();
        }
        let hooks = object_at(root, "hooks");
        for (event, sub, matcher, timeout, status) in OUR_HOOKS {
            let mut group = Map::new();
            if let Some(m) = matcher {
                group.insert("matcher".into(), json!(m));
            }
            group.insert(
                "hooks".into(),
                json!([{
                    "type": "command",
                    "command": hook_command(exe, sub),
                    "timeout": timeout,
                    "statusMessage": status,
                }]),
            );
            let groups = hooks.entry(event).or_insert_with(|| json!([]));
            if let Value::Array(list) = groups {
                let (_, at) = remove_ours_from_groups(list);
                let at = at.unwrap_or(list.len()).min(list.len());
                list.insert(at, Value::Object(group));
            }
        }
        Vec::new()
    }

    fn remove(&self, root: &mut Map<String, Value>) -> usize {
        let Some(Value::Object(hooks)) = root.get_mut("hooks") else {
            return 0;
        };
        let mut removed = 0;
        for groups in hooks.values_mut() {
            if let Value::Array(list) = groups {
                removed += remove_ours_from_groups(list).0;
            }
        }
        hooks.retain(|_, g| !matches!(g, Value::Array(l) if l.is_empty()));
        if hooks.is_empty() {
            root.remove("hooks");
        }
        removed
    }

    fn binaries(&self, root: &Map<String, Value>) -> Vec<String> {
        let mut out: Vec<String> = root
            .get("hooks")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|h| h.values())
            .filter_map(Value::as_array)
            .flatten()
            .filter_map(|g| g.get("hooks").and_then(Value::as_array))
            .flatten()
            .filter(|e| is_ours(e))
            .filter_map(|e| e.get("command").and_then(Value::as_str))
            .map(first_word)
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn warnings(&self, root: &Map<String, Value>, path: &Path) -> Vec<String> {
        if root.get("disableAllHooks") == Some(&Value::Bool(true)) {
            vec![format!(
                "{}: \"disableAllHooks\" is true: Claude Code runs no hooks, ovhook's included",
                path.display()
            )]
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_quote_the_binary_and_read_back() {
        let exe = Path::new("/opt/my bin/it's/ovhook");
        let cmd = hook_command(exe, "stop");
        assert_eq!(
            cmd,
            r"'/opt/my bin/it'\''s/ovhook' --harness claude-code stop"
        );
        assert_eq!(first_word(&cmd), "/opt/my bin/it's/ovhook");
        assert!(is_ours(&json!({"type": "command", "command": cmd})));
        assert!(is_ours(
            &json!({"command": "/usr/bin/ovhook --harness claude-code stop"})
        ));
        assert!(!is_ours(&json!({"command": "/usr/bin/ovhook stop"})));
        assert!(!is_ours(
            &json!({"command": "echo ovhook --harness claude-code"})
        ));
    }

    #[test]
    fn merge_keeps_foreign_hooks_is_idempotent_and_removes_cleanly() {
        let foreign = json!({
            "model": "x",
            "hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]
            }
        });
        let Value::Object(mut root) = foreign.clone() else {
            panic!()
        };
        let exe = Path::new("/opt/ovhook");
        CLAUDE_SETTINGS.validate(&root).expect("valid");
        CLAUDE_SETTINGS.merge(&mut root, exe, Parts::HOOKS);
        let once = root.clone();
        CLAUDE_SETTINGS.merge(&mut root, exe, Parts::HOOKS);
        assert_eq!(root, once, "idempotent");
        let hooks = root["hooks"].as_object().expect("hooks");
        for (event, sub, matcher, timeout, _) in OUR_HOOKS {
            let ours: Vec<&Value> = hooks[event]
                .as_array()
                .expect("list")
                .iter()
                .filter(|g| g["hooks"].as_array().is_some_and(|h| h.iter().any(is_ours)))
                .collect();
            assert_eq!(ours.len(), 1, "{event}");
            assert_eq!(ours[0].get("matcher").and_then(Value::as_str), matcher);
            let e = &ours[0]["hooks"][0];
            assert_eq!(e["type"], "command");
            assert_eq!(e["timeout"], timeout);
            assert!(e["command"].as_str().expect("cmd").ends_with(sub));
        }
        assert_eq!(
            hooks["Stop"].as_array().expect("list").len(),
            2,
            "foreign kept"
        );
        assert_eq!(CLAUDE_SETTINGS.binaries(&root), ["/opt/ovhook"]);
        assert_eq!(CLAUDE_SETTINGS.remove(&mut root), 5);
        assert_eq!(
            Value::Object(root),
            foreign,
            "uninstall leaves the file as it was"
        );
    }

    #[test]
    fn malformed_shapes_are_refused() {
        for bad in [
            json!({"hooks": []}),
            json!({"hooks": {"Stop": {}}}),
            json!({"hooks": {"Stop": [1]}}),
            json!({"hooks": {"Stop": [{"hooks": {}}]}}),
        ] {
            let Value::Object(root) = bad else { panic!() };
            assert!(CLAUDE_SETTINGS.validate(&root).is_err(), "{root:?}");
        }
    }
}
