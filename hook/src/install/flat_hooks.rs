//! A hooks file of flat entries: `hooks.<event>` is a list of entries, each one shell line,
//! with no matcher groups (Copilot CLI's `settings.json`, Cursor's `hooks.json`).
//!
//! ```text
//! { "hooks": { "<event>": [ <entry>, ... ] },
//!   ...every other key belongs to the agent or the user and is kept as is... }
//! ```
//!
//! A harness gives the entry's shape as data ([`FlatHooksFile::entry`] and the key holding its
//! shell line); this file owns the rest: which entries are ours (the integration marker, or a
//! shell line running a binary named `ovhook` with `--harness <name>`), where a re-install puts
//! them (where the first of ours was, so it rewrites the file byte for byte), and what
//! uninstall removes (ours only, then empty lists and an empty `hooks`).

use std::path::Path;

use anyhow::bail;
use serde_json::{json, Map, Value};

use super::hook_groups::{first_word, ovhook_command, runs_ovhook_for};
use super::json_doc::object_at;
use super::marker::mentions_integration;
use super::target::{Parts, PlaceFormat};

/// One flat hooks file and how our entries look in it.
#[derive(Debug)]
pub struct FlatHooksFile {
    /// What the file is, for messages (`"Copilot CLI settings"`).
    pub describe: &'static str,
    /// The agent, for messages (`"Copilot CLI"`).
    pub agent: &'static str,
    /// The harness our shell lines name (`--harness <harness>`).
    pub harness: &'static str,
    /// Our hooks: the agent's event, ovhook's subcommand, the timeout the entry declares.
    pub hooks: &'static [(&'static str, &'static str, u64)],
    /// The key of an entry holding its shell line (`"bash"`, `"command"`).
    pub command_key: &'static str,
    /// One entry of ours: its shell line and timeout in the agent's spelling.
    pub entry: fn(command: String, timeout: u64) -> Value,
    /// A top-level key the agent wants numbered (`"version": 1`), added when missing; a file
    /// holding nothing else once ours are removed is residue.
    pub version_key: Option<&'static str>,
    /// A top-level switch that, when `true`, turns every hook of the agent off.
    pub disable_all_key: Option<&'static str>,
}

impl FlatHooksFile {
    fn is_ours(&self, entry: &Value) -> bool {
        mentions_integration(entry)
            || entry
                .get(self.command_key)
                .and_then(Value::as_str)
                .is_some_and(|line| runs_ovhook_for(line, self.harness))
    }

    fn command(&self, exe: &Path, sub: &str) -> String {
        ovhook_command(exe, self.harness, sub)
    }

    fn ours<'a>(&'a self, root: &'a Map<String, Value>) -> impl Iterator<Item = &'a Value> {
        root.get("hooks")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|e| e.values())
            .filter_map(Value::as_array)
            .flatten()
            .filter(|e| self.is_ours(e))
    }
}

impl PlaceFormat for FlatHooksFile {
    fn describe(&self) -> &'static str {
        self.describe
    }

    fn validate(&self, root: &Map<String, Value>) -> anyhow::Result<()> {
        if let Some(hooks) = root.get("hooks") {
            let Value::Object(events) = hooks else {
                bail!("\"hooks\" is not an object");
            };
            for (name, entries) in events {
                if !entries.is_array() {
                    bail!("\"hooks.{name}\" is not a list");
                }
            }
        }
        Ok(())
    }

    fn merge(&self, root: &mut Map<String, Value>, exe: &Path, want: Parts) -> Vec<String> {
        if !want.hooks {
            self.remove(root);
            return Vec::new();
        }
        if let Some(key) = self.version_key {
            if !root.get(key).is_some_and(Value::is_number) {
                root.insert(key.into(), json!(1));
            }
        }
        let events = object_at(root, "hooks");
        for (event, sub, timeout) in self.hooks {
            let entry = (self.entry)(self.command(exe, sub), *timeout);
            let list = events
                .entry(*event)
                .or_insert_with(|| Value::Array(Vec::new()));
            if !list.is_array() {
                *list = Value::Array(Vec::new());
            }
            if let Value::Array(list) = list {
                let at = list
                    .iter()
                    .position(|e| self.is_ours(e))
                    .unwrap_or(list.len());
                list.retain(|e| !self.is_ours(e));
                list.insert(at.min(list.len()), entry);
            }
        }
        Vec::new()
    }

    fn remove(&self, root: &mut Map<String, Value>) -> usize {
        let Some(Value::Object(events)) = root.get_mut("hooks") else {
            return 0;
        };
        let mut removed = 0;
        for list in events.values_mut() {
            if let Value::Array(list) = list {
                let before = list.len();
                list.retain(|e| !self.is_ours(e));
                removed += before - list.len();
            }
        }
        events.retain(|_, l| !matches!(l, Value::Array(l) if l.is_empty()));
        if events.is_empty() {
            root.remove("hooks");
        }
        removed
    }

    fn binaries(&self, root: &Map<String, Value>) -> Vec<String> {
        self.ours(root)
            .filter_map(|e| e.get(self.command_key).and_then(Value::as_str))
            .map(first_word)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    fn is_residue(&self, root: &Map<String, Value>) -> bool {
        root.keys().all(|k| Some(k.as_str()) == self.version_key)
    }

    fn warnings(&self, root: &Map<String, Value>, path: &Path) -> Vec<String> {
        match self.disable_all_key {
            Some(key) if root.get(key) == Some(&Value::Bool(true)) => vec![format!(
                "{}: \"{key}\" is true: {} runs no hooks, ovhook's included",
                path.display(),
                self.agent
            )],
            _ => Vec::new(),
        }
    }
}
