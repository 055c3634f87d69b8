//! `ovhook install`: the target's places read and validated, our entries merged, every other
//! place naming an older binary moved to the stable home's, then everything written (see
//! [`crate::install`] for the guarantees).

use std::path::Path;

use super::install_args::{current_exe, home_dir, resolve_api_key, scope_of};
use crate::cli::InstallArgs;
use crate::install::manifest::{self, Manifest};
use crate::install::paths::{ovcli_path, state_root};
use crate::install::places::{load, recorded_places, Loaded};
use crate::install::target::{Parts, PluginNote, Scope};
use crate::install::{atomic, bin_home, original, ovcli, trust};

/// `ovhook install`.
pub fn run(args: &InstallArgs) -> anyhow::Result<i32> {
    let target = args
        .place
        .harness
        .as_deref()
        .and_then(crate::harness::named)
        .unwrap_or(crate::harness::DEFAULT)
        .install_target();
    let scope = scope_of(&args.place)?;
    if matches!(scope, Scope::Project { .. }) && !target.supports_project() {
        return Ok(crate::cli::usage_error(format!(
            "--scope project is not supported for {}",
            target.title()
        )));
    }
    let mut creds = ovcli::Credentials {
        url: args.url.clone(),
        api_key: None,
        account: args.account.clone(),
        user: args.user.clone(),
    };
    if let Some(e) = creds.url_error() {
        return Ok(crate::cli::usage_error(format!("--url: {e}")));
    }
    let (api_key, key_source) = resolve_api_key(args.api_key.clone())?;
    creds.api_key = api_key;
    let home = home_dir(args.place.home.clone())?;
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
            tools: false,
        }
    } else if args.no_mcp {
        Parts::HOOKS
    } else {
        Parts::ALL
    };
    // The hooks of `capture.tools` only while it is on (where the install runs).
    let want = Parts {
        tools: want.hooks && capture_tools(&home),
        ..want
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
    for t in crate::harness::ALL.iter().map(|h| h.install_target()) {
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
    // The agent's trust in our hooks (Codex), the config-file ones or the plugin's: asked before
    // anything is written, so that its file is checked with the others.
    let trust = match target.hook_trust() {
        Some(store) if (want.hooks || serving_plugin.is_some()) && scope == Scope::User => {
            let yes = trust::consent(args.trust(), &store.question());
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
    // An agent whose files hold no MCP entry (Codex, Factory Droid) gets none from an install
    // or from its plugin; its notes say how to add one.
    let holds_mcp = target
        .places(&home, &Scope::User)
        .iter()
        .any(|p| p.holds.mcp);
    if let Some(id) = &serving_plugin {
        let what = if holds_mcp { "hooks and mcp" } else { "hooks" };
        println!(
            "  {what}: from the plugin {id}, which runs {}",
            exe.display()
        );
    } else {
        println!("  hooks: {} -> {}", target.events(), exe.display());
    }
    if serving_plugin.is_none() && want.mcp && holds_mcp && matches!(scope, Scope::User) {
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

/// Whether `capture.tools` is on for an install into `home`, run from the current directory:
/// the configuration the hooks will read (its files and the environment).
fn capture_tools(home: &Path) -> bool {
    let mut ctx =
        ov_engine::config::LoadContext::from_process(std::env::current_dir().ok().as_deref());
    ctx.home = home.to_path_buf();
    ov_engine::config::Config::load(&ctx).config.capture.tools
}
