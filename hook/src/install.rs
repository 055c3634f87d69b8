//! `ovhook install` / `ovhook uninstall` for ZCode.
//!
//! ```text
//! ovhook install --harness zcode [--url U] [--api-key K] [--account A] [--user U] [--home DIR]
//! ovhook uninstall [--harness zcode] [--home DIR]
//! ```
//!
//! Install merges our four hooks and the MCP server into `<home>/.zcode/cli/config.json` (see
//! [`crate::harness::zcode::config_file`] for the layout and the marker), keeps every foreign
//! entry and key in place, backs the previous file up as `config.json.bak` (0600) and replaces
//! it atomically. A re-run that changes nothing writes nothing. Credentials flags go to
//! `ovcli.conf` ([`ovcli`]); without them `ovcli.conf` is not touched.
//!
//! Exit codes: 0 done, 1 refused (malformed file, I/O), 2 usage.

mod atomic;
pub mod ovcli;

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::harness::zcode::config_file::{ConfigFile, OUR_HOOKS};

const USAGE: &str = "\
usage: ovhook install --harness zcode [--url U] [--api-key K] [--account A] [--user U] [--home DIR]
       ovhook uninstall [--harness zcode] [--home DIR]";

/// Parsed arguments.
#[derive(Debug, Default)]
struct Args {
    home: Option<PathBuf>,
    creds: ovcli::Credentials,
}

fn parse(args: &[String], allow_creds: bool) -> Result<Args, String> {
    let mut out = Args::default();
    let mut harness: Option<String> = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        if matches!(flag, "-h" | "--help") {
            return Err(String::new());
        }
        let known = matches!(flag, "--harness" | "--home")
            || allow_creds && matches!(flag, "--url" | "--api-key" | "--account" | "--user");
        if !known {
            return Err(format!("unknown argument '{arg}'"));
        }
        let value = match inline {
            Some(v) => v,
            None => it
                .next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))?,
        };
        match flag {
            "--harness" => harness = Some(value),
            "--home" => out.home = Some(PathBuf::from(value)),
            "--url" => out.creds.url = Some(value),
            "--api-key" => out.creds.api_key = Some(value),
            "--account" => out.creds.account = Some(value),
            "--user" => out.creds.user = Some(value),
            _ => unreachable!("checked above"),
        }
    }
    match harness.as_deref() {
        None | Some("zcode") => Ok(out),
        Some(other) => Err(format!("unsupported harness '{other}' (supported: zcode)")),
    }
}

fn usage_error(msg: &str) -> i32 {
    if !msg.is_empty() {
        eprintln!("ovhook: {msg}");
    }
    eprintln!("{USAGE}");
    2
}

/// The home directory: `--home`, else `$HOME`.
fn home_dir(arg: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match arg {
        Some(h) => Ok(h),
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .context("HOME is not set; pass --home DIR"),
    }
}

/// `<home>/.zcode/cli/config.json`.
pub fn zcode_config_path(home: &Path) -> PathBuf {
    home.join(".zcode").join("cli").join("config.json")
}

/// `~/.openviking/ovcli.conf`, honouring `OPENVIKING_CLI_CONFIG_FILE` and `OPENVIKING_HOME`
/// exactly as `engine::config` reads it.
pub fn ovcli_path(home: &Path) -> PathBuf {
    let mut ctx = ov_engine::config::LoadContext::from_process(Some(home));
    ctx.home = home.to_path_buf();
    ctx.ovcli_path()
}

/// This binary, canonicalised: what the hooks run.
fn current_exe() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("could not find the ovhook binary's path")?;
    std::fs::canonicalize(&exe).with_context(|| format!("could not resolve {}", exe.display()))
}

/// Writes `file` to `path` if it changed: backup of the previous content, atomic replace
/// (keeping the previous file's mode, 0600 for a new file). Returns whether it wrote.
fn save(path: &Path, file: &ConfigFile) -> anyhow::Result<bool> {
    if !file.changed() {
        return Ok(false);
    }
    let dir = path
        .parent()
        .with_context(|| format!("{} has no parent folder", path.display()))?;
    atomic::create_dir(dir, 0o700)?;
    let mode = atomic::mode_of(path).unwrap_or(0o600);
    if let Some(old) = &file.original {
        atomic::write(&ovcli::backup_path(path), old, 0o600)?;
    }
    atomic::write(path, &file.render(), mode)?;
    Ok(true)
}

/// Warnings about `hooks.events` keys ZCode rejects.
fn unknown_key_warnings(file: &ConfigFile, path: &Path) -> Vec<String> {
    file.unknown_event_keys()
        .into_iter()
        .map(|k| {
            format!(
                "warning: {} has the event key \"hooks.events.{k}\", which ZCode does not know: \
                 ZCode 0.16.5 then disables EVERY hook in the file (ours included). Remove or \
                 rename it; valid keys: SessionStart, UserPromptSubmit, PreToolUse, \
                 PermissionRequest, PostToolUse, PostToolUseFailure, Stop",
                path.display()
            )
        })
        .collect()
}

/// `ovhook install`.
pub fn run(args: &[String]) -> anyhow::Result<i32> {
    let args = match parse(args, true) {
        Ok(a) => a,
        Err(msg) => return Ok(usage_error(&msg)),
    };
    let home = home_dir(args.home)?;
    let exe = current_exe()?;
    let path = zcode_config_path(&home);

    let mut file = ConfigFile::read(&path)?;
    let node_entries = file.node_plugin_entries();
    let notes = file.merge_ours(&exe);
    let wrote = save(&path, &file)?;

    let verb = if wrote {
        "installed"
    } else {
        "already installed"
    };
    println!("ovhook: {verb} for ZCode in {}", path.display());
    if wrote && file.original.is_some() {
        println!("  backup: {}", ovcli::backup_path(&path).display());
    }
    let events: Vec<String> = OUR_HOOKS
        .iter()
        .map(|(ev, _, m, _, _)| match m {
            Some(m) => format!("{ev} ({m})"),
            None => (*ev).to_owned(),
        })
        .collect();
    println!("  hooks: {} -> {}", events.join(", "), exe.display());
    println!("  mcp: openviking -> {} mcp", exe.display());
    if node_entries > 0 {
        println!("  replaced {node_entries} hook entries of the OpenViking Node plugin");
    }
    for note in notes {
        println!("  note: {note}");
    }

    if args.creds.any() {
        let ov = ovcli_path(&home);
        let outcome = ovcli::write(&ov, &args.creds)?;
        let state = match outcome {
            ovcli::Outcome::Written => "written",
            ovcli::Outcome::Unchanged => "unchanged",
        };
        println!("  credentials: {} ({state}, mode 0600)", ov.display());
    }
    for w in unknown_key_warnings(&file, &path) {
        eprintln!("{w}");
    }
    Ok(0)
}

/// `ovhook uninstall`.
pub fn run_uninstall(args: &[String]) -> anyhow::Result<i32> {
    let args = match parse(args, false) {
        Ok(a) => a,
        Err(msg) => return Ok(usage_error(&msg)),
    };
    let home = home_dir(args.home)?;
    let path = zcode_config_path(&home);
    let mut file = ConfigFile::read(&path)?;
    if file.original.is_none() {
        println!(
            "ovhook: nothing to uninstall ({} does not exist)",
            path.display()
        );
        return Ok(0);
    }
    let removed = file.remove_ours();
    if save(&path, &file)? {
        println!(
            "ovhook: removed {removed} OpenViking entries from {} (backup: {})",
            path.display(),
            ovcli::backup_path(&path).display()
        );
    } else {
        println!("ovhook: nothing to uninstall in {}", path.display());
    }
    println!("  kept: ovcli.conf, the journals and every other entry");
    Ok(0)
}
