//! What the arguments of `ovhook install` and `ovhook uninstall` ([`crate::cli::InstallArgs`],
//! [`crate::cli::UninstallArgs`]) resolve to: the home folder, the scope, the API key, this
//! binary.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context;
use ov_engine::config::Secret;

use crate::cli::{PlaceArgs, ScopeArg};
use crate::install::paths::project_root;
use crate::install::target::Scope;

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
pub fn scope_of(place: &PlaceArgs) -> anyhow::Result<Scope> {
    if place.scope != Some(ScopeArg::Project) {
        return Ok(Scope::User);
    }
    let dir = match &place.project {
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
