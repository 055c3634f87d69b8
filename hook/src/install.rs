//! `ovhook install` / `ovhook uninstall`.
//!
//! Every harness is an [`target::InstallTarget`]: the files ([`target::Place`]s) an install at
//! user or project scope edits and their formats. Install reads and validates every place first,
//! then merges our entries into each, keeping every foreign entry and key in place, checks that
//! every file it would change may be replaced ([`atomic::check_replaceable`]: no FIFO, nothing
//! read-only) and only then writes: the previous file backed up as `<file>.bak` (0600), the
//! user's bytes before ovhook's first change kept as `<file>.ovhook-orig` ([`original`]), the file
//! replaced atomically (through a symlink). A re-run that changes nothing writes nothing.
//! Uninstall decides every file's fate the same way before writing any: deleted (install created
//! it), given back byte for byte (it is the original plus our entries only), or stripped of our
//! entries (the user changed it since). Project installs are recorded in the [`manifest`] so uninstall and
//! later installs (an upgrade moving the binary) find them. Credential flags go to `ovcli.conf`
//! ([`ovcli`]), never into a project file; without them `ovcli.conf` is not touched.
//!
//! Every entry names the binaries' stable home ([`bin_home`], `~/.openviking/ovhook/bin/ovhook`),
//! never the binary install was run from: install copies itself (and `ovreplay`) there
//! atomically, after every place is validated and before any is written. Uninstall removes the
//! home's binaries last, once nothing installed (no harness, no project, no plugin) names them.
//!
//! Exit codes: 0 done, 1 refused (malformed file, no repository, I/O), 2 usage.

pub(crate) mod atomic;
pub mod bin_home;
pub mod hook_groups;
pub mod json_doc;
mod json_splice;
pub mod manifest;
pub mod mcp_servers;
pub mod original;
pub mod ovcli;
pub mod target;
pub mod trust;
mod uninstall;

pub use uninstall::run_uninstall;

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use self::json_doc::JsonDoc;
use self::manifest::Manifest;
use self::target::{InstallTarget, Parts, Place, PluginNote, Scope};

const USAGE: &str = "\
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
struct Args {
    home: Option<PathBuf>,
    harness: Option<String>,
    scope: Option<String>,
    project: Option<PathBuf>,
    no_mcp: bool,
    /// `--trust` (true) or `--no-trust` (false).
    trust: Option<bool>,
    creds: ovcli::Credentials,
}

fn parse(args: &[String], install: bool) -> Result<Args, String> {
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
            "--api-key" => out.creds.api_key = Some(value),
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

fn usage_error(msg: &str) -> i32 {
    if msg.is_empty() {
        println!("{USAGE}");
        return 0;
    }
    eprintln!("ovhook: {msg}");
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
    crate::harness::zcode::install_target::user_config_path(home)
}

/// `~/.openviking/ovcli.conf`, honouring `OPENVIKING_CLI_CONFIG_FILE` and `OPENVIKING_HOME`
/// exactly as `engine::config` reads it.
pub fn ovcli_path(home: &Path) -> PathBuf {
    let mut ctx = ov_engine::config::LoadContext::from_process(Some(home));
    ctx.home = home.to_path_buf();
    ctx.ovcli_path()
}

/// The state root for `home`, as the hooks compute it.
pub fn state_root(home: &Path) -> PathBuf {
    ov_engine::paths::state_root_from(&|k| std::env::var(k).ok(), home)
}

/// This binary, canonicalised: what the hooks run.
fn current_exe() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("could not find the ovhook binary's path")?;
    std::fs::canonicalize(&exe).with_context(|| format!("could not resolve {}", exe.display()))
}

/// The repository root holding `dir` (a worktree's `.git` file counts).
pub fn project_root(dir: &Path) -> anyhow::Result<PathBuf> {
    let dir = std::fs::canonicalize(dir)
        .with_context(|| format!("could not resolve {}", dir.display()))?;
    match ov_engine::config::RepoInfo::discover(&dir) {
        Some(repo) => Ok(repo.root),
        None => bail!(
            "{} is not inside a git repository: --scope project needs one (ZCode reads \
             workspace hooks between the working folder and the git root)",
            dir.display()
        ),
    }
}

fn scope_of(args: &Args) -> anyhow::Result<Scope> {
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
fn resolve_api_key(flag: Option<String>) -> anyhow::Result<(Option<String>, Option<&'static str>)> {
    match flag.as_deref() {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .take(64 * 1024)
                .read_to_string(&mut text)
                .context("could not read the API key from stdin")?;
            let key = text.lines().next().unwrap_or("").trim().to_owned();
            Ok((Some(key), Some("stdin")))
        }
        Some(_) => Ok((flag, None)),
        None => match std::env::var("OPENVIKING_API_KEY") {
            Ok(k) if !k.trim().is_empty() => Ok((Some(k), Some("OPENVIKING_API_KEY"))),
            _ => Ok((None, None)),
        },
    }
}

/// One place read and checked, ready to be merged.
struct Loaded {
    place: Place,
    doc: JsonDoc,
}

fn load(place: Place) -> anyhow::Result<Loaded> {
    let describe = place.format.describe();
    let doc = JsonDoc::read(&place.path, describe)?;
    place
        .format
        .validate(&doc.root)
        .with_context(|| json_doc::refusal(&place.path, describe))?;
    Ok(Loaded { place, doc })
}

/// Every place of `target` that an earlier install recorded, for `exclude`'s scope excepted.
fn recorded_places(
    target: &dyn InstallTarget,
    home: &Path,
    manifest: &Manifest,
    exclude: &Scope,
) -> Vec<Place> {
    manifest
        .project_roots(target.name())
        .into_iter()
        .map(|root| Scope::Project { root })
        .filter(|s| s != exclude)
        .flat_map(|s| target.places(home, &s))
        .collect()
}

/// `ovhook install`.
pub fn run(args: &[String]) -> anyhow::Result<i32> {
    let args = match parse(args, true) {
        Ok(a) => a,
        Err(msg) => return Ok(usage_error(&msg)),
    };
    let target = args
        .harness
        .as_deref()
        .and_then(crate::harness::named)
        .unwrap_or(crate::harness::DEFAULT)
        .install_target();
    let scope = scope_of(&args)?;
    if matches!(scope, Scope::Project { .. }) && !target.supports_project() {
        return Ok(usage_error(&format!(
            "--scope project is not supported for {}",
            target.title()
        )));
    }
    let (api_key, key_source) = resolve_api_key(args.creds.api_key.clone())?;
    let creds = ovcli::Credentials {
        api_key,
        ..args.creds.clone()
    };
    let home = home_dir(args.home)?;
    let running = current_exe()?;
    let exe = bin_home::ovhook(&home);
    let serving_plugin = match scope {
        Scope::User => target.plugin_serves(&home),
        Scope::Project { .. } => None,
    };
    let want = if serving_plugin.is_some() {
        Parts {
            hooks: false,
            mcp: false,
        }
    } else if args.no_mcp {
        Parts::HOOKS
    } else {
        Parts::ALL
    };
    let manifest_path = manifest::path(&state_root(&home));
    let mut manifest = Manifest::read(&manifest_path)?;

    // Read and validate everything before writing anything.
    let mut main = Vec::new();
    for place in target.places(&home, &scope) {
        main.push(load(place)?);
    }
    // With the plugin serving, only a file holding entries of ours is touched (they go).
    if serving_plugin.is_some() {
        main.retain(|l| l.doc.original.is_some());
    }
    // Every other place holding our entries for another binary (the user places and recorded
    // projects of every harness, those this install writes excepted): moved to this one.
    let mut moved = Vec::new();
    for t in crate::harness::ALL.map(|h| h.install_target()) {
        let mut others = recorded_places(t, &home, &manifest, &scope);
        if t.name() != target.name() || scope != Scope::User {
            others.extend(t.places(&home, &Scope::User));
        }
        for place in others {
            let Ok(loaded) = load(place) else { continue };
            let names = loaded.place.format.binaries(&loaded.doc.root);
            if names.iter().any(|b| Path::new(b) != exe) {
                moved.push(loaded);
            }
        }
    }

    let scope_label = match &scope {
        Scope::User => "user".to_owned(),
        Scope::Project { root } => format!("project {}", root.display()),
    };
    let mut any_written = false;
    let mut report = Vec::new();
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    for Loaded { place, doc } in &mut main {
        notes.push(
            place
                .format
                .merge(&mut doc.root, &exe, want.and(place.holds)),
        );
    }
    for Loaded { place, doc } in &mut moved {
        // The same parts as before, now naming this binary.
        let parts = place.format.present(&doc.root).and(place.holds);
        place.format.merge(&mut doc.root, &exe, parts);
    }
    // Every file this install would change may be replaced (no FIFO, nothing read-only), or
    // nothing is written at all.
    let changing = main.iter().chain(&moved).filter(|l| l.doc.changed());
    for path in changing.map(|l| &l.place.path) {
        atomic::check_replaceable(path)?;
    }
    if creds.any() {
        atomic::check_replaceable(&ovcli_path(&home))?;
    }
    // The agent's trust in our hooks (Codex): asked before anything is written, so that its
    // file is checked with the others.
    let trust = match target.hook_trust() {
        Some(store) if want.hooks && scope == Scope::User => {
            let yes = trust::consent(args.trust, &store.question());
            if yes {
                for file in store.files(&home) {
                    atomic::check_replaceable(&file)?;
                }
            }
            Some((store, yes))
        }
        _ => None,
    };

    for (dest, placed) in bin_home::place(&home, &running)? {
        let state = match placed {
            None => continue,
            Some(bin_home::Placed::Unchanged) => "unchanged".to_owned(),
            Some(bin_home::Placed::Copied(from)) => {
                any_written = true;
                format!("copied from {}", from.display())
            }
        };
        report.push(format!("  binary: {} ({state})", dest.display()));
    }
    for (Loaded { place, doc }, notes) in main.iter().zip(notes) {
        let created = doc.original.is_none();
        let wrote = doc.save()?;
        any_written |= wrote;
        if wrote && created {
            manifest.add_created(&place.path);
        }
        let state = match (wrote, created) {
            (false, _) => "unchanged".to_owned(),
            (true, true) => "created".to_owned(),
            (true, false) => format!(
                "updated, backup {}; your original is kept in {}",
                doc.backup_path().display(),
                original::path(&place.path).display()
            ),
        };
        report.push(format!(
            "  {}: {} ({state})",
            place.format.describe(),
            place.path.display()
        ));
        report.extend(notes.into_iter().map(|n| format!("  note: {n}")));
    }
    for Loaded { place, doc } in moved {
        if doc.save()? {
            any_written = true;
            report.push(format!(
                "  moved to this binary: {} ({})",
                place.path.display(),
                place.format.describe()
            ));
        }
    }
    for note in target.reconcile_plugins(&home, &exe, want.hooks)? {
        match note {
            PluginNote::Moved(line) => {
                any_written = true;
                report.push(format!("  moved to this binary: {line}"));
            }
            PluginNote::Warning(line) => warnings.push(format!("warning: {line}")),
        }
    }
    // Once everything is written (a plugin's own files included): what still stops our entries.
    for Loaded { place, doc } in &main {
        warnings.extend(place.format.warnings(&doc.root, &place.path));
    }
    if let Scope::Project { root } = &scope {
        manifest.add_project(target.name(), root);
    }
    manifest.write(&manifest_path)?;
    let trust_lines = match trust {
        Some((store, true)) => store.record(&home)?,
        Some((store, false)) => vec![format!("note: {}", store.how_to())],
        None => Vec::new(),
    };

    let verb = if any_written {
        "installed"
    } else {
        "already installed"
    };
    println!(
        "ovhook: {verb} for {} ({scope_label} scope)",
        target.title()
    );
    for line in report {
        println!("{line}");
    }
    if let Some(id) = &serving_plugin {
        println!(
            "  hooks and mcp: from the plugin {id}, which runs {}",
            exe.display()
        );
    } else {
        println!("  hooks: {} -> {}", target.events(), exe.display());
    }
    if serving_plugin.is_none() && want.mcp && matches!(scope, Scope::User) {
        println!("  mcp: openviking -> {} mcp", exe.display());
    } else if serving_plugin.is_none() && !want.mcp {
        println!("  mcp: not installed (--no-mcp)");
    }
    for note in target.notes(&scope) {
        println!("  note: {note}");
    }
    for line in trust_lines {
        println!("  {line}");
    }

    if creds.any() {
        let ov = ovcli_path(&home);
        let outcome = ovcli::write(&ov, &creds)?;
        let state = match outcome {
            ovcli::Outcome::Written => "written",
            ovcli::Outcome::Unchanged => "unchanged",
        };
        println!("  credentials: {} ({state}, mode 0600)", ov.display());
        if let Some(src) = key_source {
            println!("  api key: read from {src}");
        }
    }
    // Installed again: this harness's sessions send again (`ovhook drain` sends what waited).
    if crate::held::release(&state_root(&home), target.name())? {
        println!(
            "  sending again: what {}'s sessions kept unsent since uninstall goes with the next \
             worker (now: ovhook drain)",
            target.title()
        );
    }
    for w in warnings {
        eprintln!("{w}");
    }
    Ok(0)
}
