//! `ovhook doctor` run inside a repository: which configuration runs our hooks there, the ZCode
//! version, project configs, stale binary paths, a plugin next to config-file hooks. The real
//! binary against a temporary HOME.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{json, Value};
use tempfile::TempDir;

struct Env {
    dir: TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("home")).expect("home");
        Env { dir }
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn repo(&self, rel: &str) -> PathBuf {
        let root = self.dir.path().join(rel);
        fs::create_dir_all(root.join(".git")).expect("git");
        fs::create_dir_all(root.join("src")).expect("src");
        fs::canonicalize(root).expect("canon")
    }
    fn run(&self, bin: &Path, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
        let mut tries = 0;
        let out = loop {
            let res = Command::new(bin)
                .env_clear()
                .env("HOME", self.home())
                .env("PATH", "/usr/bin:/bin")
                // No server unless a test names one.
                .env("OPENVIKING_URL", "off")
                .envs(env.iter().copied())
                .current_dir(cwd)
                .args(args)
                .output();
            match res {
                // A binary copied by this process may still be open for writing in a child
                // forked by another test thread (ETXTBSY) for a moment.
                Err(e) if e.raw_os_error() == Some(libc_etxtbsy()) && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => break other.expect("run"),
            }
        };
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    }
    fn ovhook(&self, cwd: &Path, args: &[&str]) -> (i32, String) {
        self.run(&ovhook(), cwd, args, &[])
    }
    fn doctor(&self, cwd: &Path, env: &[(&str, &str)]) -> (i32, String) {
        self.run(&ovhook(), cwd, &["doctor"], env)
    }
}

fn libc_etxtbsy() -> i32 {
    26
}

/// A copy of the ovhook binary at `dest` (a hard link when the filesystem allows).
fn copy_binary(dest: &Path) {
    fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
    if fs::hard_link(ovhook(), dest).is_err() {
        fs::copy(ovhook(), dest).expect("copy");
    }
}

fn ovhook() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ovhook"))
}

fn line<'a>(out: &'a str, what: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_once(' ').is_some_and(|(_, r)| r.starts_with(what)))
        .unwrap_or_else(|| panic!("no '{what}' line in:\n{out}"))
}

#[test]
fn user_level_only_inside_a_repository_depends_on_the_zcode_version() {
    let env = Env::new();
    let repo = env.repo("r");
    let (code, _) = env.ovhook(&env.home(), &["install"]);
    assert_eq!(code, 0);
    let (code, out) = env.doctor(&repo.join("src"), &[]);
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
    let (code, out) = env.doctor(&repo, &[("ZCODE_APP_VERSION", "3.10.2")]);
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
    let (code, out) = env.doctor(&repo, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(line(&out, "zcode version:").contains("0.16.5"), "{out}");
    assert!(line(&out, "zcode hooks here:").starts_with("ok "), "{out}");
}

#[test]
fn project_level_is_reported_and_every_project_config_is_listed() {
    let env = Env::new();
    let a = env.repo("a");
    let b = env.repo("b");
    for r in [&a, &b] {
        let (code, out) = env.ovhook(r, &["install", "--scope", "project"]);
        assert_eq!(code, 0, "{out}");
    }
    let (code, out) = env.doctor(&a.join("src"), &[("ZCODE_APP_VERSION", "3.10.2")]);
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
    let (code, out) = env.doctor(&env.home(), &[]);
    assert_eq!(code, 1, "{out}");
    assert!(line(&out, "zcode hooks here:").contains("not inside a git repository"));
}

#[test]
fn stale_binary_paths_are_flagged_in_user_and_project_configs() {
    let env = Env::new();
    let repo = env.repo("r");
    let old = env.dir.path().join("old/ovhook");
    copy_binary(&old);
    let (code, out) = env.run(&old, &repo, &["install"], &[]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = env.run(&old, &repo, &["install", "--scope", "project"], &[]);
    assert_eq!(code, 0, "{out}");
    // Install names the stable home, which survives the binary it ran from: doctor is clean.
    fs::remove_file(&old).expect("rm");
    let (code, out) = env.doctor(&repo, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("stale path"), "{out}");
    // Entries an older release wrote name the binary it ran from; that one is gone.
    let stable = env.home().join(".openviking/ovhook/bin/ovhook");
    for cfg in [
        env.home().join(".zcode/cli/config.json"),
        repo.join(".zcode/config.json"),
    ] {
        let text = fs::read_to_string(&cfg).expect("read");
        let text = text.replace(&stable.display().to_string(), &old.display().to_string());
        fs::write(&cfg, text).expect("write");
    }

    let (code, out) = env.doctor(&repo, &[]);
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
    let (code, out) = env.ovhook(&env.home(), &["install"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("moved to this binary"), "{out}");
    let (code, out) = env.doctor(&repo, &[]);
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
    copy_binary(&root.join("bin/ovhook"));
    root
}

#[test]
fn plugin_next_to_config_file_hooks_warns_that_every_event_runs_twice() {
    let env = Env::new();
    let repo = env.repo("r");
    let root = install_plugin(&env);
    // The plugin alone: healthy, no user config needed.
    let (code, out) = env.doctor(&repo, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(line(&out, "zcode plugin:").contains(&root.display().to_string()));
    assert!(!out.contains("run twice"), "{out}");

    let (code, out) = env.ovhook(&repo, &["install"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("run twice"), "install warns too: {out}");
    let (code, out) = env.doctor(&repo, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("warn zcode plugin:")
                && l.contains("every event would run twice")),
        "{out}"
    );
    // A disabled plugin does not count.
    let cfg_path = env.home().join(".zcode/cli/config.json");
    let mut cfg: Value = serde_json::from_slice(&fs::read(&cfg_path).expect("r")).expect("j");
    cfg["plugins"] = json!({"enabledPlugins": {"openviking@openviking-local": false}});
    fs::write(&cfg_path, cfg.to_string()).expect("w");
    let (_, out) = env.doctor(&repo, &[]);
    assert!(!out.contains("run twice"), "{out}");
    // A plugin whose binary is gone fails.
    cfg["plugins"] = json!({});
    fs::write(&cfg_path, cfg.to_string()).expect("w");
    fs::remove_file(root.join("bin/ovhook")).expect("rm");
    let (code, out) = env.doctor(&repo, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("FAIL zcode plugin:") && l.contains("does not exist")),
        "{out}"
    );
}

#[test]
fn reinstall_points_a_plugin_linking_to_an_old_binary_at_this_one() {
    let env = Env::new();
    let root = install_plugin(&env);
    let bin = root.join("bin/ovhook");
    fs::remove_file(&bin).expect("rm");
    std::os::unix::fs::symlink("/nonexistent/old/ovhook", &bin).expect("symlink");
    let (code, out) = env.doctor(&env.home(), &[]);
    assert_eq!(code, 1, "{out}");
    let (code, out) = env.ovhook(&env.home(), &["install", "--no-mcp"]);
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
    let env = Env::new();
    let (code, out) = env.ovhook(&env.home(), &["--version"]);
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
    let env = Env::new();
    let repo = env.repo("r");
    let (code, out) = env.ovhook(&repo, &["install", "--scope", "project"]);
    assert_eq!(code, 0, "{out}");
    // ZCode also loads `zcode.json` in any folder from the session's folder up to the git root.
    let sub = repo.join("src");
    fs::rename(repo.join(".zcode/config.json"), sub.join("zcode.json")).expect("mv");
    let (code, out) = env.doctor(&sub, &[("ZCODE_APP_VERSION", "3.10.2")]);
    assert_eq!(code, 0, "{out}");
    let here = line(&out, "zcode hooks here:");
    assert!(
        here.contains("project-level")
            && here.contains(&sub.join("zcode.json").display().to_string()),
        "{here}"
    );
    // From the repository root the file in src/ is not on the path: nothing runs there.
    let (code, out) = env.doctor(&repo, &[("ZCODE_APP_VERSION", "3.10.2")]);
    assert_eq!(code, 1, "{out}");
}
