//! The trust boundary for tuning keys: what a repository's own files may change.
//!
//! # Context
//!
//! `.openviking/config.json` and `config.local.json` arrive with whatever the user clones. They
//! may tune recall and capture, but a cloned repository must never make a hook slower or louder
//! than the user's machine-level settings (environment, registry, `ovcli.conf`, defaults) allow,
//! and never speak for another project: the peer its turns are filed under and recalled from is
//! the machine's choice (by default the repository's own git identity). So every tuning key has
//! one [`RepoRule`], and a repository value that goes the forbidden way is ignored with one
//! warning.
//!
//! # Design
//!
//! | rule | keys | a repository may |
//! |---|---|---|
//! | [`RepoRule::LowerOnly`] | time budgets, output caps, limits | only make them smaller |
//! | [`RepoRule::RaiseOnly`] | `network.backoff_ms`, `journal.retention_days` | only make it longer (fewer tries of a dead server; history kept longer) |
//! | [`RepoRule::OffOnly`] | the feature switches, `debug` | only turn them off |
//! | [`RepoRule::OnOnly`] | `bypass.session`, `recall.skip_control_prompts` | only turn it on (off, a hook would do more: lift a bypass, make a round trip) |
//! | [`RepoRule::NarrowOnly`] | `recall.peer_scope` | only narrow it: `actor` (this peer's memories) is narrower than `all` (every peer's) |
//! | [`RepoRule::MachineOnly`] | `peer.id` (and its aliases) | never set it: the peer chooses whose memories are recalled and where turns are filed |
//! | [`RepoRule::Free`] | recall shape, capture commit threshold, `peer.source` | set any valid value |
//!
//! `peer.source` stays free: each of its choices (`git`, `cwd`, `none`) derives the peer from the
//! checkout itself (its origin, its folder) or drops it, so none of them names another project.
//!
//! `capture.filters` and `recall.query_filters` from a repository add rules to the machine's
//! (never remove one, and never the built-in redaction, which no key controls).
//! `bypass.patterns` from a repository are added to the machine's (never replace them); that is
//! [`super::keys::assign`]'s `append`. Comparison is against the value the lower layers gave
//! (defaults, then `ovcli.conf`): repository files are folded right after them. For
//! `capture.max_length`, "no limit" is the largest value.

use super::keys::{self, Typed};
use super::{Config, PeerScope};

/// What a repository file may do with one tuning key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepoRule {
    /// Any valid value.
    Free,
    /// Only a value at most the current one.
    LowerOnly,
    /// Only a value at least the current one.
    RaiseOnly,
    /// Only `false`.
    OffOnly,
    /// Only `true`.
    OnOnly,
    /// Only a scope no wider than the current one ([`PeerScope::Actor`] is the narrowest).
    NarrowOnly,
    /// Never from a repository.
    MachineOnly,
}

/// The rule of a (canonical) tuning key.
pub fn repo_rule(key: &str) -> RepoRule {
    match key {
        "recall.max_items"
        | "recall.token_budget"
        | "recall.max_content_chars"
        | "capture.max_length"
        | "profile.token_budget"
        | "hooks.max_output_bytes"
        | "network.timeout_ms"
        | "network.connect_timeout_ms"
        | "network.recall_budget_ms" => RepoRule::LowerOnly,
        "network.backoff_ms" | "journal.retention_days" => RepoRule::RaiseOnly,
        "memory.enabled" | "recall.enabled" | "capture.enabled" | "capture.subagents"
        | "capture.tools" | "profile.enabled" | "debug" => RepoRule::OffOnly,
        "bypass.session" | "recall.skip_control_prompts" => RepoRule::OnOnly,
        "recall.peer_scope" => RepoRule::NarrowOnly,
        "peer.id" => RepoRule::MachineOnly,
        _ => RepoRule::Free,
    }
}

/// `Err(reason)` when a repository file may not set `key` to `value` over `cfg` (the layers
/// below it); the reason completes `ignored <key>: …`.
pub fn check_repo_value(cfg: &Config, key: &str, value: &Typed) -> Result<(), String> {
    match (repo_rule(key), value) {
        (RepoRule::Free, _) => Ok(()),
        (RepoRule::OffOnly, Typed::Bool(true)) if keys::current_bool(cfg, key) == Some(false) => {
            Err("true: a repository's config can turn this off, not back on".into())
        }
        (RepoRule::OffOnly, Typed::Str(s))
            if keys::current_switch(cfg, key).is_some_and(|cur| cur != s.as_str())
                && !off_value(key, s) =>
        {
            Err(format!(
                "{s:?}: a repository's config can turn this off, not choose another setting"
            ))
        }
        (RepoRule::OnOnly, Typed::Bool(false)) if keys::current_bool(cfg, key) == Some(true) => {
            Err("false: a repository's config can turn this on, not off".into())
        }
        (RepoRule::NarrowOnly, Typed::Str(s))
            if s != "actor" && cfg.recall.peer_scope == PeerScope::Actor =>
        {
            Err(format!(
                "{s:?}: a repository's config can narrow recall to this project's peer \
                 (\"actor\"), not widen it to every peer's memories"
            ))
        }
        (RepoRule::MachineOnly, _) => Err(
            "a repository's config cannot choose the peer its turns are filed under and \
             recalled from (set peer.id in ~/.openviking/ovcli.conf, \
             ~/.openviking/workspaces/<slot>.json or OPENVIKING_PEER_ID)"
                .into(),
        ),
        (RepoRule::LowerOnly, Typed::Int(v)) => match keys::current_int(cfg, key) {
            Some(cur) if effective(key, *v) > cur => Err(format!(
                "{v}: a repository's config can lower this below {}, not raise it",
                shown(key, cur)
            )),
            _ => Ok(()),
        },
        (RepoRule::RaiseOnly, Typed::Int(v)) => match keys::current_int(cfg, key) {
            Some(cur) if *v < cur => Err(format!(
                "{v}: a repository's config can raise this above {cur}, not lower it"
            )),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// `value` is the off member of the switch `key` (its first).
fn off_value(key: &str, value: &str) -> bool {
    matches!(keys::kind_of(key), Some(keys::Kind::Switch(options)) if options.first() == Some(&value))
}

/// `capture.max_length` 0 means "no limit": the largest value there is.
fn effective(key: &str, v: u64) -> u64 {
    if key == "capture.max_length" && v == 0 {
        u64::MAX
    } else {
        v
    }
}

fn shown(key: &str, cur: u64) -> String {
    if key == "capture.max_length" && cur == u64::MAX {
        "no limit".into()
    } else {
        cur.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::keys::{Kind, TUNING};

    /// Every tuning key, classified. A new key fails here until it is given its rule.
    const TABLE: &[(&str, RepoRule)] = &[
        ("memory.enabled", RepoRule::OffOnly),
        ("recall.enabled", RepoRule::OffOnly),
        ("recall.max_items", RepoRule::LowerOnly),
        ("recall.score_threshold", RepoRule::Free),
        ("recall.peer_scope", RepoRule::NarrowOnly),
        ("recall.token_budget", RepoRule::LowerOnly),
        ("recall.max_content_chars", RepoRule::LowerOnly),
        ("recall.prefer_abstract", RepoRule::Free),
        ("recall.skip_control_prompts", RepoRule::OnOnly),
        ("capture.enabled", RepoRule::OffOnly),
        ("capture.commit_token_threshold", RepoRule::Free),
        ("capture.max_length", RepoRule::LowerOnly),
        ("capture.subagents", RepoRule::OffOnly),
        ("capture.tools", RepoRule::OffOnly),
        ("capture.filters", RepoRule::Free),
        ("recall.query_filters", RepoRule::Free),
        ("profile.enabled", RepoRule::OffOnly),
        ("profile.token_budget", RepoRule::LowerOnly),
        ("peer.source", RepoRule::Free),
        ("peer.id", RepoRule::MachineOnly),
        ("hooks.max_output_bytes", RepoRule::LowerOnly),
        ("network.timeout_ms", RepoRule::LowerOnly),
        ("network.connect_timeout_ms", RepoRule::LowerOnly),
        ("network.backoff_ms", RepoRule::RaiseOnly),
        ("network.recall_budget_ms", RepoRule::LowerOnly),
        ("journal.retention_days", RepoRule::RaiseOnly),
        ("bypass.session", RepoRule::OnOnly),
        ("bypass.patterns", RepoRule::Free),
        ("debug", RepoRule::OffOnly),
    ];

    #[test]
    fn every_tuning_key_has_its_rule() {
        let keys: Vec<&str> = TUNING.iter().map(|(k, _, _)| *k).collect();
        let table: Vec<&str> = TABLE.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, table, "classify every tuning key in TABLE");
        for (key, rule) in TABLE {
            assert_eq!(repo_rule(key), *rule, "{key}");
        }
    }

    /// For each key: the forbidden direction is refused and the allowed one accepted, over
    /// the default configuration.
    #[test]
    fn each_rule_refuses_only_its_forbidden_direction() {
        let cfg = Config::default();
        for (key, kind, _) in TUNING {
            let rule = repo_rule(key);
            match (rule, kind) {
                (RepoRule::LowerOnly | RepoRule::RaiseOnly, Kind::Int { min, max }) => {
                    let cur = keys::current_int(&cfg, key).expect("an int key");
                    let higher = if cur == u64::MAX {
                        cur
                    } else {
                        (*max).min(cur + 1)
                    };
                    let lower = cur.saturating_sub(1).max(*min).max(1);
                    let (bad, good) = if rule == RepoRule::LowerOnly {
                        (higher, lower)
                    } else {
                        (lower, higher)
                    };
                    if bad != cur {
                        assert!(
                            check_repo_value(&cfg, key, &Typed::Int(bad)).is_err(),
                            "{key}"
                        );
                    }
                    assert!(
                        check_repo_value(&cfg, key, &Typed::Int(good)).is_ok(),
                        "{key}"
                    );
                }
                (RepoRule::OffOnly, Kind::Bool) => {
                    let mut c = cfg.clone();
                    keys::assign(&mut c, key, Typed::Bool(false), false);
                    assert!(
                        check_repo_value(&c, key, &Typed::Bool(true)).is_err(),
                        "{key}"
                    );
                    assert!(
                        check_repo_value(&cfg, key, &Typed::Bool(false)).is_ok(),
                        "{key}"
                    );
                }
                (RepoRule::OffOnly, Kind::Switch(options)) => {
                    let on = options.get(1).expect("an on member");
                    let off = options.first().expect("an off member");
                    assert!(
                        check_repo_value(&cfg, key, &Typed::Str((*on).into())).is_err(),
                        "{key}"
                    );
                    assert!(
                        check_repo_value(&cfg, key, &Typed::Str((*off).into())).is_ok(),
                        "{key}"
                    );
                    let mut c = cfg.clone();
                    keys::assign(&mut c, key, Typed::Str((*on).into()), false);
                    for other in options.iter().skip(2) {
                        assert!(
                            check_repo_value(&c, key, &Typed::Str((*other).into())).is_err(),
                            "{key}: {other}"
                        );
                    }
                    assert!(
                        check_repo_value(&c, key, &Typed::Str((*off).into())).is_ok(),
                        "{key}"
                    );
                }
                (RepoRule::OnOnly, Kind::Bool) => {
                    let mut c = cfg.clone();
                    keys::assign(&mut c, key, Typed::Bool(true), false);
                    assert!(
                        check_repo_value(&c, key, &Typed::Bool(false)).is_err(),
                        "{key}"
                    );
                    assert!(
                        check_repo_value(&cfg, key, &Typed::Bool(true)).is_ok(),
                        "{key}"
                    );
                }
                (RepoRule::NarrowOnly, Kind::Enum(_)) => {
                    let mut c = cfg.clone();
                    keys::assign(&mut c, key, Typed::Str("actor".into()), false);
                    assert!(
                        check_repo_value(&c, key, &Typed::Str("all".into())).is_err(),
                        "{key}"
                    );
                    assert!(
                        check_repo_value(&cfg, key, &Typed::Str("actor".into())).is_ok(),
                        "{key}"
                    );
                }
                (RepoRule::MachineOnly, _) => {
                    assert!(
                        check_repo_value(&cfg, key, &Typed::Str("x".into())).is_err(),
                        "{key}"
                    );
                }
                (RepoRule::Free, _) => {}
                other => panic!("{key}: rule {other:?} does not fit its kind"),
            }
        }
    }

    #[test]
    fn unlimited_capture_length_is_the_top() {
        let mut cfg = Config::default();
        assert!(check_repo_value(&cfg, "capture.max_length", &Typed::Int(0)).is_ok());
        cfg.capture.max_length = Some(100);
        assert!(check_repo_value(&cfg, "capture.max_length", &Typed::Int(0)).is_err());
        assert!(check_repo_value(&cfg, "capture.max_length", &Typed::Int(50)).is_ok());
    }
}
