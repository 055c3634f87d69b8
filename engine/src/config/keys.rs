//! The key table: file keys, their types and bounds, and the environment variables that set them.
//!
//! | file key | type | default | env |
//! |---|---|---|---|
//! | `memory.enabled` | bool | true | `OPENVIKING_MEMORY_ENABLED` |
//! | `recall.enabled` | bool | true | `OPENVIKING_AUTO_RECALL` |
//! | `recall.max_items` | int ≥ 1 | 10 | `OPENVIKING_RECALL_LIMIT` |
//! | `recall.score_threshold` | number 0..=1 | 0.35 | `OPENVIKING_SCORE_THRESHOLD` |
//! | `recall.peer_scope` | `all`\|`actor` | all | `OPENVIKING_RECALL_PEER_SCOPE` |
//! | `recall.token_budget` | int ≥ 200 | 2000 | `OPENVIKING_RECALL_TOKEN_BUDGET` |
//! | `recall.max_content_chars` | int ≥ 50 | 500 | `OPENVIKING_RECALL_MAX_CONTENT_CHARS` |
//! | `recall.prefer_abstract` | bool | true | `OPENVIKING_RECALL_PREFER_ABSTRACT` |
//! | `recall.skip_control_prompts` | bool | true | `OPENVIKING_RECALL_SKIP_CONTROL_PROMPTS` |
//! | `capture.enabled` | bool | true | `OPENVIKING_AUTO_CAPTURE` |
//! | `capture.commit_token_threshold` | int ≥ 0 | 2000 | `OPENVIKING_COMMIT_TOKEN_THRESHOLD` |
//! | `capture.max_length` | int ≥ 0 (0 = unlimited) | unlimited | `OPENVIKING_CAPTURE_MAX_LENGTH` |
//! | `capture.subagents` | `skip`\|`separate`\|`inline` (a boolean: `true` = `separate`, `false` = `skip`) | skip | `OPENVIKING_CAPTURE_SUBAGENTS` |
//! | `capture.tools` | bool | false | `OPENVIKING_CAPTURE_TOOLS` |
//! | `capture.filters` (alias `captureFilters`, `plugin.captureFilters`, `plugin.<agent>.captureFilters`) | rules (or one comma-separated string) | [] | `OPENVIKING_CAPTURE_FILTERS` |
//! | `recall.query_filters` (alias `recallQueryFilters`, `plugin.recallQueryFilters`, `plugin.<agent>.recallQueryFilters`) | rules (or one comma-separated string) | [] | `OPENVIKING_RECALL_QUERY_FILTERS` |
//! | `profile.enabled` | bool | true | `OPENVIKING_PROFILE_ENABLED` |
//! | `profile.token_budget` | int ≥ 500 | 6000 | `OPENVIKING_PROFILE_TOKEN_BUDGET` |
//! | `peer.source` | `git`\|`cwd`\|`none` | git | `OPENVIKING_PEER_SOURCE` (`OPENVIKING_WORKSPACE_PEER=false` → `none`) |
//! | `peer.id` (alias `actor_peer_id`, `peer_id`) | string | - | `OPENVIKING_PEER_ID` |
//! | `hooks.max_output_bytes` | int ≥ 1024 | 32768 | `OPENVIKING_MAX_OUTPUT_BYTES` |
//! | `network.timeout_ms` | int ≥ 100 | 8000 | `OPENVIKING_TIMEOUT_MS` |
//! | `network.connect_timeout_ms` | int ≥ 10 | 1000 | `OPENVIKING_CONNECT_TIMEOUT_MS` |
//! | `network.backoff_ms` | int 0 to 600000 (10 min, [`crate::clock::MAX_BACKOFF_MS`]) | 30000 | `OPENVIKING_BACKOFF_MS` |
//! | `network.recall_budget_ms` | int ≥ 100 | 5000 | `OPENVIKING_RECALL_BUDGET_MS` |
//! | `journal.retention_days` | int 1..=36500 | 14 | `OPENVIKING_JOURNAL_RETENTION_DAYS` |
//! | `bypass.session` | bool | false | `OPENVIKING_BYPASS_SESSION` |
//! | `bypass.patterns` | strings (or one comma-separated string) | [] | `OPENVIKING_BYPASS_SESSION_PATTERNS` |
//! | `debug` | bool | false | `OPENVIKING_DEBUG` |
//!
//! Credentials and destinations (never from a repository file):
//!
//! | file key (aliases) | env (first wins) |
//! |---|---|
//! | `url` (`base_url`, `server.url`) | `OPENVIKING_URL`, `OPENVIKING_BASE_URL` |
//! | `api_key` (`server.api_key`) | `OPENVIKING_BEARER_TOKEN`, `OPENVIKING_API_KEY` |
//! | `account` (`account_id`, `server.account`) | `OPENVIKING_ACCOUNT` |
//! | `user` (`user_id`, `server.user`) | `OPENVIKING_USER` |
//! | `mcp_url` (`mcp.url`) | `OPENVIKING_MCP_URL` |
//!
//! `url` unset everywhere means OpenViking's default `http://127.0.0.1:1933`; `url` = `off` (or
//! `none`) means no server at all, journal only.
//!
//! The two filter lists take OpenViking's plugin rule syntax ([`crate::privacy::rules`]); rules
//! from every source are kept, in the order ovcli.conf, repository files, registry,
//! environment (a source adds rules, never removes another's). `<agent>` is `claude_code` or
//! `codex`, the sections OpenViking's own plugins read.
//!
//! Environment values: empty = unset. Booleans are false for `0`, `false`, `no`, `off` (any
//! case) and true otherwise. A number that does not parse is ignored with a warning; one out of
//! bounds is clamped with a warning. `OPENVIKING_CREDENTIAL_SOURCE=env` ignores the files'
//! credentials, `=cli` (or `ovcli`, `file`, `config`) ignores the environment's.

use serde_json::Value;

use super::{Config, PeerScope, PeerSource};

/// The type of a tuning key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// JSON boolean.
    Bool,
    /// Non-negative integer within `min..=max`.
    Int {
        /// Lower bound (values below are clamped).
        min: u64,
        /// Upper bound (values above are clamped).
        max: u64,
    },
    /// Number within `min..=max`.
    Float {
        /// Lower bound.
        min: f64,
        /// Upper bound.
        max: f64,
    },
    /// One of the listed strings.
    Enum(&'static [&'static str]),
    /// One of the listed strings, the first meaning off; a boolean (JSON, or an environment
    /// value such as `1` or `off`) is the second when true and the first when false (a key
    /// that was a boolean before it had more choices).
    Switch(&'static [&'static str]),
    /// A non-empty string.
    Str,
    /// A list of strings.
    List,
}

const U32: u64 = u32::MAX as u64;

/// Every tuning key: `(file key, kind, environment variable)`.
pub const TUNING: &[(&str, Kind, &str)] = &[
    ("memory.enabled", Kind::Bool, "OPENVIKING_MEMORY_ENABLED"),
    ("recall.enabled", Kind::Bool, "OPENVIKING_AUTO_RECALL"),
    (
        "recall.max_items",
        Kind::Int { min: 1, max: 1000 },
        "OPENVIKING_RECALL_LIMIT",
    ),
    (
        "recall.score_threshold",
        Kind::Float { min: 0.0, max: 1.0 },
        "OPENVIKING_SCORE_THRESHOLD",
    ),
    (
        "recall.peer_scope",
        Kind::Enum(&["all", "actor"]),
        "OPENVIKING_RECALL_PEER_SCOPE",
    ),
    (
        "recall.token_budget",
        Kind::Int { min: 200, max: U32 },
        "OPENVIKING_RECALL_TOKEN_BUDGET",
    ),
    (
        "recall.max_content_chars",
        Kind::Int { min: 50, max: U32 },
        "OPENVIKING_RECALL_MAX_CONTENT_CHARS",
    ),
    (
        "recall.prefer_abstract",
        Kind::Bool,
        "OPENVIKING_RECALL_PREFER_ABSTRACT",
    ),
    (
        "recall.skip_control_prompts",
        Kind::Bool,
        "OPENVIKING_RECALL_SKIP_CONTROL_PROMPTS",
    ),
    ("capture.enabled", Kind::Bool, "OPENVIKING_AUTO_CAPTURE"),
    (
        "capture.commit_token_threshold",
        Kind::Int {
            min: 0,
            max: u64::MAX,
        },
        "OPENVIKING_COMMIT_TOKEN_THRESHOLD",
    ),
    (
        "capture.max_length",
        Kind::Int { min: 0, max: U32 },
        "OPENVIKING_CAPTURE_MAX_LENGTH",
    ),
    (
        "capture.subagents",
        Kind::Switch(crate::subagent::SubagentCapture::NAMES),
        "OPENVIKING_CAPTURE_SUBAGENTS",
    ),
    ("capture.tools", Kind::Bool, "OPENVIKING_CAPTURE_TOOLS"),
    ("capture.filters", Kind::List, "OPENVIKING_CAPTURE_FILTERS"),
    (
        "recall.query_filters",
        Kind::List,
        "OPENVIKING_RECALL_QUERY_FILTERS",
    ),
    ("profile.enabled", Kind::Bool, "OPENVIKING_PROFILE_ENABLED"),
    (
        "profile.token_budget",
        Kind::Int { min: 500, max: U32 },
        "OPENVIKING_PROFILE_TOKEN_BUDGET",
    ),
    (
        "peer.source",
        Kind::Enum(&["git", "cwd", "none"]),
        "OPENVIKING_PEER_SOURCE",
    ),
    ("peer.id", Kind::Str, "OPENVIKING_PEER_ID"),
    (
        "hooks.max_output_bytes",
        Kind::Int {
            min: 1024,
            max: U32,
        },
        "OPENVIKING_MAX_OUTPUT_BYTES",
    ),
    (
        "network.timeout_ms",
        Kind::Int {
            min: 100,
            max: 600_000,
        },
        "OPENVIKING_TIMEOUT_MS",
    ),
    (
        "network.connect_timeout_ms",
        Kind::Int {
            min: 10,
            max: 600_000,
        },
        "OPENVIKING_CONNECT_TIMEOUT_MS",
    ),
    (
        "network.backoff_ms",
        Kind::Int {
            min: 0,
            max: crate::clock::MAX_BACKOFF_MS,
        },
        "OPENVIKING_BACKOFF_MS",
    ),
    (
        "network.recall_budget_ms",
        Kind::Int {
            min: 100,
            max: 600_000,
        },
        "OPENVIKING_RECALL_BUDGET_MS",
    ),
    (
        "journal.retention_days",
        Kind::Int {
            min: 1,
            max: 36_500,
        },
        "OPENVIKING_JOURNAL_RETENTION_DAYS",
    ),
    ("bypass.session", Kind::Bool, "OPENVIKING_BYPASS_SESSION"),
    (
        "bypass.patterns",
        Kind::List,
        "OPENVIKING_BYPASS_SESSION_PATTERNS",
    ),
    ("debug", Kind::Bool, "OPENVIKING_DEBUG"),
];

/// Aliases accepted in files, mapped to their canonical key.
pub const ALIASES: &[(&str, &str)] = &[
    ("actor_peer_id", "peer.id"),
    ("peer_id", "peer.id"),
    ("base_url", "url"),
    ("server.url", "url"),
    ("server.api_key", "api_key"),
    ("account_id", "account"),
    ("server.account", "account"),
    ("user_id", "user"),
    ("server.user", "user"),
    ("mcp.url", "mcp_url"),
    ("captureFilters", "capture.filters"),
    ("plugin.captureFilters", "capture.filters"),
    ("plugin.claude_code.captureFilters", "capture.filters"),
    ("plugin.codex.captureFilters", "capture.filters"),
    ("recallQueryFilters", "recall.query_filters"),
    ("plugin.recallQueryFilters", "recall.query_filters"),
    (
        "plugin.claude_code.recallQueryFilters",
        "recall.query_filters",
    ),
    ("plugin.codex.recallQueryFilters", "recall.query_filters"),
];

/// The credential and destination keys (canonical names).
pub const CREDENTIALS: &[&str] = &["url", "api_key", "account", "user", "mcp_url"];

/// Environment variables for the credential keys, first non-empty wins.
pub const CREDENTIAL_ENV: &[(&str, &[&str])] = &[
    ("url", &["OPENVIKING_URL", "OPENVIKING_BASE_URL"]),
    (
        "api_key",
        &["OPENVIKING_BEARER_TOKEN", "OPENVIKING_API_KEY"],
    ),
    ("account", &["OPENVIKING_ACCOUNT"]),
    ("user", &["OPENVIKING_USER"]),
    ("mcp_url", &["OPENVIKING_MCP_URL"]),
];

/// The canonical name of a file key (aliases resolved).
pub fn canonical(key: &str) -> &str {
    ALIASES
        .iter()
        .find(|(a, _)| *a == key)
        .map(|(_, c)| *c)
        .unwrap_or(key)
}

/// True when `key` (canonical) names a credential or destination, including anything under
/// `server.` or `mcp.`.
pub fn is_credential(key: &str) -> bool {
    CREDENTIALS.contains(&key) || key.starts_with("server.") || key.starts_with("mcp.")
}

/// The kind of a tuning key.
pub fn kind_of(key: &str) -> Option<Kind> {
    TUNING
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, kind, _)| *kind)
}

/// True when `key` is a leaf: a tuning key, a credential or an alias (nested objects stop there).
pub fn is_leaf(key: &str) -> bool {
    let c = canonical(key);
    kind_of(c).is_some() || CREDENTIALS.contains(&c)
}

/// A value checked against its [`Kind`].
#[derive(Debug, Clone, PartialEq)]
pub enum Typed {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(u64),
    /// A number.
    Float(f64),
    /// A string (enum member or free string).
    Str(String),
    /// A list of strings.
    List(Vec<String>),
}

/// Result of typing a value: the value, plus a note when it was clamped.
pub type TypedResult = Result<(Typed, Option<String>), String>;

fn clamp_int(v: u64, min: u64, max: u64) -> (Typed, Option<String>) {
    let c = v.clamp(min, max);
    let note = (c != v).then(|| format!("{v} is out of range {min}..={max}, using {c}"));
    (Typed::Int(c), note)
}

fn clamp_float(v: f64, min: f64, max: f64) -> (Typed, Option<String>) {
    let c = v.clamp(min, max);
    let note = (c != v).then(|| format!("{v} is out of range {min}..={max}, using {c}"));
    (Typed::Float(c), note)
}

/// Types a JSON value from a file.
pub fn from_json(kind: Kind, v: &Value) -> TypedResult {
    match (kind, v) {
        (Kind::Bool, Value::Bool(b)) => Ok((Typed::Bool(*b), None)),
        (Kind::Bool, _) => Err(format!("expected true or false, found {}", describe(v))),
        (Kind::Int { min, max }, Value::Number(n)) => match n.as_u64() {
            Some(i) => Ok(clamp_int(i, min, max)),
            None if n.as_i64().is_some() => Ok(clamp_int(0, min, max)),
            None => Err(format!("expected a whole number, found {n}")),
        },
        (Kind::Int { .. }, _) => Err(format!("expected a whole number, found {}", describe(v))),
        (Kind::Float { min, max }, Value::Number(n)) => match n.as_f64() {
            Some(f) => Ok(clamp_float(f, min, max)),
            None => Err(format!("expected a number, found {n}")),
        },
        (Kind::Float { .. }, _) => Err(format!("expected a number, found {}", describe(v))),
        (Kind::Enum(options) | Kind::Switch(options), Value::String(s)) => enum_value(options, s),
        (Kind::Switch(options), Value::Bool(b)) => Ok((switch_value(options, *b), None)),
        (Kind::Switch(options), _) => Err(format!(
            "expected one of {} (or true, false), found {}",
            options.join("|"),
            describe(v)
        )),
        (Kind::Enum(options), _) => Err(format!(
            "expected one of {}, found {}",
            options.join("|"),
            describe(v)
        )),
        (Kind::Str, Value::String(s)) => Ok((Typed::Str(s.trim().to_owned()), None)),
        (Kind::Str, _) => Err(format!("expected a string, found {}", describe(v))),
        (Kind::List, Value::String(s)) => Ok((Typed::List(split_list(s)), None)),
        (Kind::List, Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(s) if !s.trim().is_empty() => out.push(s.trim().to_owned()),
                    Value::String(_) => {}
                    other => return Err(format!("expected strings, found {}", describe(other))),
                }
            }
            Ok((Typed::List(out), None))
        }
        (Kind::List, _) => Err(format!("expected a list of strings, found {}", describe(v))),
    }
}

/// Types an environment value (already known to be non-empty).
pub fn from_env(kind: Kind, raw: &str) -> TypedResult {
    let s = raw.trim();
    match kind {
        Kind::Bool => Ok((Typed::Bool(env_bool(s)), None)),
        Kind::Int { min, max } => match s.parse::<u64>() {
            Ok(i) => Ok(clamp_int(i, min, max)),
            Err(_) => match s.parse::<f64>() {
                Ok(f) if f.is_finite() => Ok(clamp_int(f.max(0.0).floor() as u64, min, max)),
                _ => Err(format!("{s:?} is not a number")),
            },
        },
        Kind::Float { min, max } => match s.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(clamp_float(f, min, max)),
            _ => Err(format!("{s:?} is not a number")),
        },
        Kind::Enum(options) => enum_value(options, s),
        Kind::Switch(options) => enum_value(options, s).or_else(|e| {
            let lower = s.to_ascii_lowercase();
            match lower.as_str() {
                "1" | "true" | "yes" | "on" => Ok((switch_value(options, true), None)),
                "0" | "false" | "no" | "off" => Ok((switch_value(options, false), None)),
                _ => Err(e),
            }
        }),
        Kind::Str => Ok((Typed::Str(s.to_owned()), None)),
        Kind::List => Ok((Typed::List(split_list(s)), None)),
    }
}

/// The anchor's `envBool`: false iff `0`, `false`, `no`, `off` (trimmed, any case).
pub fn env_bool(s: &str) -> bool {
    !matches!(
        s.trim().to_ascii_lowercase().as_str(),
        "0" | "false" | "no" | "off"
    )
}

/// A [`Kind::Switch`]'s member for a boolean: the second when true, the first when false.
fn switch_value(options: &[&str], on: bool) -> Typed {
    let pick = if on { options.get(1) } else { options.first() };
    Typed::Str(pick.copied().unwrap_or_default().to_owned())
}

fn enum_value(options: &[&str], s: &str) -> TypedResult {
    let lower = s.trim().to_ascii_lowercase();
    if options.contains(&lower.as_str()) {
        Ok((Typed::Str(lower), None))
    } else {
        Err(format!(
            "expected one of {}, found {s:?}",
            options.join("|")
        ))
    }
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// The current value of a boolean key.
pub fn current_bool(cfg: &Config, key: &str) -> Option<bool> {
    Some(match key {
        "memory.enabled" => cfg.memory_enabled,
        "recall.enabled" => cfg.recall.enabled,
        "capture.enabled" => cfg.capture.enabled,
        "capture.tools" => cfg.capture.tools,
        "profile.enabled" => cfg.profile.enabled,
        "recall.prefer_abstract" => cfg.recall.prefer_abstract,
        "recall.skip_control_prompts" => cfg.recall.skip_control_prompts,
        "bypass.session" => cfg.bypass.session,
        "debug" => cfg.debug,
        _ => return None,
    })
}

/// The current value of a [`Kind::Switch`] key.
pub fn current_switch(cfg: &Config, key: &str) -> Option<&'static str> {
    Some(match key {
        "capture.subagents" => cfg.capture.subagents.name(),
        _ => return None,
    })
}

/// The current value of an integer key; `capture.max_length`'s "no limit" is `u64::MAX`.
pub fn current_int(cfg: &Config, key: &str) -> Option<u64> {
    let wide = |v: usize| u64::try_from(v).unwrap_or(u64::MAX);
    Some(match key {
        "recall.max_items" => u64::from(cfg.recall.max_items),
        "recall.token_budget" => u64::from(cfg.recall.token_budget),
        "recall.max_content_chars" => u64::from(cfg.recall.max_content_chars),
        "capture.commit_token_threshold" => cfg.capture.commit_token_threshold,
        "capture.max_length" => cfg.capture.max_length.map_or(u64::MAX, wide),
        "profile.token_budget" => u64::from(cfg.profile.token_budget),
        "hooks.max_output_bytes" => wide(cfg.hooks.max_output_bytes),
        "network.timeout_ms" => cfg.network.timeout_ms,
        "network.connect_timeout_ms" => cfg.network.connect_timeout_ms,
        "network.backoff_ms" => cfg.network.backoff_ms,
        "network.recall_budget_ms" => cfg.network.recall_budget_ms,
        "journal.retention_days" => cfg.journal.retention_days,
        _ => return None,
    })
}

fn as_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn as_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// Sets a tuning key. `append` adds to a list instead of replacing it.
pub fn assign(cfg: &mut Config, key: &str, value: Typed, append: bool) {
    match (key, value) {
        ("memory.enabled", Typed::Bool(b)) => cfg.memory_enabled = b,
        ("recall.enabled", Typed::Bool(b)) => cfg.recall.enabled = b,
        ("recall.max_items", Typed::Int(i)) => cfg.recall.max_items = as_u32(i),
        ("recall.score_threshold", Typed::Float(f)) => cfg.recall.score_threshold = f,
        ("recall.peer_scope", Typed::Str(s)) => {
            cfg.recall.peer_scope = if s == "actor" {
                PeerScope::Actor
            } else {
                PeerScope::All
            }
        }
        ("recall.token_budget", Typed::Int(i)) => cfg.recall.token_budget = as_u32(i),
        ("recall.max_content_chars", Typed::Int(i)) => cfg.recall.max_content_chars = as_u32(i),
        ("recall.prefer_abstract", Typed::Bool(b)) => cfg.recall.prefer_abstract = b,
        ("recall.skip_control_prompts", Typed::Bool(b)) => cfg.recall.skip_control_prompts = b,
        ("capture.enabled", Typed::Bool(b)) => cfg.capture.enabled = b,
        ("capture.tools", Typed::Bool(b)) => cfg.capture.tools = b,
        ("capture.subagents", Typed::Str(s)) => {
            cfg.capture.subagents = crate::subagent::SubagentCapture::from_name(&s)
        }
        ("capture.commit_token_threshold", Typed::Int(i)) => cfg.capture.commit_token_threshold = i,
        ("capture.max_length", Typed::Int(i)) => {
            cfg.capture.max_length = (i > 0).then(|| as_usize(i))
        }
        ("profile.enabled", Typed::Bool(b)) => cfg.profile.enabled = b,
        ("profile.token_budget", Typed::Int(i)) => cfg.profile.token_budget = as_u32(i),
        ("peer.source", Typed::Str(s)) => {
            cfg.peer.source = match s.as_str() {
                "cwd" => PeerSource::Cwd,
                "none" => PeerSource::None,
                _ => PeerSource::Git,
            }
        }
        ("peer.id", Typed::Str(s)) => cfg.peer.id = (!s.is_empty()).then_some(s),
        ("hooks.max_output_bytes", Typed::Int(i)) => cfg.hooks.max_output_bytes = as_usize(i),
        ("network.timeout_ms", Typed::Int(i)) => cfg.network.timeout_ms = i,
        ("journal.retention_days", Typed::Int(i)) => cfg.journal.retention_days = i,
        ("network.connect_timeout_ms", Typed::Int(i)) => cfg.network.connect_timeout_ms = i,
        ("network.backoff_ms", Typed::Int(i)) => cfg.network.backoff_ms = i,
        ("network.recall_budget_ms", Typed::Int(i)) => cfg.network.recall_budget_ms = i,
        ("bypass.session", Typed::Bool(b)) => cfg.bypass.session = b,
        ("bypass.patterns", Typed::List(l)) => {
            if append {
                for p in l {
                    if !cfg.bypass.patterns.contains(&p) {
                        cfg.bypass.patterns.push(p);
                    }
                }
            } else {
                cfg.bypass.patterns = l;
            }
        }
        // Every source adds rules; none removes another's.
        ("capture.filters", Typed::List(l)) => add_all(&mut cfg.capture.filters, l),
        ("recall.query_filters", Typed::List(l)) => add_all(&mut cfg.recall.query_filters, l),
        ("debug", Typed::Bool(b)) => cfg.debug = b,
        _ => {}
    }
}

fn add_all(list: &mut Vec<String>, more: Vec<String>) {
    for r in more {
        if !list.contains(&r) {
            list.push(r);
        }
    }
}
