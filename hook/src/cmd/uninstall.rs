//! `ovhook uninstall`: our entries out of every place any install wrote, each file's fate
//! decided (and every file to change checked) before any is written.

use std::path::Path;

use anyhow::Context;

use super::install_args::{home_dir, scope_of};
use crate::cli::{ScopeArg, UninstallArgs};
use crate::install::manifest::{self, Manifest};
use crate::install::paths::{ovcli_path, state_root};
use crate::install::places::{load, recorded_places, Loaded};
use crate::install::target::{InstallTarget, Place, Scope};
use crate::install::{atomic, bin_home, original};

/// `ovhook uninstall`.
pub fn run(args: &UninstallArgs) -> anyhow::Result<i32> {
    let args = &args.place;
    let home = home_dir(args.home.clone())?;
    let targets: Vec<&dyn InstallTarget> = match args.harness.as_deref() {
        Some(h) => crate::harness::named(h)
            .map(|h| h.install_target())
            .into_iter()
            .collect(),
        None => crate::harness::ALL
            .iter()
            .map(|h| h.install_target())
            .collect(),
    };
    let state = state_root(&home);
    let manifest_path = manifest::path(&state);
    let mut manifest = Manifest::read(&manifest_path)?;
    let only_project = match args.scope {
        Some(ScopeArg::Project) => Some(scope_of(args)?),
        _ => None,
    };

    let mut places: Vec<(&dyn InstallTarget, Place)> = Vec::new();
    for t in &targets {
        match &only_project {
            Some(scope) => places.extend(t.places(&home, scope).into_iter().map(|p| (*t, p))),
            None => {
                places.extend(t.places(&home, &Scope::User).into_iter().map(|p| (*t, p)));
                places.extend(
                    recorded_places(*t, &home, &manifest, &Scope::User)
                        .into_iter()
                        .map(|p| (*t, p)),
                );
            }
        }
    }
    let mut loaded = Vec::new();
    for (t, place) in places {
        loaded.push((t, load(place)?));
    }
    // Decide every file's fate first; refuse before writing anything when one of them cannot
    // be replaced.
    let mut plans = Vec::new();
    let mut total = 0;
    for (_, Loaded { place, mut doc }) in loaded {
        if doc.original.is_none() {
            continue;
        }
        let current = doc.root.clone();
        let removed = place.format.remove(&mut doc.root);
        total += removed;
        let ours_created = manifest.created.iter().any(|c| c == &place.path);
        let fate = if ours_created && place.format.is_residue(&doc.root) {
            Fate::Delete
        } else {
            match original::read(&place.path)? {
                Some(orig) if original::restorable(&place, &current, &orig) => Fate::Restore(orig),
                kept => Fate::Strip {
                    edited_since: kept.is_some(),
                },
            }
        };
        let writes = match &fate {
            Fate::Delete => true,
            Fate::Restore(orig) => doc.original.as_deref() != Some(orig.as_slice()),
            Fate::Strip { .. } => doc.changed(),
        };
        if writes {
            atomic::check_replaceable(&place.path)?;
        }
        plans.push((place, doc, removed, fate));
    }
    if only_project.is_none() {
        for store in targets.iter().filter_map(|t| t.hook_trust()) {
            if !store.status(&home)?.trusted.is_empty() {
                for file in store.files(&home) {
                    atomic::check_replaceable(&file)?;
                }
            }
        }
    }
    // The agent's record of trusting our hooks names them by their place in the file: it goes
    // before they do, once every file is known to be replaceable.
    if only_project.is_none() {
        for t in &targets {
            if let Some(store) = t.hook_trust() {
                let gone = store.forget(&home)?;
                if gone > 0 {
                    println!("ovhook: removed {gone} {} hook trust records", t.title());
                }
            }
        }
    }
    for (place, doc, removed, fate) in plans {
        match fate {
            Fate::Delete => {
                remove_file(&place.path)?;
                remove_file(&doc.backup_path())?;
                if let Some(dir) = place.path.parent() {
                    // Only an empty folder goes (e.g. `.zcode/` that install created).
                    let _ = std::fs::remove_dir(dir);
                }
                println!(
                    "ovhook: removed {} (install had created it)",
                    place.path.display()
                );
            }
            Fate::Restore(orig) => {
                if doc.original.as_deref() != Some(orig.as_slice()) {
                    doc.write_bytes(&orig)?;
                    println!(
                        "ovhook: restored {} byte for byte as it was before install (backup: {})",
                        place.path.display(),
                        doc.backup_path().display()
                    );
                }
            }
            Fate::Strip { edited_since } => {
                if doc.changed() {
                    doc.write_bytes(&doc.render())?;
                    println!(
                        "ovhook: removed {removed} OpenViking entries from {} (backup: {})",
                        place.path.display(),
                        doc.backup_path().display()
                    );
                    if edited_since {
                        println!(
                            "  it changed since install: only our entries were taken out, your \
                             changes are kept"
                        );
                    }
                }
            }
        }
        original::discard(&place.path)?;
        manifest.created.retain(|c| c != &place.path);
    }
    for t in &targets {
        match &only_project {
            Some(Scope::Project { root }) => manifest
                .projects
                .retain(|p| !(p.harness == t.name() && &p.root == root)),
            _ => manifest.projects.retain(|p| p.harness != t.name()),
        }
    }
    manifest.write(&manifest_path)?;
    if total == 0 {
        println!("ovhook: nothing of ours was installed");
    }
    // Last: the binaries, once nothing installed runs them.
    match still_installed(&home, &manifest) {
        Some(kept) => {
            println!(
                "  kept: {} ({} still runs it)",
                bin_home::dir(&home).display(),
                kept.by
            );
            if let Some(how) = kept.removal {
                println!("  note: ovhook never removes an agent's plugin; to remove it: {how}");
            }
        }
        None => {
            let beside: Vec<&str> = crate::harness::ALL
                .iter()
                .filter_map(|h| h.install_target().beside_binary())
                .collect();
            for bin in bin_home::remove(&home, &beside)? {
                println!("ovhook: removed {}", bin.display());
            }
        }
    }
    if only_project.is_none() {
        // Everything ovhook keeps in the state root but the journals (the root may be a folder
        // the user chose: only names ovhook writes are removed).
        let log = ov_engine::paths::log_file(&state);
        remove_file(&log)?;
        remove_file(&log.with_extension("log.1"))?;
        remove_file(&ov_engine::backoff::path(&state))?;
        let journals = ov_engine::paths::journals_dir(&state);
        println!(
            "  kept: the journals in {} (every captured turn; delete them with: rm -rf {})",
            journals.display(),
            shell_quote(&journals)
        );
        println!(
            "  kept: {} (OpenViking's own CLI reads it too)",
            ovcli_path(&home).display()
        );
        for t in &targets {
            hold_unsent(&state, *t)?;
        }
    }
    Ok(0)
}

/// What still runs the home's binaries.
struct Kept {
    /// The file or plugin that runs them.
    by: String,
    /// For a plugin: how the user removes it.
    removal: Option<String>,
}

/// What still runs ovhook once an uninstall is done (a harness's user place or recorded project
/// holding entries of ours, or an ovhook plugin of an agent), for the message;
/// `None` when nothing does.
fn still_installed(home: &Path, manifest: &Manifest) -> Option<Kept> {
    for t in crate::harness::ALL.iter().map(|h| h.install_target()) {
        let places = t
            .places(home, &Scope::User)
            .into_iter()
            .chain(recorded_places(t, home, manifest, &Scope::User));
        for place in places {
            let Ok(loaded) = load(place) else { continue };
            if !loaded.place.format.binaries(&loaded.doc.root).is_empty() {
                return Some(Kept {
                    by: loaded.place.path.display().to_string(),
                    removal: None,
                });
            }
        }
    }
    let exe = bin_home::ovhook(home);
    crate::harness::ALL.iter().find_map(|h| {
        let t = h.install_target();
        let by = t.plugin_running(home, &exe)?;
        let removal = t.plugin_serves(home).map(|id| t.plugin_removal(&id));
        Some(Kept { by, removal })
    })
}

/// Nothing more of `t`'s sessions leaves the machine ([`crate::held`]); says what stays unsent
/// and how to send or delete it.
fn hold_unsent(state: &Path, t: &dyn InstallTarget) -> anyhow::Result<()> {
    crate::held::hold(state, t.name())
        .with_context(|| format!("could not record the uninstall under {}", state.display()))?;
    let (sessions, messages) = crate::held::pending(state, t.name());
    if sessions == 0 {
        return Ok(());
    }
    println!(
        "  kept unsent: {messages} message(s) of {sessions} {} session(s), in the journals; \
         nothing more of them is sent. To send them: ovhook install --harness {} && ovhook \
         drain. To delete them: ovhook forget --session ID (per session; `ovreplay sessions` \
         lists them), or delete the journals.",
        t.title(),
        t.name()
    );
    Ok(())
}

/// What uninstall does with one file that holds (or held) our entries.
enum Fate {
    /// Install created it and nothing but ours is in it: deleted.
    Delete,
    /// It is the user's original plus our entries only: these original bytes are written back.
    Restore(Vec<u8>),
    /// Our entries are taken out, everything else stays (`edited_since`: an original was kept
    /// but the file changed after install).
    Strip {
        /// An original was kept, and the file changed since.
        edited_since: bool,
    },
}

fn remove_file(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("could not remove {}", path.display())),
    }
}

/// `path` quoted for a POSIX shell.
fn shell_quote(path: &Path) -> String {
    let s = path.to_string_lossy();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+~".contains(c))
    {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
