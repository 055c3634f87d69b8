//! The `ovhook` binary a playback runs: where it is, the timeout `ovhook install` gives each
//! hook event, and the final `ovhook drain`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use crate::exit::user;

/// Each hook event's installed timeout: `ovhook install` in the temporary HOME (with its own
/// state folder `install_state`), then the
/// `timeoutMs` of our entries in ZCode's config. Empty when the install fails (each hook is
/// then bounded by the harness's own timeout only).
pub fn installed_budgets(
    ovhook: &Path,
    vars: &BTreeMap<OsString, OsString>,
    cwd: &Path,
    home: &Path,
    install_state: &Path,
) -> BTreeMap<String, Duration> {
    // Its own state folder: the install's records stay out of the session's state.
    let installed = std::process::Command::new(ovhook)
        .arg("install")
        .env_clear()
        .envs(vars)
        .env("OVHOOK_STATE_DIR", install_state)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let mut out = BTreeMap::new();
    if !installed {
        return out;
    }
    let Ok(text) = std::fs::read_to_string(home.join(".zcode/cli/config.json")) else {
        return out;
    };
    let Ok(cfg) = serde_json::from_str::<serde_json::Value>(&text) else {
        return out;
    };
    let events = cfg
        .pointer("/hooks/events")
        .and_then(serde_json::Value::as_object);
    // Install names its copy of the binary in the home's stable folder.
    let installed_ovhook = ov_engine::paths::bin_dir(home).join("ovhook");
    for (event, groups) in events.into_iter().flatten() {
        let hooks = groups
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| g.get("hooks").and_then(serde_json::Value::as_array))
            .flatten();
        for h in hooks {
            let ours = h
                .get("command")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|c| Path::new(c) == ovhook || Path::new(c) == installed_ovhook);
            if let (true, Some(ms)) = (ours, h.get("timeoutMs").and_then(serde_json::Value::as_u64))
            {
                out.insert(event.clone(), Duration::from_millis(ms));
            }
        }
    }
    out
}

/// `--ovhook PATH`, else next to this executable, else `target/{debug,release}/ovhook`.
pub fn locate_ovhook(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = explicit {
        // Hooks run in the session's working directory: a relative path must not stay relative.
        return if p.is_file() {
            Ok(p.canonicalize().unwrap_or_else(|_| p.to_path_buf()))
        } else {
            Err(user(format!(
                "ovhook not found at {} (--ovhook)",
                p.display()
            )))
        };
    }
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        candidates.push(dir.join("ovhook"));
    }
    let mut targets = vec![PathBuf::from("target")];
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        targets.insert(0, PathBuf::from(t));
    }
    for t in targets {
        candidates.push(t.join("debug/ovhook"));
        candidates.push(t.join("release/ovhook"));
    }
    candidates.into_iter().find(|c| c.is_file()).ok_or_else(|| {
        user(
            "could not find the ovhook binary next to ovreplay or in target/{debug,release}: \
              build it (cargo build -p ovhook) or pass --ovhook PATH",
        )
    })
}

/// Runs `ovhook drain` in the foreground, bounded by `timeout`; it must exit 0.
pub fn run_drain(
    ovhook: &Path,
    cwd: &Path,
    logs: &Path,
    vars: &BTreeMap<OsString, OsString>,
    timeout: Duration,
) -> anyhow::Result<()> {
    let out = logs.join("drain.out");
    let err = logs.join("drain.err");
    let mut child = std::process::Command::new(ovhook)
        .arg("drain")
        .env_clear()
        .envs(vars)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(
            std::fs::File::create(&out)
                .with_context(|| format!("could not create {}", out.display()))?,
        )
        .stderr(
            std::fs::File::create(&err)
                .with_context(|| format!("could not create {}", err.display()))?,
        )
        .spawn()
        .with_context(|| format!("could not run {} drain", ovhook.display()))?;
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!("ovhook drain did not finish within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !status.success() {
        let mut msg = String::new();
        if let Ok(mut f) = std::fs::File::open(&err) {
            let _ = f.read_to_string(&mut msg);
        }
        anyhow::bail!("ovhook drain exited with {status}: {}", msg.trim());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The budgets come from the entries install wrote, which name its copy of the binary in
    /// the home's stable folder (not the binary simulate was given).
    #[test]
    fn budgets_are_the_timeouts_install_wrote() -> anyhow::Result<()> {
        let ovhook = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/ovhook");
        if !ovhook.is_file() {
            eprintln!("skipped: build ovhook first (cargo build -p ovhook)");
            return Ok(());
        }
        let t = tempfile::tempdir()?;
        let home = t.path().join("home");
        std::fs::create_dir_all(&home)?;
        let vars =
            super::super::env::base_env(&home, &t.path().join("state"), &t.path().join("tmp"));
        let budgets = installed_budgets(&ovhook, &vars, t.path(), &home, &t.path().join("s"));
        let events: Vec<&str> = budgets.keys().map(String::as_str).collect();
        assert_eq!(
            events,
            ["PreToolUse", "SessionStart", "Stop", "UserPromptSubmit"]
        );
        assert!(budgets.values().all(|b| *b >= Duration::from_secs(1)));
        Ok(())
    }
}
