//! Codex's hook trust, recorded the way Codex's own `/hooks` screen records it.
//!
//! # Context
//!
//! Codex CLI runs a hook from `hooks.json` only when its `config.toml` holds, for that hook,
//!
//! ```toml
//! [hooks.state."<hooks.json path>:<event, snake_case>:<group index>:<handler index>"]
//! trusted_hash = "sha256:<hex>"
//! ```
//!
//! and the hash matches the hook's current definition; otherwise `codex exec` skips it without
//! a word. The hash is SHA-256 of the key-sorted compact JSON of
//! `{"event_name", "matcher" (when the group has one), "hooks": [{"type", "command", "timeout",
//! "async", "statusMessage" (when present)}]}`, one handler at a time. Changing a hook (its
//! binary's path, its timeout) makes it untrusted again, so a re-install that moves the binary
//! asks again.
//!
//! `config.toml` is edited with `toml_edit`: every other table, comment and byte of layout is
//! kept; only our `hooks.state` entries are added or removed.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use toml_edit::{DocumentMut, Item, Table};

use super::install_target::{codex_home, CODEX_HOOKS};
use crate::install::json_doc::{backup_path, JsonDoc};
use crate::install::trust::{HookTrust, TrustStatus};
use crate::install::{atomic, json_doc};

/// The largest `config.toml` read.
const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Codex's trust store.
pub static CODEX_TRUST: CodexTrust = CodexTrust;

/// Codex's trust store (`config.toml`'s `hooks.state`).
#[derive(Debug)]
pub struct CodexTrust;

/// One hook of ours (in `hooks.json` or the ovhook plugin's hooks file): its trust key and the
/// hash Codex expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OurHook {
    /// The event, as Codex names it in the key (`session_start`).
    pub event: String,
    /// `<source>:<event>:<group>:<handler>`: the source is the `hooks.json` path, or for a
    /// plugin `<plugin>@<marketplace>:<hooks file relative to the plugin root>`.
    pub key: String,
    /// `sha256:<hex>`.
    pub hash: String,
}

/// `SessionStart` -> `session_start`.
fn snake(event: &str) -> String {
    let mut out = String::with_capacity(event.len() + 4);
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `v` as compact JSON with every object's keys sorted.
fn sorted_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let body: Vec<String> = keys
                .into_iter()
                .map(|k| {
                    let val = m.get(k).map(sorted_json).unwrap_or_default();
                    format!("{}:{val}", Value::String(k.clone()))
                })
                .collect();
            format!("{{{}}}", body.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(sorted_json).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// The hash Codex computes for `handler` of a group under `event` with `matcher`.
pub fn trusted_hash(event: &str, matcher: Option<&Value>, handler: &Map<String, Value>) -> String {
    let mut h = Map::new();
    h.insert(
        "type".into(),
        handler
            .get("type")
            .cloned()
            .unwrap_or_else(|| "command".into()),
    );
    for key in ["command", "timeout"] {
        if let Some(v) = handler.get(key) {
            h.insert(key.into(), v.clone());
        }
    }
    h.insert(
        "async".into(),
        handler.get("async").cloned().unwrap_or(Value::Bool(false)),
    );
    if let Some(s) = handler.get("statusMessage") {
        h.insert("statusMessage".into(), s.clone());
    }
    let mut def = Map::new();
    def.insert("event_name".into(), Value::String(snake(event)));
    if let Some(m) = matcher.filter(|m| !m.is_null()) {
        def.insert("matcher".into(), m.clone());
    }
    def.insert("hooks".into(), Value::Array(vec![Value::Object(h)]));
    let digest = Sha256::digest(sorted_json(&Value::Object(def)).as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Every hook of ours in a hooks file (parsed as `root`) whose trust keys start with `source`
/// (the `hooks.json` path, or `<plugin id>:<relative hooks file>`).
pub fn our_hooks(source: &str, root: &Map<String, Value>) -> Vec<OurHook> {
    let mut out = Vec::new();
    let Some(events) = root.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (event, groups) in events {
        let Some(groups) = groups.as_array() else {
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let Some(handlers) = group.get("hooks").and_then(Value::as_array) else {
                continue;
            };
            for (h, handler) in handlers.iter().enumerate() {
                let Some(handler_map) = handler.as_object() else {
                    continue;
                };
                if !CODEX_HOOKS.is_ours(handler) {
                    continue;
                }
                let event_snake = snake(event);
                out.push(OurHook {
                    key: format!("{source}:{event_snake}:{g}:{h}"),
                    event: event_snake,
                    hash: trusted_hash(event, group.get("matcher"), handler_map),
                });
            }
        }
    }
    out
}

fn hooks_path(home: &Path) -> PathBuf {
    codex_home(home).join("hooks.json")
}

fn config_path(home: &Path) -> PathBuf {
    codex_home(home).join("config.toml")
}

/// Our hooks as installed under `home`: those in `hooks.json`, then those of every enabled
/// install of the ovhook plugin.
fn installed(home: &Path) -> anyhow::Result<Vec<OurHook>> {
    let path = hooks_path(home);
    let doc = JsonDoc::read(&path, CODEX_HOOKS.describe)?;
    let mut ours = our_hooks(&path.display().to_string(), &doc.root);
    for plugin in super::plugin::installed(home) {
        ours.extend(plugin.hooks);
    }
    Ok(ours)
}

/// Whether `config.toml` trusts each of `hooks` as it is now: `(trusted, untrusted)` events.
pub fn status_of(home: &Path, hooks: &[OurHook]) -> anyhow::Result<TrustStatus> {
    let cfg = ConfigDoc::read(home)?;
    let mut status = TrustStatus::default();
    for hook in hooks {
        if cfg.trusted_hash(&hook.key) == Some(hook.hash.as_str()) {
            status.trusted.push(hook.event.clone());
        } else {
            status.untrusted.push(hook.event.clone());
        }
    }
    Ok(status)
}

/// `config.toml` read and parsed (an absent file is an empty document).
struct ConfigDoc {
    path: PathBuf,
    original: Option<String>,
    doc: DocumentMut,
}

impl ConfigDoc {
    fn read(home: &Path) -> anyhow::Result<ConfigDoc> {
        let path = config_path(home);
        let original = ov_engine::regular_file::read_text(&path, MAX_CONFIG_BYTES)
            .with_context(|| format!("could not read {}", path.display()))?;
        let doc = original
            .as_deref()
            .unwrap_or("")
            .parse::<DocumentMut>()
            .with_context(|| json_doc::refusal(&path, "Codex config.toml"))?;
        Ok(ConfigDoc {
            path,
            original,
            doc,
        })
    }

    /// `hooks.state`, if there is one.
    fn state(&self) -> Option<&Table> {
        self.doc.get("hooks")?.as_table()?.get("state")?.as_table()
    }

    /// `hooks.state`, created as implicit tables (no empty `[hooks]` header is written).
    fn state_mut(&mut self) -> anyhow::Result<&mut Table> {
        let path = self.path.display().to_string();
        let hooks = self.doc.entry("hooks").or_insert_with(implicit_table);
        let hooks = hooks
            .as_table_mut()
            .with_context(|| format!("{path}: `hooks` is not a table"))?;
        let state = hooks.entry("state").or_insert_with(implicit_table);
        state
            .as_table_mut()
            .with_context(|| format!("{path}: `hooks.state` is not a table"))
    }

    fn trusted_hash(&self, key: &str) -> Option<&str> {
        self.state()?.get(key)?.get("trusted_hash")?.as_str()
    }

    /// Writes the document when it changed; the previous bytes go to `<file>.bak`.
    fn save(&self) -> anyhow::Result<bool> {
        let text = self.doc.to_string();
        if self.original.as_deref() == Some(text.as_str()) {
            return Ok(false);
        }
        if let Some(dir) = self.path.parent() {
            atomic::create_dir(dir, 0o700)?;
        }
        let mode = atomic::mode_of(&self.path).unwrap_or(0o600);
        if let Some(old) = &self.original {
            atomic::write(&backup_path(&self.path), old.as_bytes(), 0o600)?;
        }
        atomic::write(&self.path, text.as_bytes(), mode)?;
        Ok(true)
    }
}

fn implicit_table() -> Item {
    let mut t = Table::new();
    t.set_implicit(true);
    Item::Table(t)
}

impl HookTrust for CodexTrust {
    fn question(&self) -> String {
        "Codex runs a hook only once you trust it. Trust ovhook's hooks in Codex now \
         (recorded in its config.toml, as Codex's /hooks screen does)"
            .to_owned()
    }

    fn how_to(&self) -> String {
        "Codex will not run these hooks until you trust them: re-run with --trust, or start \
         `codex` and approve them in /hooks"
            .to_owned()
    }

    fn record(&self, home: &Path) -> anyhow::Result<Vec<String>> {
        let ours = installed(home)?;
        let mut cfg = ConfigDoc::read(home)?;
        let state = cfg.state_mut()?;
        for hook in &ours {
            let mut entry = Table::new();
            entry.insert("trusted_hash", toml_edit::value(hook.hash.as_str()));
            match state.get_mut(&hook.key).and_then(Item::as_table_mut) {
                // Keep anything else Codex keeps for the hook (`enabled`).
                Some(existing) => {
                    existing.insert("trusted_hash", toml_edit::value(hook.hash.as_str()));
                }
                None => {
                    state.insert(&hook.key, Item::Table(entry));
                }
            }
        }
        let wrote = cfg.save()?;
        let how = if wrote {
            match &cfg.original {
                Some(_) => format!(
                    "recorded in {} (backup {})",
                    cfg.path.display(),
                    backup_path(&cfg.path).display()
                ),
                None => format!("recorded in {} (created)", cfg.path.display()),
            }
        } else {
            format!("already recorded in {}", cfg.path.display())
        };
        Ok(vec![format!(
            "Codex trusts ovhook's {} hooks: {how}",
            ours.len()
        )])
    }

    fn forget(&self, home: &Path) -> anyhow::Result<usize> {
        let ours = installed(home)?;
        if !config_path(home).exists() {
            return Ok(0);
        }
        let mut cfg = ConfigDoc::read(home)?;
        let gone: Vec<&OurHook> = ours
            .iter()
            .filter(|h| cfg.trusted_hash(&h.key) == Some(h.hash.as_str()))
            .collect();
        if gone.is_empty() {
            return Ok(0);
        }
        let state = cfg.state_mut()?;
        for hook in &gone {
            state.remove(&hook.key);
        }
        if state.is_empty() {
            if let Some(hooks) = cfg.doc.get_mut("hooks").and_then(Item::as_table_mut) {
                hooks.remove("state");
                if hooks.is_empty() {
                    cfg.doc.remove("hooks");
                }
            }
        }
        cfg.save()?;
        Ok(gone.len())
    }

    fn files(&self, home: &Path) -> Vec<PathBuf> {
        vec![config_path(home)]
    }

    fn status(&self, home: &Path) -> anyhow::Result<TrustStatus> {
        status_of(home, &installed(home)?)
    }
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use crate::harness::codex::install_target::HOOKS;
    use crate::install::target::{Parts, PlaceFormat};

    #[test]
    fn event_names_are_snake_case() {
        assert_eq!(snake("SessionStart"), "session_start");
        assert_eq!(snake("UserPromptSubmit"), "user_prompt_submit");
        assert_eq!(snake("Stop"), "stop");
    }

    #[test]
    fn the_hash_is_over_key_sorted_compact_json() {
        let handler: Map<String, Value> = serde_json::from_str(
            r#"{"type":"command","command":"'/b/ovhook' --harness codex stop","timeout":10,
                "statusMessage":"s"}"#,
        )
        .expect("json");
        let expected_json = r#"{"event_name":"stop","hooks":[{"async":false,"command":"'/b/ovhook' --harness codex stop","statusMessage":"s","timeout":10,"type":"command"}]}"#;
        let digest = Sha256::digest(expected_json.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            trusted_hash("Stop", None, &handler),
            format!("sha256:{hex}")
        );
        // The matcher is part of the definition; a changed timeout is another hook.
        let with_matcher = trusted_hash("Stop", Some(&Value::from("Bash")), &handler);
        assert_ne!(with_matcher, trusted_hash("Stop", None, &handler));
        let mut longer = handler.clone();
        longer.insert("timeout".into(), Value::from(11));
        assert_ne!(
            trusted_hash("Stop", None, &longer),
            trusted_hash("Stop", None, &handler)
        );
    }

    fn install_hooks(home: &Path, foreign_first: bool) {
        let path = hooks_path(home);
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        let mut root = Map::new();
        if foreign_first {
            root = serde_json::from_str(
                r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/bin/true"}]}]}}"#,
            )
            .expect("json");
        }
        CODEX_HOOKS.merge(&mut root, Path::new("/opt/ovhook"), Parts::HOOKS);
        std::fs::write(&path, serde_json::to_vec_pretty(&root).expect("json")).expect("write");
    }

    #[test]
    fn keys_name_each_hook_by_its_place_in_the_file() {
        let tmp = tempfile::tempdir().expect("tmp");
        install_hooks(tmp.path(), true);
        let ours = installed(tmp.path()).expect("ours");
        assert_eq!(ours.len(), HOOKS.len(), "{ours:?}");
        let path = hooks_path(tmp.path()).display().to_string();
        let keys: Vec<&str> = ours.iter().map(|h| h.key.as_str()).collect();
        assert!(
            keys.contains(&format!("{path}:session_start:0:0").as_str()),
            "{keys:?}"
        );
        // The user's own Stop group comes first: ours is group 1.
        assert!(
            keys.contains(&format!("{path}:stop:1:0").as_str()),
            "{keys:?}"
        );
    }

    #[test]
    fn record_keeps_the_users_config_and_forget_gives_it_back() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path();
        install_hooks(home, false);
        let user = "# my settings\nmodel = \"gpt-5\"  # pinned\n\n[projects.\"/r\"]\ntrust_level = \"trusted\"\n\n[hooks.state.\"/elsewhere/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:00\"\n";
        std::fs::write(config_path(home), user).expect("write");
        assert_eq!(CODEX_TRUST.status(home).expect("status").trusted.len(), 0);

        CODEX_TRUST.record(home).expect("record");
        let text = std::fs::read_to_string(config_path(home)).expect("read");
        assert!(
            text.starts_with(user),
            "the user's bytes come first, untouched:\n{text}"
        );
        let status = CODEX_TRUST.status(home).expect("status");
        assert_eq!(status.trusted.len(), HOOKS.len(), "{status:?}");
        assert!(status.untrusted.is_empty(), "{status:?}");
        // Idempotent.
        CODEX_TRUST.record(home).expect("record");
        assert_eq!(
            std::fs::read_to_string(config_path(home)).expect("read"),
            text
        );

        assert_eq!(CODEX_TRUST.forget(home).expect("forget"), HOOKS.len());
        assert_eq!(
            std::fs::read_to_string(config_path(home)).expect("read"),
            user
        );
    }

    #[test]
    fn a_moved_binary_is_untrusted_until_recorded_again() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path();
        install_hooks(home, false);
        CODEX_TRUST.record(home).expect("record");
        let path = hooks_path(home);
        let mut doc = JsonDoc::read(&path, "x").expect("read");
        CODEX_HOOKS.merge(&mut doc.root, Path::new("/new/ovhook"), Parts::HOOKS);
        std::fs::write(&path, serde_json::to_vec(&doc.root).expect("json")).expect("write");
        let status = CODEX_TRUST.status(home).expect("status");
        assert_eq!(status.untrusted.len(), HOOKS.len(), "{status:?}");
        assert_eq!(status.untrusted[0], "session_start");
    }

    #[test]
    fn a_malformed_config_is_refused_untouched() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path();
        install_hooks(home, false);
        std::fs::write(config_path(home), "model = [unclosed\n").expect("write");
        let err = CODEX_TRUST.record(home).expect_err("refused");
        assert!(format!("{err:#}").contains("config.toml"), "{err:#}");
        assert_eq!(
            std::fs::read_to_string(config_path(home)).expect("read"),
            "model = [unclosed\n"
        );
    }
}
