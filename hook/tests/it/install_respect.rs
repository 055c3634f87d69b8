//! What install and uninstall owe the user's files, for every harness: an untouched file comes
//! back byte for byte, a user's later edit is kept, a symlink stays a symlink, a read-only file
//! or a FIFO is refused before anything is written, and ZCode's `hooks.enabled` is never
//! switched.

use std::fs;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use proptest::prelude::*;
use serde_json::{json, Value};
use tempfile::TempDir;

/// Each harness and the user files its install edits (relative to HOME).
const HARNESSES: [(&str, &[&str]); 6] = [
    ("zcode", &[".zcode/cli/config.json", ".agents/mcp.json"]),
    ("claude-code", &[".claude/settings.json", ".claude.json"]),
    ("qwen", &[".qwen/settings.json"]),
    ("codex", &[".codex/hooks.json"]),
    (
        "copilot",
        &[".copilot/settings.json", ".copilot/mcp-config.json"],
    ),
    ("gemini", &[".gemini/settings.json"]),
];

/// Longest any command may take before the test calls it hung (a FIFO opened for a blocking
/// read never returns).
const HANG: Duration = Duration::from_secs(60);

fn ovhook(home: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("ovhook")
        .expect("binary")
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .current_dir(home)
        .timeout(HANG)
        .args(args)
        .assert()
}

fn put(path: &Path, bytes: &[u8]) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, bytes).expect("write");
}

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// Every file under `dir` (symlinks not followed) with its bytes, or its link target.
fn tree(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            let ft = e.file_type().expect("file type");
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_symlink() {
                let to = fs::read_link(&p).expect("link");
                out.push((p, format!("-> {}", to.display())));
            } else {
                let bytes = fs::read(&p).expect("read");
                out.push((p, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    out.sort();
    out
}

// ---- generated JSON files: odd numbers, escapes, key order, whitespace ----

fn ws() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", " ", "\n", "\r\n  ", "\t", "  \n    "])
}

fn leaf() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "1.0e2",
        "-0",
        "0.10",
        "1E+2",
        "12345678901234567890",
        "3.14159265358979323846264",
        "-1.5e-7",
        "42",
        "true",
        "false",
        "null",
        r#""plain""#,
        r#""caf\u00e9""#,
        r#""a\/b""#,
        r#""line\nbreak""#,
        r#""\ud83d\ude00""#,
        r#""\"quoted\"""#,
        r#""ünïcödé""#,
    ])
    .prop_map(str::to_owned)
}

fn value() -> impl Strategy<Value = String> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec((ws(), inner.clone(), ws()), 0..4).prop_map(|items| {
                let items: Vec<String> = items
                    .into_iter()
                    .map(|(a, v, b)| format!("{a}{v}{b}"))
                    .collect();
                format!("[{}]", items.join(","))
            }),
            prop::collection::vec((ws(), inner, ws()), 0..4).prop_map(|items| {
                let items: Vec<String> = items
                    .into_iter()
                    .enumerate()
                    .map(|(i, (a, v, b))| format!("{a}\"k{i}\\u00e9\"{b}:{a}{v}"))
                    .collect();
                format!("{{{}}}", items.join(","))
            }),
        ]
    })
}

/// A section the harness's own format knows (foreign hooks or MCP servers), written oddly.
fn section(harness: &'static str, file: usize) -> impl Strategy<Value = Option<String>> {
    let choices: Vec<&'static str> = match (harness, file) {
        ("zcode", 0) => vec![
            r#""hooks": {"enabled": false}"#,
            r#""hooks":{"timeoutMs":1.0e3,"events":{"Stop":[{"hooks":[{"type":"command","command":"echo caf\u00e9","timeout":5}]}]}}"#,
            r#""mcp": {"servers": {"gh": {"command": "gh-mcp", "timeoutMs": 3E4}}}"#,
        ],
        ("copilot", 0) => vec![
            r#""hooks": {"agentStop": [{"type": "command", "bash": "echo \u00e9", "timeoutSec": 1.0e1}]}"#,
        ],
        ("gemini", 0) => vec![
            r#""hooks": {"enabled": true, "AfterAgent": [{"hooks": [{"type": "command", "command": "echo \u00e9", "timeout": 1.0e4}]}]}"#,
            r#""mcpServers": {"gh": {"command": "gh-mcp", "args": ["a\/b"]}}"#,
        ],
        (_, 0) => vec![
            r#""hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo \u00e9", "timeout": 1.0e1}]}]}"#,
        ],
        _ => vec![r#""mcpServers": {"gh": {"command": "gh-mcp", "args": ["a\/b"]}}"#],
    };
    prop::option::of(prop::sample::select(choices)).prop_map(|s| s.map(str::to_owned))
}

/// A whole settings file: an object whose first key may be the harness's own section; with
/// the text of each of the user's other members.
fn file_text(harness: &'static str, file: usize) -> impl Strategy<Value = (String, Vec<String>)> {
    (
        section(harness, file),
        prop::collection::vec((ws(), value(), ws()), 0..4),
        ws(),
        prop::bool::ANY,
    )
        .prop_map(|(section, items, end, newline)| {
            let mut parts: Vec<String> = section.into_iter().collect();
            let members: Vec<String> = items
                .into_iter()
                .enumerate()
                .map(|(i, (a, v, b))| format!("{a}\"user{i}\\u00e9\"{b}: {v}"))
                .collect();
            parts.extend(members.iter().cloned());
            let nl = if newline { "\n" } else { "" };
            (format!("{{{}{end}}}{nl}", parts.join(",")), members)
        })
}

fn case() -> impl Strategy<Value = (usize, Vec<(String, Vec<String>)>, bool)> {
    (0..HARNESSES.len()).prop_flat_map(|h| {
        let (name, files) = HARNESSES[h];
        let texts: Vec<_> = (0..files.len()).map(|i| file_text(name, i)).collect();
        (Just(h), texts, prop::bool::ANY)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// install (once or twice) then uninstall gives every untouched file back byte for byte,
    /// and leaves no kept original behind; while installed, every member of the user's that
    /// install does not touch keeps its bytes.
    #[test]
    fn install_then_uninstall_gives_back_the_same_bytes((h, files_and_members, twice) in case()) {
        let (name, files) = HARNESSES[h];
        let texts: Vec<String> = files_and_members.iter().map(|(t, _)| t.clone()).collect();
        let home = tempfile::tempdir().expect("tempdir");
        for (rel, text) in files.iter().zip(&texts) {
            put(&home.path().join(rel), text.as_bytes());
        }
        ovhook(home.path(), &["install", "--harness", name]).success();
        let main = home.path().join(files[0]);
        prop_assert_ne!(fs::read(&main).expect("read"), texts[0].as_bytes(), "install wrote");
        for (rel, (_, members)) in files.iter().zip(&files_and_members) {
            let now = fs::read_to_string(home.path().join(rel)).expect("read");
            for m in members {
                prop_assert!(now.contains(m.as_str()), "{} lost {:?}:\n{}", rel, m, now);
            }
        }
        if twice {
            ovhook(home.path(), &["install", "--harness", name, "--no-mcp"]).success();
            ovhook(home.path(), &["install", "--harness", name]).success();
        }
        ovhook(home.path(), &["uninstall", "--harness", name]).success();
        for (rel, text) in files.iter().zip(&texts) {
            let path = home.path().join(rel);
            let back = String::from_utf8(fs::read(&path).expect("read")).expect("utf8");
            prop_assert_eq!(&back, text, "{}", rel);
            let mut orig = path.file_name().expect("name").to_os_string();
            orig.push(".ovhook-orig");
            prop_assert!(!path.with_file_name(orig).exists(), "{} kept original left", rel);
        }
    }
}

#[test]
fn a_user_edit_after_install_is_kept_by_uninstall() {
    for (name, files) in HARNESSES {
        let home = tempfile::tempdir().expect("tempdir");
        let main = home.path().join(files[0]);
        put(&main, b"{\"theme\": 1.0e2, \"x\": \"caf\\u00e9\"}\n");
        ovhook(home.path(), &["install", "--harness", name]).success();
        let mut edited: Value =
            serde_json::from_slice(&fs::read(&main).expect("read")).expect("json");
        edited["mine"] = json!("added after install");
        fs::write(&main, serde_json::to_vec_pretty(&edited).expect("json")).expect("write");
        let out = ovhook(home.path(), &["uninstall", "--harness", name]).success();
        assert!(
            stdout(&out).contains("your changes are kept"),
            "{name}: {}",
            stdout(&out)
        );
        let after: Value = serde_json::from_slice(&fs::read(&main).expect("read")).expect("json");
        assert_eq!(
            after.get("mine"),
            Some(&json!("added after install")),
            "{name}: {after}"
        );
        assert_eq!(after["theme"], json!(100.0), "{name}: {after}");
        assert_eq!(after["x"], json!("café"), "{name}: {after}");
        assert!(
            !after.to_string().contains("openviking-memory"),
            "{name}: ours left: {after}"
        );
    }
}

#[test]
fn a_symlinked_settings_file_is_written_through_and_stays_a_link() {
    for (name, files) in HARNESSES {
        let home = tempfile::tempdir().expect("tempdir");
        let dotfiles = home.path().join("dotfiles");
        let mut originals = Vec::new();
        for (i, rel) in files.iter().enumerate() {
            let target = dotfiles.join(format!("{name}-{i}.json"));
            let text = format!("{{ \"n\": 1.0e2, \"s\": \"\\u00e9\", \"i\": {i} }}\n");
            put(&target, text.as_bytes());
            let link = home.path().join(rel);
            fs::create_dir_all(link.parent().expect("parent")).expect("mkdir");
            // A relative link, as dotfiles managers make them.
            let up = "../".repeat(rel.matches('/').count());
            std::os::unix::fs::symlink(format!("{up}dotfiles/{name}-{i}.json"), &link)
                .expect("symlink");
            originals.push((link, target, text));
        }
        ovhook(home.path(), &["install", "--harness", name]).success();
        let (link, target, _) = &originals[0];
        assert!(
            fs::symlink_metadata(link)
                .expect("meta")
                .file_type()
                .is_symlink(),
            "{name}: install replaced the link with a file"
        );
        assert!(
            fs::read_to_string(target)
                .expect("read")
                .contains("openviking-memory")
                || fs::read_to_string(target).expect("read").contains("ovhook"),
            "{name}: our entries are not in the link's target"
        );
        ovhook(home.path(), &["uninstall", "--harness", name]).success();
        for (link, target, text) in &originals {
            assert!(
                fs::symlink_metadata(link)
                    .expect("meta")
                    .file_type()
                    .is_symlink(),
                "{name}: uninstall replaced {} with a file",
                link.display()
            );
            assert_eq!(&fs::read_to_string(target).expect("read"), text, "{name}");
        }
    }
}

#[test]
fn a_read_only_settings_file_refuses_the_install_and_nothing_is_written() {
    for (name, files) in HARNESSES {
        let home = tempfile::tempdir().expect("tempdir");
        let main = home.path().join(files[0]);
        put(&main, b"{\"model\": \"m\"}\n");
        fs::set_permissions(&main, fs::Permissions::from_mode(0o444)).expect("chmod");
        let before = tree(home.path());
        let out = ovhook(
            home.path(),
            &["install", "--harness", name, "--url", "http://127.0.0.1:1"],
        )
        .code(1);
        let err = stderr(&out);
        assert!(
            err.contains("read-only") && err.contains(&main.display().to_string()),
            "{name}: {err}"
        );
        assert_eq!(tree(home.path()), before, "{name}: something was written");
        let mode = fs::metadata(&main).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o444, "{name}");
    }
    // Uninstall of a read-only file holding our entries refuses too, and changes nothing.
    let home = tempfile::tempdir().expect("tempdir");
    let settings = home.path().join(".qwen/settings.json");
    put(&settings, b"{\"model\": \"m\"}\n");
    ovhook(home.path(), &["install", "--harness", "qwen"]).success();
    fs::set_permissions(&settings, fs::Permissions::from_mode(0o400)).expect("chmod");
    let before = tree(home.path());
    let out = ovhook(home.path(), &["uninstall", "--harness", "qwen"]).code(1);
    assert!(stderr(&out).contains("read-only"), "{}", stderr(&out));
    assert_eq!(tree(home.path()), before);
}

#[test]
fn a_fifo_in_place_of_a_settings_file_is_refused_at_once() {
    for (name, files) in HARNESSES {
        for rel in files {
            let home = tempfile::tempdir().expect("tempdir");
            let path = home.path().join(rel);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            let status = std::process::Command::new("mkfifo")
                .arg(&path)
                .status()
                .expect("mkfifo");
            assert!(status.success());
            // A hang here is the bug: `timeout` turns it into a failure.
            let out = ovhook(home.path(), &["install", "--harness", name]).code(1);
            assert!(
                stderr(&out).contains("not a regular file"),
                "{name} {rel}: {}",
                stderr(&out)
            );
            let out = ovhook(home.path(), &["uninstall", "--harness", name]).code(1);
            assert!(
                stderr(&out).contains("not a regular file"),
                "{name} {rel}: {}",
                stderr(&out)
            );
            assert!(fs::symlink_metadata(&path)
                .expect("meta")
                .file_type()
                .is_fifo());
            // Nothing else reads it blocking either: doctor, and a project-scope install that
            // only looks at the user's files.
            Command::cargo_bin("ovhook")
                .expect("binary")
                .env_clear()
                .env("HOME", home.path())
                .env("PATH", "/usr/bin:/bin")
                .env("OPENVIKING_URL", "off")
                .current_dir(home.path())
                .timeout(HANG)
                .arg("doctor")
                .assert()
                .code(predicates::ord::lt(2));
            if matches!(name, "zcode" | "claude-code") {
                let repo = home.path().join("repo");
                fs::create_dir_all(repo.join(".git")).expect("git");
                let mut args = vec!["install", "--harness", name, "--scope", "project"];
                args.extend(["--project", repo.to_str().expect("utf8")]);
                ovhook(home.path(), &args).success();
            }
        }
    }
}

fn zcode_config(home: &TempDir) -> PathBuf {
    home.path().join(".zcode/cli/config.json")
}

#[test]
fn zcode_hooks_enabled_false_is_never_switched_on() {
    let home = tempfile::tempdir().expect("tempdir");
    let cfg = zcode_config(&home);
    let text = r#"{"hooks": {"enabled": false, "events": {"Stop": [{"hooks": [{"type": "command", "command": "my-own-hook", "timeout": 5}]}]}}}"#;
    put(&cfg, text.as_bytes());
    let out = ovhook(home.path(), &["install", "--harness", "zcode"]).success();
    let after: Value = serde_json::from_slice(&fs::read(&cfg).expect("read")).expect("json");
    assert_eq!(after["hooks"]["enabled"], json!(false), "{after}");
    assert!(after.to_string().contains("openviking-memory"), "{after}");
    let err = stderr(&out);
    assert!(
        err.contains("hooks.enabled is false") && err.contains(r#""hooks": {"enabled": true}"#),
        "{err}"
    );
    // doctor says the same.
    let doc = Command::cargo_bin("ovhook")
        .expect("binary")
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .env("OPENVIKING_URL", "off")
        .current_dir(home.path())
        .timeout(HANG)
        .arg("doctor")
        .assert();
    let doc_out = stdout(&doc);
    assert!(
        doc_out.contains("FAIL hooks.enabled:") && doc_out.contains("hooks.enabled is false"),
        "{doc_out}"
    );
    ovhook(home.path(), &["uninstall", "--harness", "zcode"]).success();
    assert_eq!(fs::read_to_string(&cfg).expect("read"), text);

    // Not set, but the user's own hooks are listed: setting it would switch those on.
    let home = tempfile::tempdir().expect("tempdir");
    let cfg = zcode_config(&home);
    put(
        &cfg,
        br#"{"hooks": {"events": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}}"#,
    );
    let out = ovhook(home.path(), &["install", "--harness", "zcode"]).success();
    let after: Value = serde_json::from_slice(&fs::read(&cfg).expect("read")).expect("json");
    assert_eq!(after["hooks"].get("enabled"), None, "{after}");
    assert!(
        stderr(&out).contains("hooks.enabled is not set"),
        "{}",
        stderr(&out)
    );

    // Not set and no other hook: switching it on runs nothing but ours.
    let home = tempfile::tempdir().expect("tempdir");
    let cfg = zcode_config(&home);
    put(&cfg, br#"{"model": "m"}"#);
    let out = ovhook(home.path(), &["install", "--harness", "zcode"]).success();
    let after: Value = serde_json::from_slice(&fs::read(&cfg).expect("read")).expect("json");
    assert_eq!(after["hooks"]["enabled"], json!(true), "{after}");
    assert!(!stderr(&out).contains("hooks.enabled"), "{}", stderr(&out));
}

/// Project scope gets the same guarantees: an untouched repository file comes back byte for
/// byte, a symlinked one is written through and a read-only one refuses the install.
#[test]
fn project_scope_files_get_the_same_guarantees() {
    let text = "{\r\n\t\"model\": \"caf\\u00e9\", \"n\": 1.0e2 }";
    for (name, rel) in [
        ("zcode", ".zcode/config.json"),
        ("claude-code", ".claude/settings.json"),
    ] {
        let home = tempfile::tempdir().expect("tempdir");
        let repo = home.path().join("repo");
        fs::create_dir_all(repo.join(".git")).expect("git");
        let file = repo.join(rel);
        put(&file, text.as_bytes());
        let project = ["--harness", name, "--scope", "project", "--project"];
        let args = |verb: &'static str| {
            let mut a = vec![verb];
            a.extend(project);
            a.push(repo.to_str().expect("utf8"));
            a
        };
        ovhook(home.path(), &args("install")).success();
        assert_ne!(fs::read_to_string(&file).expect("read"), text, "{name}");
        ovhook(home.path(), &args("uninstall")).success();
        assert_eq!(fs::read_to_string(&file).expect("read"), text, "{name}");

        // A link into a dotfiles folder.
        let target = home.path().join("dotfiles").join(format!("{name}.json"));
        put(&target, text.as_bytes());
        fs::remove_file(&file).expect("rm");
        std::os::unix::fs::symlink(&target, &file).expect("symlink");
        ovhook(home.path(), &args("install")).success();
        assert!(fs::symlink_metadata(&file)
            .expect("meta")
            .file_type()
            .is_symlink());
        assert_ne!(fs::read_to_string(&target).expect("read"), text, "{name}");
        ovhook(home.path(), &args("uninstall")).success();
        assert!(fs::symlink_metadata(&file)
            .expect("meta")
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).expect("read"), text, "{name}");

        // Read-only: refused, nothing written (not even the manifest).
        fs::set_permissions(&target, fs::Permissions::from_mode(0o444)).expect("chmod");
        let before = tree(home.path());
        let out = ovhook(home.path(), &args("install")).code(1);
        assert!(
            stderr(&out).contains("read-only"),
            "{name}: {}",
            stderr(&out)
        );
        assert_eq!(tree(home.path()), before, "{name}");
    }
}

/// Codex's trust records go into its `config.toml`: a read-only one refuses `install --trust`
/// before the hooks file is written.
#[test]
fn a_read_only_codex_config_refuses_a_trusting_install_before_any_write() {
    let home = tempfile::tempdir().expect("tempdir");
    let config = home.path().join(".codex/config.toml");
    put(&config, b"model = \"gpt-5\"\n");
    fs::set_permissions(&config, fs::Permissions::from_mode(0o444)).expect("chmod");
    let before = tree(home.path());
    let out = ovhook(home.path(), &["install", "--harness", "codex", "--trust"]).code(1);
    assert!(
        stderr(&out).contains("read-only") && stderr(&out).contains("config.toml"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tree(home.path()), before);
    // Without --trust the file is not written, so it does not matter.
    ovhook(
        home.path(),
        &["install", "--harness", "codex", "--no-trust"],
    )
    .success();
    assert!(home.path().join(".codex/hooks.json").exists());
}
