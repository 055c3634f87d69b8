//! `ovhook install` / `ovhook uninstall` against a temporary HOME, through the real binary.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::Env;

const VALID: [&str; 7] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
];

fn backup_path(h: &Env) -> PathBuf {
    h.home().join(".zcode/cli/config.json.bak")
}

fn run(h: &Env, args: &[&str]) -> assert_cmd::assert::Assert {
    h.cmd(args).assert()
}

fn install(h: &Env, extra: &[&str]) -> assert_cmd::assert::Assert {
    let mut args = vec!["install", "--harness", "zcode"];
    args.extend_from_slice(extra);
    run(h, &args)
}

fn write_config(h: &Env, v: &Value) {
    let p = h.zcode_config();
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(&p, serde_json::to_vec_pretty(v).expect("json")).expect("write");
}

fn read_config(h: &Env) -> Value {
    serde_json::from_slice(&fs::read(h.zcode_config()).expect("read")).expect("json")
}

fn groups<'a>(cfg: &'a Value, event: &str) -> &'a Vec<Value> {
    cfg["hooks"]["events"][event].as_array().expect("groups")
}

fn ours(cfg: &Value, event: &str) -> Vec<Value> {
    groups(cfg, event)
        .iter()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter(|e| {
            e["statusMessage"]
                .as_str()
                .is_some_and(|s| s.starts_with("openviking-memory:"))
        })
        .collect()
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).expect("meta").permissions().mode() & 0o777
}

#[test]
fn fresh_install_writes_four_process_hooks_and_the_mcp_server() {
    let h = Env::bare();
    install(&h, &[]).success();
    let cfg = read_config(&h);
    assert_eq!(cfg["hooks"]["enabled"], json!(true));
    let events: Vec<&String> = cfg["hooks"]["events"]
        .as_object()
        .expect("events")
        .keys()
        .collect();
    assert_eq!(
        events,
        ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"]
    );
    for (event, sub) in [
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "user-prompt-submit"),
        ("PreToolUse", "pre-tool-use"),
        ("Stop", "stop"),
    ] {
        let g = groups(&cfg, event);
        assert_eq!(g.len(), 1, "{event}");
        let group = g[0].as_object().expect("group");
        if event == "PreToolUse" {
            assert_eq!(group["matcher"], json!("Read|Glob|Grep"));
        } else {
            assert!(!group.contains_key("matcher"), "{event} has a matcher");
        }
        let entry = &group["hooks"][0];
        assert_eq!(entry["type"], json!("process"));
        assert_eq!(entry["args"], json!([sub]));
        assert!(entry["timeoutMs"].as_u64().expect("timeoutMs") >= 1000);
        assert!(entry.get("timeout").is_none());
        let cmd = Path::new(entry["command"].as_str().expect("command"));
        assert!(cmd.is_absolute() && cmd.is_file(), "{}", cmd.display());
        assert!(!cmd.to_string_lossy().contains("${"));
    }
    let mcp = &cfg["mcp"]["servers"]["openviking"];
    let keys: Vec<&String> = mcp.as_object().expect("mcp").keys().collect();
    for k in &keys {
        assert!(
            ["command", "args", "cwd", "env", "enabled", "timeoutMs"].contains(&k.as_str()),
            "unknown MCP key {k}"
        );
    }
    assert_eq!(mcp["args"], json!(["mcp"]));
    assert_eq!(
        mcp["env"]["OPENVIKING_INTEGRATION_ID"],
        json!("openviking-memory")
    );
    assert!(Path::new(mcp["command"].as_str().expect("cmd")).is_file());
    assert_eq!(mode(&h.zcode_config()), 0o600);
    assert!(!backup_path(&h).exists());
    assert!(
        !h.ovcli().exists(),
        "no credential flags: ovcli.conf untouched"
    );
}

#[test]
fn reinstall_is_byte_identical_without_backup_churn() {
    let h = Env::bare();
    write_config(&h, &json!({"model": "bigmodel/glm-4.7"}));
    install(&h, &[]).success();
    let first = fs::read(h.zcode_config()).expect("read");
    let backup = fs::read(backup_path(&h)).expect("backup of the previous file");
    assert_eq!(mode(&backup_path(&h)), 0o600);
    install(&h, &[])
        .success()
        .stdout(predicates::str::contains("already installed"));
    install(&h, &[]).success();
    assert_eq!(fs::read(h.zcode_config()).expect("read"), first);
    assert_eq!(fs::read(backup_path(&h)).expect("read"), backup);
}

fn foreign_config() -> Value {
    json!({
        "model": "bigmodel/glm-4.7",
        "provider": {"bigmodel": {"kind": "openai", "options": {"apiKey": "sk-user"}}},
        "hooks": {
            "enabled": true,
            "timeoutMs": 60000,
            "maxOutputBytes": 32768,
            "events": {
                "UserPromptSubmit": [
                    {"matcher": "", "hooks": [
                        {"type": "process", "command": "python3", "args": ["/abs/x.py"], "timeoutMs": 12000, "statusMessage": "mine"}
                    ]}
                ],
                "PostToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hi", "timeout": 5}]}
                ]
            }
        },
        "mcp": {"servers": {"github": {"command": "gh-mcp", "args": [], "enabled": true}}},
        "plugins": {"enabledPlugins": {"x@y": true}}
    })
}

#[test]
fn foreign_entries_and_keys_are_kept_in_order_and_uninstall_restores_them() {
    let h = Env::bare();
    let original = foreign_config();
    write_config(&h, &original);
    install(&h, &[]).success();
    let cfg = read_config(&h);
    let top: Vec<&String> = cfg.as_object().expect("obj").keys().collect();
    assert_eq!(top, ["model", "provider", "hooks", "mcp", "plugins"]);
    assert_eq!(cfg["provider"], original["provider"]);
    assert_eq!(cfg["plugins"], original["plugins"]);
    assert_eq!(cfg["hooks"]["timeoutMs"], json!(60000));
    let ups = groups(&cfg, "UserPromptSubmit");
    assert_eq!(ups.len(), 2);
    assert_eq!(ups[0], original["hooks"]["events"]["UserPromptSubmit"][0]);
    assert_eq!(
        groups(&cfg, "PostToolUse"),
        groups(&original, "PostToolUse")
    );
    assert_eq!(
        cfg["mcp"]["servers"]["github"],
        original["mcp"]["servers"]["github"]
    );

    run(&h, &["uninstall"]).success();
    assert_eq!(read_config(&h), original);
    let text = String::from_utf8(fs::read(h.zcode_config()).expect("read")).expect("utf8");
    assert!(text.find("\"model\"") < text.find("\"provider\""));
}

#[test]
fn uninstall_removes_empty_containers_and_nothing_else() {
    let h = Env::bare();
    install(&h, &[]).success();
    run(&h, &["uninstall", "--harness", "zcode"]).success();
    assert!(
        !h.zcode_config().exists(),
        "install created it: uninstall removes it"
    );
    assert!(!h.home().join(".zcode/cli").exists());
    // A file the user had comes back as it was, byte for byte.
    write_config(&h, &json!({"model": "m"}));
    let before = fs::read(h.zcode_config()).expect("read");
    install(&h, &[]).success();
    run(&h, &["uninstall"]).success();
    assert_eq!(fs::read(h.zcode_config()).expect("read"), before);
    // Missing file: nothing to do, still success.
    let h2 = Env::bare();
    run(&h2, &["uninstall"]).success();
    assert!(!h2.zcode_config().exists());
}

#[test]
fn a_foreign_entry_sharing_a_group_with_ours_survives() {
    let h = Env::bare();
    install(&h, &[]).success();
    let mut cfg = read_config(&h);
    cfg["hooks"]["events"]["Stop"][0]["hooks"]
        .as_array_mut()
        .expect("hooks")
        .push(json!({"type": "process", "command": "/usr/bin/true", "args": []}));
    write_config(&h, &cfg);
    install(&h, &[]).success();
    let cfg = read_config(&h);
    assert_eq!(ours(&cfg, "Stop").len(), 1);
    let all: Vec<Value> = groups(&cfg, "Stop")
        .iter()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .collect();
    assert!(all.iter().any(|e| e["command"] == json!("/usr/bin/true")));
    run(&h, &["uninstall"]).success();
    let cfg = read_config(&h);
    assert_eq!(
        cfg["hooks"]["events"]["Stop"],
        json!([{"hooks": [{"type": "process", "command": "/usr/bin/true", "args": []}]}])
    );
}

#[test]
fn malformed_config_is_refused_and_left_untouched() {
    for bad in [
        "{ \"hooks\": { \"enabled\": true, }",
        "[1, 2]",
        "{\"hooks\": {\"events\": []}}",
        "{\"hooks\": {\"events\": {\"Stop\": {}}}}",
        "{\"mcp\": {\"servers\": [1]}}",
    ] {
        let h = Env::bare();
        let p = h.zcode_config();
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(&p, bad).expect("write");
        install(&h, &[])
            .code(1)
            .stderr(predicates::str::contains(p.display().to_string()))
            .stderr(predicates::str::contains("not a valid ZCode config"));
        assert_eq!(fs::read_to_string(&p).expect("read"), bad);
        assert!(!backup_path(&h).exists());
        run(&h, &["uninstall"]).code(1);
        assert_eq!(fs::read_to_string(&p).expect("read"), bad);
    }
}

#[test]
fn unknown_event_keys_are_reported_by_name() {
    let h = Env::bare();
    write_config(
        &h,
        &json!({"hooks": {"events": {
            "SessionEnd": [{"hooks": [{"type": "command", "command": "x", "timeout": 1}]}],
            "PreCompact": []
        }}}),
    );
    install(&h, &[])
        .success()
        .stderr(predicates::str::contains("\"hooks.events.SessionEnd\""))
        .stderr(predicates::str::contains("\"hooks.events.PreCompact\""))
        .stderr(predicates::str::contains("disables EVERY hook"));
    // Foreign keys are reported, not deleted.
    assert!(read_config(&h)["hooks"]["events"]
        .get("SessionEnd")
        .is_some());
}

/// What the Node plugin's installer writes (its hook commands), with a user hook next to it.
fn node_plugin_config() -> Value {
    let env = "OPENVIKING_INTEGRATION_ID='openviking-memory' OPENVIKING_INTEGRATION_VERSION='0.1.1' OPENVIKING_HOOK_SOURCE='zcode'";
    let cmd = |script: &str| {
        format!("{env} '/usr/bin/node' '/home/u/.openviking/agent-integrations/zcode/scripts/{script}' # openviking-memory")
    };
    json!({"hooks": {"enabled": true, "events": {
        "SessionStart": [{"hooks": [{"type": "command", "command": cmd("session-start.mjs"), "timeout": 30}]}],
        "UserPromptSubmit": [
            {"matcher": "", "hooks": [{"type": "command", "command": "/usr/local/bin/mine", "timeout": 3}]},
            {"matcher": "", "hooks": [{"type": "command", "command": cmd("auto-recall.mjs"), "timeout": 20}]}
        ],
        "PreToolUse": [{"matcher": "Read|Glob|Grep", "hooks": [{"type": "command", "command": cmd("uri-guard.mjs"), "timeout": 5}]}],
        "Stop": [
            {"matcher": "", "hooks": [{"type": "command", "command": cmd("auto-capture.mjs"), "timeout": 30}]},
            {"hooks": [{"type": "command", "command": "node /home/u/openviking/old/zcode-hook.mjs", "timeout": 30}]}
        ]
    }},
    "mcp": {"servers": {"openviking": {"command": "/usr/bin/node",
        "args": ["/home/u/.openviking/agent-integrations/zcode/servers/mcp-proxy.mjs"],
        "env": {"OPENVIKING_INTEGRATION_ID": "openviking-memory"}}}}})
}

#[test]
fn node_plugin_entries_are_replaced_by_exactly_one_group_of_ours() {
    let h = Env::bare();
    write_config(&h, &node_plugin_config());
    install(&h, &[]).success().stdout(predicates::str::contains(
        "replaced 5 hook entries of the OpenViking Node plugin",
    ));
    let cfg = read_config(&h);
    let text = cfg.to_string();
    assert!(!text.contains(".mjs"), "{text}");
    for ev in ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"] {
        assert_eq!(ours(&cfg, ev).len(), 1, "{ev}");
    }
    let ups = groups(&cfg, "UserPromptSubmit");
    assert_eq!(ups.len(), 2);
    assert_eq!(ups[0]["hooks"][0]["command"], json!("/usr/local/bin/mine"));
    assert_eq!(groups(&cfg, "Stop").len(), 1);
    assert_eq!(cfg["mcp"]["servers"]["openviking"]["args"], json!(["mcp"]));
}

#[test]
fn a_users_own_openviking_mcp_server_is_left_alone() {
    let h = Env::bare();
    let theirs = json!({"command": "/opt/ov-mcp", "args": [], "enabled": true});
    write_config(&h, &json!({"mcp": {"servers": {"openviking": theirs}}}));
    install(&h, &[])
        .success()
        .stdout(predicates::str::contains("left as is"));
    assert_eq!(read_config(&h)["mcp"]["servers"]["openviking"], theirs);
    run(&h, &["uninstall"]).success();
    assert_eq!(read_config(&h)["mcp"]["servers"]["openviking"], theirs);
}

#[test]
fn written_hooks_use_only_valid_event_names() {
    let h = Env::bare();
    write_config(&h, &foreign_config());
    install(&h, &[]).success();
    for key in read_config(&h)["hooks"]["events"]
        .as_object()
        .expect("events")
        .keys()
    {
        assert!(VALID.contains(&key.as_str()), "{key}");
    }
}

#[test]
fn ovcli_conf_is_written_0600_and_merged() {
    let h = Env::bare();
    let dir = h.home().join(".openviking");
    fs::create_dir_all(&dir).expect("mkdir");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
    fs::write(
        h.ovcli(),
        r#"{"url":"http://old:1","account_id":"old","plugin":{"x":1}}"#,
    )
    .expect("w");
    install(
        &h,
        &[
            "--url",
            "http://127.0.0.1:1933/",
            "--api-key",
            "",
            "--account",
            "acme",
        ],
    )
    .success()
    .stdout(predicates::str::contains("credentials:"));
    let conf: Value = serde_json::from_str(&fs::read_to_string(h.ovcli()).expect("r")).expect("j");
    assert_eq!(
        conf,
        json!({"url": "http://127.0.0.1:1933", "plugin": {"x": 1}, "api_key": "", "account": "acme"})
    );
    assert_eq!(mode(&h.ovcli()), 0o600);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("ovcli.conf.bak")), 0o600);

    // Unspecified keeps; an empty --account deletes; --api-key sets.
    install(&h, &["--user=zed", "--account", "", "--api-key", "k2"]).success();
    let conf: Value = serde_json::from_str(&fs::read_to_string(h.ovcli()).expect("r")).expect("j");
    assert_eq!(
        conf,
        json!({"url": "http://127.0.0.1:1933", "plugin": {"x": 1}, "api_key": "k2", "user": "zed"})
    );
    assert!(!String::from_utf8_lossy(&fs::read(h.zcode_config()).expect("cfg")).contains("k2"));
}

#[test]
fn malformed_ovcli_conf_is_refused() {
    let h = Env::bare();
    fs::create_dir_all(h.home().join(".openviking")).expect("mkdir");
    fs::write(h.ovcli(), "{oops").expect("w");
    install(&h, &["--url", "http://x:1"])
        .code(1)
        .stderr(predicates::str::contains("ovcli.conf is malformed JSON"));
    assert_eq!(fs::read_to_string(h.ovcli()).expect("r"), "{oops");
}

#[test]
fn usage_errors_exit_2() {
    let h = Env::bare();
    install(&h, &["--bogus"]).code(2);
    run(&h, &["install", "--harness", "claude"]).code(2);
    install(&h, &["--url"]).code(2);
    run(&h, &["uninstall", "--url", "x"]).code(2);
    install(&h, &["--url", "127.0.0.1:1933"]).code(2);
    assert!(!h.zcode_config().exists());
}

#[test]
fn home_flag_overrides_home() {
    let h = Env::bare();
    let other = tempfile::tempdir().expect("tempdir");
    install(&h, &["--home", &other.path().to_string_lossy()]).success();
    assert!(other.path().join(".zcode/cli/config.json").is_file());
    assert!(!h.zcode_config().exists());
}
