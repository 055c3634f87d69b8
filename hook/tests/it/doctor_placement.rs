//! `ovhook doctor` run inside a repository: which configuration runs our hooks there, the ZCode
//! version, project configs, stale binary paths, a plugin next to config-file hooks. The real
//! binary against a temporary HOME.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{ovhook, ovhook_copy, Env};

/// The machine as a user has it, no server.
fn machine() -> Env {
    let mut env = Env::bare();
    env.set("OPENVIKING_URL", "off");
    env
}

fn ovhook_in(env: &Env, cwd: &Path, args: &[&str]) -> (i32, String) {
    env.run_in(&ovhook(), cwd, args, &[])
}

fn doctor(env: &Env, cwd: &Path, extra: &[(&str, &str)]) -> (i32, String) {
    env.run_in(&ovhook(), cwd, &["doctor"], extra)
}

fn line<'a>(out: &'a str, what: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_once(' ').is_some_and(|(_, r)| r.starts_with(what)))
        .unwrap_or_else(|| panic!("no '{what}' line in:\n{out}"))
}

#[test]
fn user_level_only_inside_a_repository_depends_on_the_zcode_version() {
    let env = machine();
    let repo = env.repo("r");
    let (code, _) = ovhook_in(&env, env.home(), &["install"]);
    assert_eq!(code, 0);
    let (code, out) = doctor(&env, &repo.join("src"), &[]);
    assert_eq!(code, 0, "{out}");
    let here = line(&out, "zcode hooks here:");
    assert!(
        here.starts_with("warn ") && here.contains("user-level only"),
        "{here}"
    );
    assert!(
        line(&out, "zcode version:").contains("not found on this machine"),
        "{out}"
    );

    // Desktop 3.10+: only workspace hooks run.
    let (code, out) = doctor(&env, &repo, &[("ZCODE_APP_VERSION", "3.10.2")]);
    assert_eq!(code, 1, "{out}");
    let here = line(&out, "zcode hooks here:");
    assert!(
        here.starts_with("FAIL ") && here.contains("--scope project"),
        "{here}"
    );
    assert!(line(&out, "zcode version:").contains("3.10.2 (from ZCODE_APP_VERSION)"));

    // The CLI engine, read from the newest rollout file: user-level is read.
    let rollout = env.home().join(".zcode/cli/rollout");
    fs::create_dir_all(&rollout).expect("mkdir");
    fs::write(
        rollout.join("model-io-sess_1.jsonl"),
        r#"{"type":"model_io","request":{"headers":{"User-Agent":"ZCode/0.16.5"}}}"#,
    )
    .expect("w");
    let (code, out) = doctor(&env, &repo, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(line(&out, "zcode version:").contains("0.16.5"), "{out}");
    assert!(line(&out, "zcode hooks here:").starts_with("ok "), "{out}");
}

#[test]
fn project_level_is_reported_and_every_project_config_is_listed() {
    let env = machine();
    let a = env.repo("a");
    let b = env.repo("b");
    for r in [&a, &b] {
        let (code, out) = ovhook_in(&env, r, &["install", "--scope", "project"]);
        assert_eq!(code, 0, "{out}");
    }
    let (code, out) = doctor(&env, &a.join("src"), &[("ZCODE_APP_VERSION", "3.10.2")]);
    assert_eq!(code, 0, "{out}");
    let here = line(&out, "zcode hooks here:");
    assert!(
        here.starts_with("ok ") && here.contains("project-level") && here.contains("trust"),
        "{here}"
    );
    assert!(
        line(&out, "zcode config:").contains("our hooks come from the workspace"),
        "{out}"
    );
    let projects = line(&out, "zcode projects:");
    for r in [&a, &b] {
        assert!(
            projects.contains(&r.join(".zcode/config.json").display().to_string()),
            "{projects}"
        );
    }
    // Outside any repository, nothing of ours runs at user level.
    let (code, out) = doctor(&env, env.home(), &[]);
    assert_eq!(code, 1, "{out}");
    assert!(line(&out, "zcode hooks here:").contains("not inside a git repository"));
}

#[test]
fn stale_binary_paths_are_flagged_in_user_and_project_configs() {
    let env = machine();
    let repo = env.repo("r");
    let old = env.path("old/ovhook");
    ovhook_copy(&old);
    let (code, out) = env.run_in(&old, &repo, &["install"], &[]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = env.run_in(&old, &repo, &["install", "--scope", "project"], &[]);
    assert_eq!(code, 0, "{out}");
    // Install names the stable home, which survives the binary it ran from: doctor is clean.
    fs::remove_file(&old).expect("rm");
    let (code, out) = doctor(&env, &repo, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("stale path"), "{out}");
    // Entries an older release wrote name the binary it ran from; that one is gone.
    let stable = env.home().join(".openviking/ovhook/bin/ovhook");
    for cfg in [env.zcode_config(), repo.join(".zcode/config.json")] {
        let text = fs::read_to_string(&cfg).expect("read");
        let text = text.replace(&stable.display().to_string(), &old.display().to_string());
        fs::write(&cfg, text).expect("write");
    }

    let (code, out) = doctor(&env, &repo, &[]);
    assert_eq!(code, 1, "{out}");
    let project_cfg = repo.join(".zcode/config.json").display().to_string();
    assert!(
        out.lines().any(|l| l.starts_with("FAIL stale path:")
            && l.contains(&project_cfg)
            && l.contains("does not exist")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("FAIL hook Stop:") && l.contains("does not exist")),
        "{out}"
    );
    // Re-running install moves every place to this binary; doctor is clean again.
    let (code, out) = ovhook_in(&env, env.home(), &["install"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("moved to this binary"), "{out}");
    let (code, out) = doctor(&env, &repo, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("stale path"), "{out}");
}

fn install_plugin(env: &Env) -> PathBuf {
    let root = env
        .home()
        .join(".zcode/cli/plugins/cache/openviking-local/openviking/0.1.0");
    fs::create_dir_all(root.join(".zcode-plugin")).expect("mkdir");
    fs::create_dir_all(root.join("bin")).expect("bin");
    fs::write(
        root.join(".zcode-plugin/plugin.json"),
        json!({"name": "openviking", "version": "0.1.0"}).to_string(),
    )
    .expect("manifest");
    ovhook_copy(&root.join("bin/ovhook"));
    root
}

#[test]
fn plugin_next_to_config_file_hooks_warns_that_every_event_runs_twice() {
    let env = machine();
    let repo = env.repo("r");
    let root = install_plugin(&env);
    // The plugin alone: healthy, no user config needed.
    let (code, out) = doctor(&env, &repo, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(line(&out, "zcode plugin:").contains(&root.display().to_string()));
    assert!(!out.contains("run twice"), "{out}");

    let (code, out) = ovhook_in(&env, &repo, &["install"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("run twice"), "install warns too: {out}");
    let (code, out) = doctor(&env, &repo, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("warn zcode plugin:")
                && l.contains("every event would run twice")),
        "{out}"
    );
    // A disabled plugin does not count.
    let cfg_path = env.zcode_config();
    let mut cfg: Value = serde_json::from_slice(&fs::read(&cfg_path).expect("r")).expect("j");
    cfg["plugins"] = json!({"enabledPlugins": {"openviking@openviking-local": false}});
    fs::write(&cfg_path, cfg.to_string()).expect("w");
    let (_, out) = doctor(&env, &repo, &[]);
    assert!(!out.contains("run twice"), "{out}");
    // A plugin whose binary is gone fails.
    cfg["plugins"] = json!({});
    fs::write(&cfg_path, cfg.to_string()).expect("w");
    fs::remove_file(root.join("bin/ovhook")).expect("rm");
    let (code, out) = doctor(&env, &repo, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("FAIL zcode plugin:")
                && l.contains("is not an executable file")),
        "{out}"
    );
}

#[test]
fn reinstall_points_a_plugin_linking_to_an_old_binary_at_this_one() {
    let env = machine();
    let root = install_plugin(&env);
    let bin = root.join("bin/ovhook");
    fs::remove_file(&bin).expect("rm");
    std::os::unix::fs::symlink("/nonexistent/old/ovhook", &bin).expect("symlink");
    let (code, out) = doctor(&env, env.home(), &[]);
    assert_eq!(code, 1, "{out}");
    let (code, out) = ovhook_in(&env, env.home(), &["install", "--no-mcp"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("moved to this binary: plugin"), "{out}");
    // It links to the stable home, which holds this binary's bytes.
    let stable = env.home().join(".openviking/ovhook/bin/ovhook");
    assert_eq!(
        fs::canonicalize(&bin).expect("resolves"),
        fs::canonicalize(&stable).expect("canon")
    );
    assert_eq!(
        fs::read(&stable).expect("stable"),
        fs::read(ovhook()).expect("ovhook")
    );
}

#[test]
fn version_prints_the_version_and_the_commit() {
    let env = machine();
    let (code, out) = ovhook_in(&env, env.home(), &["--version"]);
    assert_eq!(code, 0);
    let rest = out
        .trim()
        .strip_prefix(&format!("ovhook {} (commit ", env!("CARGO_PKG_VERSION")))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{out}"));
    let hash = rest.strip_suffix("-dirty").unwrap_or(rest);
    assert!(
        hash == "unknown" || hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{out}"
    );
}

#[test]
fn a_zcode_json_between_the_folder_and_the_git_root_counts_as_project_level() {
    let env = machine();
    let repo = env.repo("r");
    let (code, out) = ovhook_in(&env, &repo, &["install", "--scope", "project"]);
    assert_eq!(code, 0, "{out}");
    // ZCode also loads `zcode.json` in any folder from the session's folder up to the git root.
    let sub = repo.join("src");
    fs::rename(repo.join(".zcode/config.json"), sub.join("zcode.json")).expect("mv");
    let (code, out) = doctor(&env, &sub, &[("ZCODE_APP_VERSION", "3.10.2")]);
    assert_eq!(code, 0, "{out}");
    let here = line(&out, "zcode hooks here:");
    assert!(
        here.contains("project-level")
            && here.contains(&sub.join("zcode.json").display().to_string()),
        "{here}"
    );
    // From the repository root the file in src/ is not on the path: nothing runs there.
    let (code, out) = doctor(&env, &repo, &[("ZCODE_APP_VERSION", "3.10.2")]);
    assert_eq!(code, 1, "{out}");
}
