//! The npm packages `scripts/dist.sh` builds, installed the way users install them: offline,
//! from the packed tarballs, into a temporary prefix, run with a PATH that holds node and npm but
//! no cargo. One target gives one package (`ovhook`, binaries in `native/`); `DIST_NPM_SPLIT=1`
//! gives the esbuild layout (`ovhook` + `@ovhook/<platform>-<arch>`). `npm exec` of the tarball
//! runs `ovhook install`, and the hooks it writes name the stable home, which outlives npm's
//! cache. The launcher passes exit codes and signals through. Skipped, with a message, when npm
//! is absent.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The folder holding the built `ovhook` and `ovreplay`.
fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_ovhook"))
        .parent()
        .expect("target folder")
        .to_path_buf()
}

/// The folder holding `node` and `npm`; None (with a message) when npm is absent.
fn node_dir() -> Option<PathBuf> {
    let found = Command::new("sh")
        .args(["-c", "command -v npm && command -v node"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let Some(found) = found else {
        crate::common::cli_missing("npm", "the npm packages need node and npm");
        return None;
    };
    let node = found.lines().nth(1).map(PathBuf::from)?;
    Some(std::fs::canonicalize(node).ok()?.parent()?.to_path_buf())
}

/// A PATH with node and npm, the system tools, and no cargo or rustc.
fn path_without_cargo(node: &Path, extra: &[&Path]) -> String {
    let mut dirs: Vec<String> = extra.iter().map(|p| p.display().to_string()).collect();
    dirs.push(node.display().to_string());
    dirs.extend(["/usr/bin".to_owned(), "/bin".to_owned()]);
    let path = dirs.join(":");
    for tool in ["cargo", "rustc"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .env("PATH", &path)
            .output()
            .expect("sh");
        assert!(!found.status.success(), "{tool} is on the test PATH {path}");
    }
    path
}

/// A command with only the variables named: PATH, HOME, an npm cache of its own, offline.
fn clean(bin: &str, path: &str, home: &Path, cache: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("npm_config_cache", cache)
        .env("npm_config_offline", "true")
        .env("npm_config_update_notifier", "false")
        .env("npm_config_audit", "false")
        .env("npm_config_fund", "false")
        .env("OPENVIKING_URL", "off");
    cmd
}

fn ok(what: &str, out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed: {text}");
    text
}

/// The native binary the launcher `pid` started (its child process running `ovhook`).
fn native_child(pid: u32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let children =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        let found = children
            .split_whitespace()
            .filter_map(|c| c.parse::<u32>().ok())
            .find(|c| {
                std::fs::read_link(format!("/proc/{c}/exe"))
                    .is_ok_and(|e| e.file_name().is_some_and(|n| n == "ovhook"))
            });
        if let Some(c) = found {
            return c;
        }
        assert!(Instant::now() < deadline, "the launcher started no ovhook");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `scripts/dist.sh --bin-dir <built> --out <out>` (with `DIST_NPM_SPLIT` when `split`): the
/// npm tarballs it wrote.
fn dist(out: &Path, split: bool) -> Vec<PathBuf> {
    let run = Command::new("bash")
        .arg(repo().join("scripts/dist.sh"))
        .arg("--bin-dir")
        .arg(bin_dir())
        .arg("--out")
        .arg(out)
        .env("DIST_GZIP_LEVEL", "1")
        .env("DIST_KEEP_STAGE", "0")
        .env("DIST_NPM_SPLIT", if split { "1" } else { "0" })
        .output()
        .expect("dist.sh");
    ok("scripts/dist.sh", &run);
    let mut tgz: Vec<PathBuf> = std::fs::read_dir(out.join("npm"))
        .expect("npm folder")
        .map(|e| e.expect("entry").path())
        .collect();
    tgz.sort();
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).expect("SHA256SUMS");
    for t in &tgz {
        let name = t.file_name().expect("name").to_string_lossy();
        assert!(sums.contains(&format!("npm/{name}")), "{sums}");
    }
    tgz
}

/// The package.json inside a tarball.
fn package_json(tgz: &Path) -> Value {
    let out = Command::new("tar")
        .args(["-xzOf"])
        .arg(tgz)
        .arg("package/package.json")
        .output()
        .expect("tar");
    serde_json::from_slice(&ok("tar", &out).into_bytes()).expect("package.json")
}

#[test]
fn npm_install_g_and_npm_exec_give_working_commands_without_cargo() {
    let Some(node) = node_dir() else { return };
    // scripts/test.sh builds every binary first; a missing one is a broken setup, not a skip.
    assert!(
        bin_dir().join("ovreplay").is_file(),
        "build ovreplay first (cargo build -p ovreplay): the package holds both binaries"
    );
    let t = tempfile::tempdir().expect("tmp");
    let home = t.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let version = env!("CARGO_PKG_VERSION");

    // One target: one package holding the binaries.
    let single = dist(&t.path().join("dist"), false);
    assert_eq!(single.len(), 1, "{single:?}");
    let pkg = package_json(&single[0]);
    assert_eq!(pkg["name"], "ovhook");
    assert_eq!(pkg["version"], version);
    assert_eq!(pkg["bin"]["ovhook"], "bin/ovhook.js");
    assert_eq!(pkg["bin"]["ovreplay"], "bin/ovreplay.js");
    assert!(pkg.get("optionalDependencies").is_none(), "{pkg}");

    let prefix = t.path().join("global");
    let path = path_without_cargo(&node, &[&prefix.join("bin")]);
    let cache = t.path().join("npm-cache");
    let npm = |args: &[&str], cwd: &Path| {
        clean("npm", &path, &home, &cache)
            .args(args)
            .current_dir(cwd)
            .output()
            .expect("npm")
    };
    let tgz = single[0].display().to_string();
    let prefix_s = prefix.display().to_string();
    ok(
        "npm install -g",
        &npm(&["install", "-g", "--prefix", &prefix_s, &tgz], t.path()),
    );
    let run = |bin: &str, args: &[&str]| {
        clean(bin, &path, &home, &cache)
            .args(args)
            .current_dir(t.path())
            .output()
            .expect(bin)
    };
    let said = ok("ovhook --version", &run("ovhook", &["--version"]));
    assert!(
        said.starts_with(&format!("ovhook {version} (commit ")),
        "{said}"
    );
    let said = ok("ovreplay --help", &run("ovreplay", &["--help"]));
    assert!(said.contains("simulate"), "{said}");
    // The launcher passes the exit code through (2: usage).
    let bad = run("ovhook", &["install", "--no-such-flag"]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");

    // A signal sent to the launcher reaches the binary: `ovhook mcp` stopped with SIGTERM ends
    // as the binary ends, and leaves no process behind (without forwarding, the launcher died
    // and the binary ran on).
    let mut mcp = clean("ovhook", &path, &home, &cache)
        .arg("mcp")
        .current_dir(t.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ovhook mcp");
    let launcher = mcp.id();
    // Held open until the process ended: `wait` would close it first, and the proxy's stdin
    // EOF (exit 0) could then beat the forwarded signal.
    let stdin = mcp.stdin.take();
    let native = native_child(launcher);
    // SAFETY: kill(2) on a child we spawned and have not waited for.
    let sent = unsafe { libc::kill(i32::try_from(launcher).expect("pid"), libc::SIGTERM) };
    assert_eq!(sent, 0);
    let status = mcp.wait().expect("wait");
    drop(stdin);
    // 143 once `ovhook mcp` took over its signals; killed by SIGTERM, re-raised by the launcher,
    // when the signal came before (the binary's own end, either way).
    use std::os::unix::process::ExitStatusExt;
    assert!(
        status.code() == Some(143) || status.signal() == Some(libc::SIGTERM),
        "{status:?}"
    );
    assert!(
        !Path::new(&format!("/proc/{native}")).exists(),
        "the native ovhook {native} ended with its launcher"
    );

    // npx-style one-shot use: the hooks name the stable home, not npm's cache.
    let work = t.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    let exec_cache = t.path().join("exec-cache");
    let out = clean("npm", &path, &home, &exec_cache)
        .args(["exec", "--yes", &format!("--package={tgz}"), "--"])
        .args(["ovhook", "install", "--harness", "claude-code"])
        .current_dir(&work)
        .output()
        .expect("npm exec");
    let said = ok("npm exec ... ovhook install", &out);
    let stable = home.join(".openviking/ovhook/bin/ovhook");
    assert!(
        said.contains(&format!("copied from {}", exec_cache.display())),
        "{said}"
    );
    let settings = std::fs::read_to_string(home.join(".claude/settings.json")).expect("settings");
    assert!(
        settings.contains(&stable.display().to_string()),
        "{settings}"
    );
    assert!(
        !settings.contains(&exec_cache.display().to_string()),
        "{settings}"
    );
    std::fs::remove_dir_all(&exec_cache).expect("rm npm cache");
    let said = ok(
        "the stable home's ovhook",
        &run(&stable.display().to_string(), &["doctor"]),
    );
    assert!(
        said.lines().any(|l| l.starts_with("ok claude-code Stop:")),
        "{said}"
    );
    assert!(home.join(".openviking/ovhook/bin/ovreplay").is_file());

    // The esbuild layout: the launcher package plus the platform package, both installed from
    // their tarballs.
    let split = dist(&t.path().join("split"), true);
    assert_eq!(split.len(), 2, "{split:?}");
    let (main, platform): (Vec<&PathBuf>, Vec<&PathBuf>) = split
        .iter()
        .partition(|p| package_json(p)["name"] == "ovhook");
    let (main, platform) = (main[0], platform[0]);
    let plat = package_json(platform);
    let plat_name = plat["name"].as_str().expect("name").to_owned();
    assert!(plat_name.starts_with("@ovhook/"), "{plat}");
    assert_eq!(
        package_json(main)["optionalDependencies"][&plat_name],
        version
    );
    let prefix2 = t.path().join("global2");
    let path2 = path_without_cargo(&node, &[&prefix2.join("bin")]);
    let out = clean("npm", &path2, &home, &cache)
        .args(["install", "-g", "--prefix", &prefix2.display().to_string()])
        .arg(main)
        .arg(platform)
        .current_dir(t.path())
        .output()
        .expect("npm install -g");
    ok("npm install -g (split)", &out);
    let installed = prefix2.join("lib/node_modules");
    assert!(installed.join(&plat_name).join("bin/ovhook").is_file());
    assert!(!installed.join("ovhook/native").exists());
    for (bin, arg, want) in [
        ("ovhook", "--version", "ovhook "),
        ("ovreplay", "--help", "simulate"),
    ] {
        let out = clean(bin, &path2, &home, &cache)
            .arg(arg)
            .output()
            .expect(bin);
        let said = ok(bin, &out);
        assert!(said.contains(want), "{bin}: {said}");
    }
}
