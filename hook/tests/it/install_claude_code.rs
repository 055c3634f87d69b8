//! `ovhook install --harness claude-code` / `uninstall` / `doctor` against a temporary HOME,
//! through the real binary: hooks in `~/.claude/settings.json`, the MCP server in
//! `~/.claude.json`, foreign entries kept, backups, malformed files refused, idempotent, a
//! clean uninstall, `--no-mcp`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::Env;

fn settings_path(h: &Env) -> PathBuf {
    h.home().join(".claude/settings.json")
}

fn claude_json_path(h: &Env) -> PathBuf {
    h.home().join(".claude.json")
}

fn run(h: &Env, args: &[&str]) -> assert_cmd::assert::Assert {
    h.cmd(args).assert()
}

fn install(h: &Env, extra: &[&str]) -> assert_cmd::assert::Assert {
    let mut args = vec!["install", "--harness", "claude-code"];
    args.extend_from_slice(extra);
    run(h, &args)
}

fn write(p: &Path, v: &str) {
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, v).expect("write");
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&fs::read(p).expect("read")).expect("json")
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
    let h = Env::bare();
    let settings = json!({
        "model": "opus",
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}
    });
    let claude_json =
        json!({"numStartups": 4, "mcpServers": {"other": {"type": "stdio", "command": "x"}}});
    write(&settings_path(&h), &settings.to_string());
    write(&claude_json_path(&h), &claude_json.to_string());
    install(&h, &["--url", "http://127.0.0.1:1"]).success();
    let s = read_json(&settings_path(&h));
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
    let c = read_json(&claude_json_path(&h));
    assert_eq!(c["numStartups"], 4);
    assert_eq!(c["mcpServers"]["other"]["command"], "x");
    let mcp = &c["mcpServers"]["openviking"];
    assert_eq!(mcp["type"], "stdio");
    assert_eq!(mcp["args"], json!(["mcp"]));
    // Backups of what was there.
    assert_eq!(
        read_json(&h.home().join(".claude/settings.json.bak")),
        settings
    );
    assert_eq!(read_json(&h.home().join(".claude.json.bak")), claude_json);
    // Idempotent.
    let before = (
        fs::read(settings_path(&h)).expect("r"),
        fs::read(claude_json_path(&h)).expect("r"),
    );
    install(&h, &[]).success();
    assert_eq!(
        (
            fs::read(settings_path(&h)).expect("r"),
            fs::read(claude_json_path(&h)).expect("r")
        ),
        before
    );
    run(&h, &["doctor"]).stdout(predicates::str::contains("ok claude-code SessionEnd"));
    // Clean uninstall: every foreign entry, nothing of ours.
    run(&h, &["uninstall"]).success();
    assert_eq!(read_json(&settings_path(&h)), settings);
    assert_eq!(read_json(&claude_json_path(&h)), claude_json);
}

#[test]
fn no_mcp_fresh_home_and_uninstall_leaves_nothing() {
    let h = Env::bare();
    install(&h, &["--no-mcp"]).success();
    assert_eq!(
        ours(&read_json(&settings_path(&h))["hooks"]["Stop"]).len(),
        1
    );
    assert!(
        !claude_json_path(&h).exists(),
        "--no-mcp writes no ~/.claude.json"
    );
    install(&h, &[]).success();
    assert!(read_json(&claude_json_path(&h))["mcpServers"]["openviking"].is_object());
    install(&h, &["--no-mcp"]).success();
    assert!(
        read_json(&claude_json_path(&h)).get("mcpServers").is_none(),
        "--no-mcp takes our server out again"
    );
    run(&h, &["uninstall"]).success();
    assert!(
        !settings_path(&h).exists(),
        "a file install created is removed"
    );
}

#[test]
fn malformed_files_are_refused_and_left_untouched() {
    for (file, content) in [
        (".claude/settings.json", "{not json"),
        (".claude/settings.json", r#"{"hooks": []}"#),
        (".claude/settings.json", r#"{"hooks": {"Stop": {}}}"#),
        (".claude.json", r#"{"mcpServers": []}"#),
    ] {
        let h = Env::bare();
        let p = h.home().join(file);
        write(&p, content);
        install(&h, &[]).failure();
        assert_eq!(fs::read_to_string(&p).expect("read"), content, "{file}");
        let other = if file == ".claude.json" {
            settings_path(&h)
        } else {
            claude_json_path(&h)
        };
        assert!(!other.exists(), "nothing half written: {}", other.display());
    }
}
