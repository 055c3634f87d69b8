//! `ovhook install --harness qwen|codex|copilot|gemini|opencode|kilo|cursor|antigravity|droid` and `uninstall` on a temporary HOME: our
//! entries go into each agent's own files next to foreign ones, a re-install rewrites
//! nothing, uninstall leaves the user's files as they were, a malformed file is refused
//! untouched, and doctor reports the install.

use crate::common;

use std::path::Path;

use common::Env;
use serde_json::{json, Value};

fn ok(env: &Env, args: &[&str]) -> String {
    let out = env.run_with(args, b"", &[]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{args:?}: {text}");
    text
}

fn read(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .expect("json")
}

/// (harness, its files with foreign entries, the file and JSON pointer of a hook of ours)
type Case = (
    &'static str,
    Vec<(&'static str, Value)>,
    &'static str,
    &'static str,
);

fn cases() -> Vec<Case> {
    vec![
        (
            "qwen",
            vec![(
                ".qwen/settings.json",
                json!({"model": {"name": "x"}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
                       "mcpServers": {"other": {"command": "other-mcp"}}}),
            )],
            ".qwen/settings.json",
            "/hooks/Stop/1/hooks/0/command",
        ),
        (
            "codex",
            vec![(
                ".codex/hooks.json",
                json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]}}),
            )],
            ".codex/hooks.json",
            "/hooks/PreToolUse/1/hooks/0/command",
        ),
        (
            "copilot",
            vec![
                (
                    ".copilot/settings.json",
                    json!({"model": "x", "hooks": {"agentStop": [{"type": "command", "bash": "echo mine"}]}}),
                ),
                (
                    ".copilot/mcp-config.json",
                    json!({"mcpServers": {"other": {"type": "local", "command": "other-mcp", "tools": ["*"]}}}),
                ),
            ],
            ".copilot/settings.json",
            "/hooks/agentStop/1/bash",
        ),
        (
            "gemini",
            vec![(
                ".gemini/settings.json",
                json!({"security": {"auth": {"selectedType": "gemini-api-key"}},
                       "hooks": {"disabled": ["old-hook"],
                                 "AfterAgent": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5000}]}]},
                       "mcpServers": {"other": {"command": "other-mcp"}}}),
            )],
            ".gemini/settings.json",
            "/hooks/AfterAgent/1/hooks/0/command",
        ),
        (
            "cursor",
            vec![
                (
                    ".cursor/hooks.json",
                    json!({"version": 1, "hooks": {"stop": [{"command": "./hooks/audit.sh", "timeout": 5}]}}),
                ),
                (
                    ".cursor/mcp.json",
                    json!({"mcpServers": {"other": {"command": "other-mcp"}}}),
                ),
            ],
            ".cursor/hooks.json",
            "/hooks/stop/1/command",
        ),
        (
            "droid",
            vec![(
                ".factory/settings.json",
                json!({"model": "x", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]}}),
            )],
            ".factory/settings.json",
            "/hooks/Stop/1/hooks/0/command",
        ),
        (
            "antigravity",
            vec![(
                ".gemini/config/hooks.json",
                json!({"remember": {"enabled": true, "Stop": [{"type": "command", "command": "remember stop", "timeout": 30}]}}),
            )],
            ".gemini/config/hooks.json",
            "/openviking-memory/Stop/0/command",
        ),
        (
            "opencode",
            vec![(
                ".config/opencode/opencode.json",
                json!({"model": "fake/m", "plugin": ["opencode-wakatime"],
                       "mcp": {"other": {"type": "remote", "url": "http://127.0.0.1:1"}}}),
            )],
            ".config/opencode/opencode.json",
            "/plugin/1",
        ),
        (
            "kilo",
            vec![(
                ".config/kilo/kilo.json",
                json!({"model": "fake/m", "plugin": ["file:///opt/their-plugin.js"]}),
            )],
            ".config/kilo/kilo.json",
            "/plugin/1",
        ),
    ]
}

#[test]
fn install_keeps_foreign_entries_is_idempotent_and_uninstall_restores() {
    for (harness, files, ours_in, pointer) in cases() {
        let env = Env::new();
        let home = env.home().display().to_string();
        for (rel, content) in &files {
            let p = env.home().join(rel);
            std::fs::create_dir_all(p.parent().expect("dir")).expect("mkdir");
            std::fs::write(&p, serde_json::to_vec_pretty(content).expect("json")).expect("write");
        }
        let said = ok(&env, &["install", "--harness", harness, "--home", &home]);
        // The summary names an MCP entry only where install writes one (Codex and Droid get
        // a note on adding it by hand instead).
        match harness {
            "codex" | "droid" => assert!(!said.contains("mcp: openviking"), "{said}"),
            "qwen" => assert!(said.contains("  mcp: openviking -> "), "{said}"),
            _ => {}
        }
        let installed = read(&env.home().join(ours_in));
        let cmd = installed
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{harness}: no hook of ours at {pointer}: {installed:#}"));
        // A command hook runs `ovhook --harness <name>`; OpenCode and Kilo load our plugin shim,
        // written beside the binary, which runs it.
        let shim = env
            .home()
            .join(format!(".openviking/ovhook/bin/ovhook-{harness}.js"));
        let plugin = format!("file://{}", shim.display());
        assert!(
            cmd.contains(&format!("--harness {harness} ")) || cmd == plugin,
            "{cmd}"
        );
        if cmd == plugin {
            let text = std::fs::read_to_string(&shim).expect("the shim is written");
            assert!(text.contains(&format!("const HARNESS = \"{harness}\";")));
            assert_eq!(
                installed.pointer("/mcp/openviking/command/1"),
                Some(&json!("mcp")),
                "{installed:#}"
            );
        }
        // Every entry names the stable home, which holds this binary's bytes.
        let stable = env
            .home()
            .join(".openviking/ovhook/bin/ovhook")
            .display()
            .to_string();
        assert!(cmd.contains(&stable), "{harness}: {cmd}");
        assert_eq!(
            std::fs::read(&stable).expect("stable home"),
            std::fs::read(env!("CARGO_BIN_EXE_ovhook")).expect("ovhook"),
        );
        let bytes: Vec<Vec<u8>> = files
            .iter()
            .map(|(rel, _)| std::fs::read(env.home().join(rel)).expect("read"))
            .collect();
        ok(&env, &["install", "--harness", harness, "--home", &home]);
        for ((rel, _), before) in files.iter().zip(&bytes) {
            assert_eq!(
                &std::fs::read(env.home().join(rel)).expect("read"),
                before,
                "{harness}: a re-install rewrote {rel}"
            );
        }
        let doctor = env.run_with(&["doctor", "--home", &home], b"", &[]);
        let report = String::from_utf8_lossy(&doctor.stdout);
        assert!(
            report
                .lines()
                .any(|l| l.starts_with("ok ") && l.contains(&stable)),
            "{harness}: {report}"
        );
        ok(&env, &["uninstall", "--harness", harness, "--home", &home]);
        for (rel, content) in &files {
            assert_eq!(
                &read(&env.home().join(rel)),
                content,
                "{harness}: uninstall left {rel} changed"
            );
        }
        assert!(
            !Path::new(&stable).exists(),
            "{harness}: uninstall removes the binary once nothing names it"
        );
        assert!(!shim.exists(), "{harness}: uninstall removes the shim");
    }
}

#[test]
fn a_malformed_file_is_refused_and_left_untouched() {
    for (harness, rel) in [
        ("qwen", ".qwen/settings.json"),
        ("codex", ".codex/hooks.json"),
        ("copilot", ".copilot/settings.json"),
        ("gemini", ".gemini/settings.json"),
        ("opencode", ".config/opencode/opencode.json"),
        ("kilo", ".config/kilo/kilo.json"),
        ("cursor", ".cursor/hooks.json"),
        ("antigravity", ".gemini/config/hooks.json"),
        ("droid", ".factory/settings.json"),
    ] {
        let env = Env::new();
        let p = env.home().join(rel);
        std::fs::create_dir_all(p.parent().expect("dir")).expect("mkdir");
        std::fs::write(&p, "{\"hooks\": [}").expect("write");
        let home = env.home().display().to_string();
        let out = env.run_with(
            &["install", "--harness", harness, "--home", &home],
            b"",
            &[],
        );
        assert_eq!(out.status.code(), Some(1), "{harness}");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "{\"hooks\": [}");
    }
}

/// Codex runs our hooks only once the user trusts them: without consent the install records
/// nothing and says what to do (and `doctor` says Codex will not run them); with `--trust` it
/// records one trust entry per hook in `config.toml`, keeping the user's bytes; uninstall takes
/// the entries out again.
#[test]
fn codex_trust_is_recorded_only_with_consent_and_removed_by_uninstall() {
    let env = Env::new();
    let home = env.home().display().to_string();
    let config = env.home().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().expect("dir")).expect("mkdir");
    let user = "model = \"gpt-5\" # mine\n\n[projects.\"/work\"]\ntrust_level = \"trusted\"\n";
    std::fs::write(&config, user).expect("write");

    // No terminal, no flag: no consent.
    let said = ok(&env, &["install", "--harness", "codex", "--home", &home]);
    assert!(said.contains("until you trust them"), "{said}");
    assert_eq!(std::fs::read_to_string(&config).expect("read"), user);
    let doctor = env.run_with(&["doctor", "--home", &home], b"", &[]);
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        report.contains("will not run 7 of our 7 hooks"),
        "doctor must say Codex skips untrusted hooks:\n{report}"
    );

    let said = ok(
        &env,
        &["install", "--harness", "codex", "--home", &home, "--trust"],
    );
    assert!(said.contains("Codex trusts ovhook's 7 hooks"), "{said}");
    let text = std::fs::read_to_string(&config).expect("read");
    assert!(text.starts_with(user), "{text}");
    let hooks_json = env.home().join(".codex/hooks.json").display().to_string();
    for event in [
        "session_start",
        "user_prompt_submit",
        "pre_tool_use",
        "stop",
        "session_end",
        "pre_compact",
        "subagent_stop",
    ] {
        assert!(
            text.contains(&format!("[hooks.state.\"{hooks_json}:{event}:0:0\"]")),
            "{event}:\n{text}"
        );
    }
    assert_eq!(
        text.matches("trusted_hash = \"sha256:").count(),
        7,
        "{text}"
    );
    let doctor = env.run_with(&["doctor", "--home", &home], b"", &[]);
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        report.contains("trusts and runs all 7 of our hooks"),
        "{report}"
    );
    // Codex cuts a SessionEnd timeout over 3 s and reports it on every run.
    let installed = read(&env.home().join(".codex/hooks.json"));
    assert_eq!(
        installed.pointer("/hooks/SessionEnd/0/hooks/0/timeout"),
        Some(&json!(3))
    );

    let said = ok(&env, &["uninstall", "--harness", "codex", "--home", &home]);
    assert!(
        said.contains("removed 7 Codex CLI hook trust records"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&config).expect("read"), user);
}
