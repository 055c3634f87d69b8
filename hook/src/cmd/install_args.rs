//! The arguments of `ovhook install` and `ovhook uninstall`, parsed by hand, and what they
//! resolve to (home folder, scope, API key).

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context;
use ov_engine::config::Secret;

use crate::install::ovcli;
use crate::install::paths::project_root;
use crate::install::target::Scope;

pub const USAGE: &str = "\
usage: ovhook install [--harness NAME] [--scope user|project] [--project DIR] [--no-mcp]
                      [--url U] [--api-key K|-] [--account A] [--user U] [--home DIR]
                      [--trust|--no-trust]
       ovhook uninstall [--harness NAME] [--scope user|project] [--project DIR] [--home DIR]

  --harness NAME    the agent to install into (default: zcode)
  --scope user      the user's own configuration (default)
  --scope project   the repository holding --project DIR (default: the current folder): only
                    our hooks, merged into <git root>/.zcode/config.json; no credentials or URLs
  --no-mcp          install the hooks without the OpenViking MCP server
  --api-key -       read the API key from stdin (a key given in argv is visible in `ps`);
                    without --api-key, OPENVIKING_API_KEY from the environment is used if set
  --trust           for an agent that runs hooks only once you trust them (Codex): record
                    that you trust ovhook's hooks, as the agent's own review screen does;
                    without --trust or --no-trust, install asks when run on a terminal
  --url, --account, --user
                    written to ~/.openviking/ovcli.conf (0600); an empty value removes the key
  uninstall         removes our entries from every place any install wrote (every recorded
                    project too), unless --scope project names one repository";

/// Parsed arguments.
#[derive(Debug, Default)]
pub struct Args {
    pub home: Option<PathBuf>,
    pub harness: Option<String>,
    pub scope: Option<String>,
    pub project: Option<PathBuf>,
    pub no_mcp: bool,
    /// `--trust` (true) or `--no-trust` (false).
    pub trust: Option<bool>,
    pub creds: ovcli::Credentials,
}

pub fn parse(args: &[String], install: bool) -> Result<Args, String> {
    let mut out = Args::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        if matches!(flag, "-h" | "--help") {
            return Err(String::new());
        }
        if install && flag == "--no-mcp" && inline.is_none() {
            out.no_mcp = true;
            continue;
        }
        if install && matches!(flag, "--trust" | "--no-trust") && inline.is_none() {
            out.trust = Some(flag == "--trust");
            continue;
        }
        let known = matches!(flag, "--harness" | "--home" | "--scope" | "--project")
            || install && matches!(flag, "--url" | "--api-key" | "--account" | "--user");
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
            "--harness" => out.harness = Some(value),
            "--home" => out.home = Some(PathBuf::from(value)),
            "--scope" => out.scope = Some(value),
            "--project" => out.project = Some(PathBuf::from(value)),
            "--url" => out.creds.url = Some(value),
            "--api-key" => out.creds.api_key = Some(value.into()),
            "--account" => out.creds.account = Some(value),
            "--user" => out.creds.user = Some(value),
            _ => unreachable!("checked above"),
        }
    }
    if let Some(h) = &out.harness {
        if crate::harness::named(h).is_none() {
            return Err(format!(
                "unsupported harness '{h}' (supported: {})",
                crate::harness::names().join(", ")
            ));
        }
    }
    match out.scope.as_deref() {
        None | Some("user") | Some("project") => {}
        Some(other) => return Err(format!("--scope is user or project, not '{other}'")),
    }
    if out.project.is_some() && out.scope.as_deref() == Some("user") {
        return Err("--project goes with --scope project".into());
    }
    if out.project.is_some() {
        out.scope = Some("project".into());
    }
    Ok(out)
}

/// True when the `install` (or `uninstall`) parser accepts `args`.
#[cfg(test)]
pub fn accepts(args: &[String], install: bool) -> bool {
    parse(args, install).is_ok()
}

/// Prints `msg` and the usage (to stdout for `--help`, an empty `msg`); the exit code.
pub fn usage_error(msg: &str) -> i32 {
    if msg.is_empty() {
        println!("{USAGE}");
        return 0;
    }
    eprintln!("ovhook: {msg}");
    eprintln!("{USAGE}");
    2
}

/// The home directory: `--home`, else `$HOME`.
pub fn home_dir(arg: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match arg {
        Some(h) => Ok(h),
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .context("HOME is not set; pass --home DIR"),
    }
}

/// This binary, canonicalised: what the hooks run.
pub fn current_exe() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("could not find the ovhook binary's path")?;
    std::fs::canonicalize(&exe).with_context(|| format!("could not resolve {}", exe.display()))
}

/// The scope `args` name (`--scope project`: the repository holding `--project` or the
/// current folder).
pub fn scope_of(args: &Args) -> anyhow::Result<Scope> {
    if args.scope.as_deref() != Some("project") {
        return Ok(Scope::User);
    }
    let dir = match &args.project {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("could not read the current folder")?,
    };
    Ok(Scope::Project {
        root: project_root(&dir)?,
    })
}

/// The API key: `--api-key -` reads it from stdin (first line), `--api-key K` as given; without
/// the flag `OPENVIKING_API_KEY` when set and not empty.
pub fn resolve_api_key(
    flag: Option<Secret>,
) -> anyhow::Result<(Option<Secret>, Option<&'static str>)> {
    match flag.as_ref().map(Secret::expose) {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .take(64 * 1024)
                .read_to_string(&mut text)
                .context("could not read the API key from stdin")?;
            let key = text.lines().next().unwrap_or("").trim().to_owned();
            Ok((Some(Secret::new(key)), Some("stdin")))
        }
        Some(_) => Ok((flag, None)),
        None => match std::env::var("OPENVIKING_API_KEY") {
            Ok(k) if !k.trim().is_empty() => Ok((Some(Secret::new(k)), Some("OPENVIKING_API_KEY"))),
            _ => Ok((None, None)),
        },
    }
}
