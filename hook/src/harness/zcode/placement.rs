//! The ZCode placement section of `ovhook doctor`: which configuration makes ZCode run our
//! hooks in the current folder (user-level, project-level, the plugin), which ZCode version is
//! on the machine, every project config holding our entries, stale binary paths in any of them,
//! and a plugin install next to config-file hooks (each event would then run twice).

use std::path::{Path, PathBuf};

use super::config_file::{self, ConfigFile};
use super::install_target::{agents_mcp_path, project_config_path, AGENTS_MCP, ZCODE_CONFIG};
use super::installed::{self, PluginInstall, Version};
use super::plugin;
use crate::doctor::{Check, Level};
use crate::install::json_doc::JsonDoc;
use crate::install::manifest::{self, Manifest};
use crate::install::target::PlaceFormat;

/// What the user-level config holds, as the caller read it.
pub struct UserLevel {
    /// `~/.zcode/cli/config.json` holds our hooks.
    pub has_hooks: bool,
}

/// Facts gathered once, used by the section and by the user-config checks.
pub struct Placement {
    /// The repository holding the current folder.
    pub repo: Option<PathBuf>,
    /// Workspace files (cwd up to the git root) holding our hooks.
    pub workspace_ours: Vec<PathBuf>,
    /// Enabled plugin installs.
    pub plugins: Vec<PluginInstall>,
    /// The ZCode version, when readable.
    pub version: Option<Version>,
    /// Project configs recorded by `ovhook install --scope project`.
    pub recorded: Vec<PathBuf>,
}

fn has_our_hooks(path: &Path) -> bool {
    ConfigFile::read(path).is_ok_and(|f| !config_file::our_commands(&f.root).is_empty())
}

impl Placement {
    /// Gathers the facts for a doctor run in `cwd`.
    pub fn gather(home: &Path, cwd: &Path, state_root: &Path) -> Placement {
        let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let repo = ov_engine::config::RepoInfo::discover(&cwd).map(|r| r.root);
        let workspace_ours = repo
            .as_deref()
            .map(|root| installed::workspace_files(&cwd, root))
            .unwrap_or_default()
            .into_iter()
            .filter(|f| has_our_hooks(f))
            .collect();
        let recorded = Manifest::read(&manifest::path(state_root))
            .map(|m| {
                m.project_roots("zcode")
                    .iter()
                    .map(|r| project_config_path(r))
                    .collect()
            })
            .unwrap_or_default();
        Placement {
            repo,
            workspace_ours,
            plugins: installed::plugin_installs(home)
                .into_iter()
                .filter(|p| p.enabled)
                .collect(),
            version: installed::version(home, std::env::var("ZCODE_APP_VERSION").ok()),
            recorded,
        }
    }

    /// True when something other than the user config runs our hooks here.
    pub fn other_source(&self) -> bool {
        !self.workspace_ours.is_empty() || !self.plugins.is_empty()
    }

    /// The section's checks.
    pub fn report(&self, home: &Path, user: &UserLevel, exe: Option<&Path>) -> Vec<Check> {
        let mut out = Vec::new();
        out.push(match &self.version {
            Some(v) => Check::new(
                Level::Ok,
                "zcode version",
                format!("{} (from {})", v.text, v.source),
            ),
            None => Check::new(
                Level::Ok,
                "zcode version",
                "not found on this machine (no ZCODE_APP_VERSION, desktop app or rollout file)",
            ),
        });
        out.push(self.verdict(user));

        let mut projects: Vec<PathBuf> = self
            .recorded
            .iter()
            .filter(|p| has_our_hooks(p))
            .cloned()
            .collect();
        for f in &self.workspace_ours {
            if !projects.contains(f) {
                projects.push(f.clone());
            }
        }
        out.push(Check::new(
            Level::Ok,
            "zcode projects",
            if projects.is_empty() {
                "no project config holds our hooks".to_owned()
            } else {
                projects
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        ));
        for p in &self.recorded {
            if !has_our_hooks(p) {
                out.push(Check::new(
                    Level::Warn,
                    "zcode projects",
                    format!(
                        "{} was installed but no longer holds our hooks (re-run ovhook install \
                         --scope project there, or ovhook uninstall --scope project --project {})",
                        p.display(),
                        p.parent().and_then(Path::parent).unwrap_or(p).display()
                    ),
                ));
            }
        }

        for p in &projects {
            let Ok(file) = ConfigFile::read(p) else {
                continue;
            };
            if let Some(hint) = config_file::disabled_hint(&file, p) {
                out.push(Check::new(Level::Fail, "zcode projects", hint));
            }
            let unknown = file.unknown_event_keys();
            if !unknown.is_empty() {
                out.push(Check::new(
                    Level::Fail,
                    "zcode projects",
                    format!(
                        "{}: unknown hooks.events key(s) {}: ZCode rejects every hook in it",
                        p.display(),
                        unknown.join(", ")
                    ),
                ));
            }
        }
        let mut stale_places = projects.clone();
        stale_places.push(agents_mcp_path(home));
        for place in stale_places {
            out.extend(stale_binary_checks(&place, exe));
        }

        for p in &self.plugins {
            // The binary the plugin's hooks really run, as ZCode expands their command.
            let bin = &p.binary;
            let runs = std::fs::metadata(bin).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            });
            let fix = if p.runs_stable_home {
                "run ovhook install --harness zcode to put it there"
            } else {
                "reinstall the plugin"
            };
            out.push(if runs && !plugin::is_current(&p.root) {
                Check::new(
                    Level::Warn,
                    "zcode plugin",
                    format!(
                        "{} runs {}, but its hooks or MCP server differ from this ovhook's \
                         (an older or edited copy): install the plugin again from this release",
                        p.root.display(),
                        bin.display()
                    ),
                )
            } else if runs {
                Check::new(
                    Level::Ok,
                    "zcode plugin",
                    format!("{} installed, runs {}", p.root.display(), bin.display()),
                )
            } else {
                Check::new(
                    Level::Fail,
                    "zcode plugin",
                    format!(
                        "{} runs {}, which is not an executable file: {fix}",
                        p.root.display(),
                        bin.display()
                    ),
                )
            });
        }
        if !self.plugins.is_empty() && (user.has_hooks || !projects.is_empty()) {
            out.push(Check::new(
                Level::Warn,
                "zcode plugin",
                "the ovhook plugin and config-file hooks are both installed: every event would \
                 run twice (keep one: ovhook uninstall removes the config-file hooks, or disable \
                 the plugin)",
            ));
        }
        out
    }

    fn verdict(&self, user: &UserLevel) -> Check {
        let what = "zcode hooks here";
        let Some(repo) = &self.repo else {
            return if user.has_hooks || !self.plugins.is_empty() {
                Check::new(
                    Level::Ok,
                    what,
                    "not inside a git repository: user-level hooks (and plugins) apply",
                )
            } else {
                Check::new(
                    Level::Fail,
                    what,
                    "not inside a git repository and no user-level hooks of ours: ZCode runs none",
                )
            };
        };
        let workspace_only = self
            .version
            .as_ref()
            .is_some_and(Version::workspace_hooks_only);
        if let Some(first) = self.workspace_ours.first() {
            let also = if user.has_hooks {
                " and user-level"
            } else {
                ""
            };
            return Check::new(
                Level::Ok,
                what,
                format!(
                    "project-level{also} in {} ({}): ZCode runs them once you trust the workspace",
                    repo.display(),
                    first.display()
                ),
            );
        }
        if !self.plugins.is_empty() {
            return Check::new(Level::Ok, what, "from the ovhook plugin");
        }
        if !user.has_hooks {
            return Check::new(
                Level::Fail,
                what,
                format!(
                    "no hooks of ours for {}: run ovhook install (or --scope project)",
                    repo.display()
                ),
            );
        }
        match &self.version {
            Some(v) if workspace_only => Check::new(
                Level::Fail,
                what,
                format!(
                    "user-level only, but ZCode {} loads hooks only from the workspace: run \
                     ovhook install --scope project in {}",
                    v.text,
                    repo.display()
                ),
            ),
            Some(v) => Check::new(
                Level::Ok,
                what,
                format!(
                    "user-level only (ZCode {} reads ~/.zcode/cli/config.json)",
                    v.text
                ),
            ),
            None => Check::new(
                Level::Warn,
                what,
                format!(
                    "user-level only: the CLI and the Windows desktop run them; the macOS desktop \
                     3.10+ loads only workspace hooks (run ovhook install --scope project in {})",
                    repo.display()
                ),
            ),
        }
    }
}

/// A FAIL for each binary our entries in `path` name that does not exist, a warn for one that
/// is not this binary.
fn stale_binary_checks(path: &Path, exe: Option<&Path>) -> Vec<Check> {
    let format: &dyn PlaceFormat = if path.ends_with(".agents/mcp.json") {
        &AGENTS_MCP
    } else {
        &ZCODE_CONFIG
    };
    let Ok(doc) = JsonDoc::read(path, format.describe()) else {
        return vec![Check::new(
            Level::Fail,
            "stale path",
            format!("{} is not valid JSON", path.display()),
        )];
    };
    let mut bins = format.binaries(&doc.root);
    bins.sort();
    bins.dedup();
    bins.into_iter()
        .filter_map(|b| {
            let bp = Path::new(&b);
            if !bp.is_file() {
                Some(Check::new(
                    Level::Fail,
                    "stale path",
                    format!(
                        "{} runs {b}, which does not exist (run ovhook install again)",
                        path.display()
                    ),
                ))
            } else if exe.is_some_and(|e| std::fs::canonicalize(bp).ok().as_deref() != Some(e)) {
                Some(Check::new(
                    Level::Warn,
                    "stale path",
                    format!(
                        "{} runs {b}, not this binary (run ovhook install to move it here)",
                        path.display()
                    ),
                ))
            } else {
                None
            }
        })
        .collect()
}
