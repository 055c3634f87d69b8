//! `ovhook install --harness claude-code` / `uninstall` / `doctor` against a temporary HOME,
//! through the real binary: hooks in `~/.claude/settings.json`, the MCP server in
//! `~/.claude.json`, foreign entries kept, backups, malformed files refused, idempotent, a
//! clean uninstall, `--no-mcp`.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{json, Value};
use tempfile::TempDir;

struct Home {
    dir: TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn settings(&self) -> PathBuf {
        self.path().join(".claude/settings.json")
    }
    fn claude_json(&self) -> PathBuf {
        self.path().join(".claude.json")
    }
    fn cmd(&self, args: &[&str]) -> assert_cmd::assert::Assert {
        Command::cargo_bin("ovhook")
            .expect("binary")
            .env_clear()
            .env("HOME", self.path())
            .env("PATH", "/usr/bin:/bin")
            .current_dir(self.path())
            .args(args)
            .assert()
    }
    fn install(&self, extra: &[&str]) -> assert_cmd::assert::Assert {
        let mut args = vec!["install", "--harness", "claude-code"];
        args.extend_from_slice(extra);
        self.cmd(&args)
    }
    fn write(&self, p: &Path, v: &str) {
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, v).expect("write");
    }
    fn json(&self, p: &Path) -> Value {
        serde_json::from_slice(&fs::read(p).expect("read")).expect("json")
    }
}

fn ours(groups: &Value) -> Vec<&Value> {
    groups
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
        .filter(|e| {
            e["command"]
                .as_str()
                .is_some_and(|c| c.contains("--harness claude-code"))
        })
        .collect()
}

#[test]
fn install_merges_keeps_foreign_entries_and_uninstall_restores() {
    let h = Home::new();
    let settings = json!({
        "model": "opus",
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}
    });
    let claude_json =
        json!({"numStartups": 4, "mcpServers": {"other": {"type": "stdio", "command": "x"}}});
    h.write(&h.settings(), &settings.to_string());
    h.write(&h.claude_json(), &claude_json.to_string());
    h.install(&["--url", "http://127.0.0.1:1"]).success();
    let s = h.json(&h.settings());
    assert_eq!(s["model"], "opus");
    for (event, sub) in [
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "user-prompt-submit"),
        ("PreToolUse", "pre-tool-use"),
        ("Stop", "stop"),
        ("SessionEnd", "session-end"),
    ] {
        let e = ours(&s["hooks"][event]);
        assert_eq!(e.len(), 1, "{event}: {s}");
        assert_eq!(e[0]["type"], "command");
        assert!(e[0]["timeout"]
            .as_u64()
            .is_some_and(|t| (1..=60).contains(&t)));
        assert!(e[0]["command"].as_str().expect("cmd").ends_with(sub));
        let bin = e[0]["command"]
            .as_str()
            .expect("cmd")
            .split('\'')
            .nth(1)
            .expect("quoted");
        assert!(Path::new(bin).is_file(), "{bin}");
    }
    let pre = s["hooks"]["PreToolUse"].as_array().expect("list");
    assert_eq!(pre[0]["matcher"], "Read|Glob|Grep");
    assert!(s["hooks"]["Stop"][0].get("matcher").is_none());
    assert_eq!(s["hooks"]["Stop"].as_array().expect("list").len(), 2);
    let c = h.json(&h.claude_json());
    assert_eq!(c["numStartups"], 4);
    assert_eq!(c["mcpServers"]["other"]["command"], "x");
    let mcp = &c["mcpServers"]["openviking"];
    assert_eq!(mcp["type"], "stdio");
    assert_eq!(mcp["args"], json!(["mcp"]));
    // Backups of what was there.
    assert_eq!(
        h.json(&h.path().join(".claude/settings.json.bak")),
        settings
    );
    assert_eq!(h.json(&h.path().join(".claude.json.bak")), claude_json);
    // Idempotent.
    let before = (
        fs::read(h.settings()).expect("r"),
        fs::read(h.claude_json()).expect("r"),
    );
    h.install(&[]).success();
    assert_eq!(
        (
            fs::read(h.settings()).expect("r"),
            fs::read(h.claude_json()).expect("r")
        ),
        before
    );
    h.cmd(&["doctor"])
        .stdout(predicates::str::contains("ok claude-code SessionEnd"));
    // Clean uninstall: every foreign entry, nothing of ours.
    h.cmd(&["uninstall"]).success();
    assert_eq!(h.json(&h.settings()), settings);
    assert_eq!(h.json(&h.claude_json()), claude_json);
}

#[test]
fn no_mcp_fresh_home_and_uninstall_leaves_nothing() {
    let h = Home::new();
    h.install(&["--no-mcp"]).success();
    assert_eq!(ours(&h.json(&h.settings())["hooks"]["Stop"]).len(), 1);
    assert!(
        !h.claude_json().exists(),
        "--no-mcp writes no ~/.claude.json"
    );
    h.install(&[]).success();
    assert!(h.json(&h.claude_json())["mcpServers"]["openviking"].is_object());
    h.install(&["--no-mcp"]).success();
    assert!(
        h.json(&h.claude_json()).get("mcpServers").is_none(),
        "--no-mcp takes our server out again"
    );
    h.cmd(&["uninstall"]).success();
    assert!(!h.settings().exists(), "a file install created is removed");
}

#[test]
fn malformed_files_are_refused_and_left_untouched() {
    for (file, content) in [
        (".claude/settings.json", "{not json"),
        (".claude/settings.json", r#"{"hooks": []}"#),
        (".claude/settings.json", r#"{"hooks": {"Stop": {}}}"#),
        (".claude.json", r#"{"mcpServers": []}"#),
    ] {
        let h = Home::new();
        let p = h.path().join(file);
        h.write(&p, content);
        h.install(&[]).failure();
        assert_eq!(fs::read_to_string(&p).expect("read"), content, "{file}");
        let other = if file == ".claude.json" {
            h.settings()
        } else {
            h.claude_json()
        };
        assert!(!other.exists(), "nothing half written: {}", other.display());
    }
}
