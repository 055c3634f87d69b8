//! Install targets: where each harness keeps the configuration that runs ovhook, and how our
//! entries live in each of those files.
//!
//! # Design
//!
//! ```text
//! InstallTarget (one per harness: `--harness <name>`)
//!   └── places(home, scope) -> [Place]        the files an install at that scope edits
//!         Place { path, format, holds }
//!           └── PlaceFormat                   validate / merge / remove / binaries
//! ```
//!
//! `ovhook install` reads and validates every place first and writes only when all are valid,
//! so a malformed file refuses the whole install and nothing is half written. A place's format
//! merges only our entries and keeps every other key; `remove` takes out only ours. Every
//! format is idempotent: merging twice renders the same bytes as merging once.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Where an install applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The user's own configuration (under the home folder).
    User,
    /// A repository's configuration, at its root (the folder holding `.git`).
    Project {
        /// The repository root.
        root: PathBuf,
    },
}

/// Which kinds of entries an install writes (or a place can hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    /// The hook entries.
    pub hooks: bool,
    /// The MCP server entry (`ovhook mcp`).
    pub mcp: bool,
    /// The hooks of `capture.tools` too (PostToolUse, for the agents whose payloads carry the
    /// tool calls): written only while the setting is on, so a hook that would do nothing
    /// costs no process start per tool call. A place that may hold hooks may hold these.
    pub tools: bool,
}

impl Parts {
    /// Hooks and MCP server.
    pub const ALL: Parts = Parts {
        hooks: true,
        mcp: true,
        tools: false,
    };
    /// Hooks only.
    pub const HOOKS: Parts = Parts {
        hooks: true,
        mcp: false,
        tools: false,
    };
    /// MCP server only.
    pub const MCP: Parts = Parts {
        hooks: false,
        mcp: true,
        tools: false,
    };

    /// The parts both allow.
    pub fn and(self, other: Parts) -> Parts {
        Parts {
            hooks: self.hooks && other.hooks,
            mcp: self.mcp && other.mcp,
            // The hooks of `capture.tools` go wherever hooks may go.
            tools: self.tools && other.hooks,
        }
    }
}

/// The shape of one configuration file and how our entries live in it.
pub trait PlaceFormat: Sync {
    /// What the file is, for messages (`"ZCode config"`).
    fn describe(&self) -> &'static str;
    /// Checks the shape of the parts we would touch; an error refuses the install.
    fn validate(&self, root: &Map<String, Value>) -> anyhow::Result<()>;
    /// Puts our entries for the binary `exe` into `root` as `want` says; an entry kind not
    /// wanted is removed if it is ours. Returns notes for the user.
    fn merge(&self, root: &mut Map<String, Value>, exe: &Path, want: Parts) -> Vec<String>;
    /// Removes every entry of ours (and of predecessors we replace). Returns how many.
    fn remove(&self, root: &mut Map<String, Value>) -> usize;
    /// The binaries our entries in `root` run (absolute paths as written).
    fn binaries(&self, root: &Map<String, Value>) -> Vec<String>;
    /// Which of our parts `root` holds (what a re-install for a moved binary keeps). The default
    /// counts any entry of ours as every part; a format holding both kinds says precisely.
    fn present(&self, root: &Map<String, Value>) -> Parts {
        let any = !self.binaries(root).is_empty();
        Parts {
            hooks: any,
            mcp: any,
            tools: any,
        }
    }
    /// True when `root` holds nothing a user put there, once ours are removed: a file install
    /// created is then deleted by uninstall.
    fn is_residue(&self, root: &Map<String, Value>) -> bool {
        root.is_empty()
    }
    /// Problems in the file that are not ours to fix but stop our entries from running.
    fn warnings(&self, _root: &Map<String, Value>, _path: &Path) -> Vec<String> {
        Vec::new()
    }
}

/// One file an install edits.
#[derive(Clone)]
pub struct Place {
    /// The file.
    pub path: PathBuf,
    /// Its format.
    pub format: &'static dyn PlaceFormat,
    /// What of ours it can hold.
    pub holds: Parts,
}

impl std::fmt::Debug for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Place")
            .field("path", &self.path)
            .field("format", &self.format.describe())
            .field("holds", &self.holds)
            .finish()
    }
}

/// What [`InstallTarget::reconcile_plugins`] did or found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginNote {
    /// A plugin now runs this binary (what moved).
    Moved(String),
    /// Something the user must fix (e.g. plugin and config-file hooks both installed).
    Warning(String),
}

/// A harness ovhook can be installed into.
pub trait InstallTarget: Sync {
    /// The `--harness` value (`"zcode"`).
    fn name(&self) -> &'static str;
    /// The harness's name for people (`"ZCode"`).
    fn title(&self) -> &'static str;
    /// Whether `--scope project` is supported.
    fn supports_project(&self) -> bool;
    /// The files an install at `scope` edits. For [`Scope::Project`] these are files inside the
    /// repository, which may be committed: they hold hooks only, never credentials or URLs.
    fn places(&self, home: &Path, scope: &Scope) -> Vec<Place>;
    /// The hook events an install wires, for the summary.
    fn events(&self) -> &'static str {
        "SessionStart, UserPromptSubmit, PreToolUse (Read|Glob|Grep), Stop"
    }
    /// What the user must know after an install at `scope` (one line each).
    fn notes(&self, scope: &Scope) -> Vec<String>;
    /// The agent's hook-trust store, for an agent that runs configured hooks only once the user
    /// has trusted them (Codex).
    fn hook_trust(&self) -> Option<&'static dyn super::trust::HookTrust> {
        None
    }
    /// The harness's ovhook plugin that runs the stable home's binary itself (its id), if one is
    /// installed: a user install then writes no hooks or MCP entry of its own (they would run
    /// every event twice) and removes any it wrote before; it places the binary the plugin runs.
    fn plugin_serves(&self, _home: &Path) -> Option<String> {
        None
    }
    /// An ovhook plugin of the agent that runs the binary `exe` (said for people: "the … plugin
    /// …"), if one is installed: uninstall then keeps that binary.
    fn plugin_running(&self, _home: &Path, _exe: &Path) -> Option<String> {
        None
    }
    /// A file install writes beside the binaries in their stable home (a plugin shim), which
    /// goes with them.
    fn beside_binary(&self) -> Option<&'static str> {
        None
    }
    /// How the user removes the harness's plugin `id` (one line; ovhook never uninstalls an
    /// agent's plugin, the agent does).
    fn plugin_removal(&self, id: &str) -> String {
        format!("remove the plugin {id} in {}", self.title())
    }
    /// Brings the harness's plugin installs of ovhook (if any) to the binary `exe` where they
    /// link to it, and says what the user must know about them next to config-file hooks
    /// (`config_hooks`: this install wrote hooks).
    fn reconcile_plugins(
        &self,
        _home: &Path,
        _exe: &Path,
        _config_hooks: bool,
    ) -> anyhow::Result<Vec<PluginNote>> {
        Ok(Vec::new())
    }
}
