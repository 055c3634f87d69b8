//! The configuration: which sources were read, their warnings, the peer, whether memory is
//! on.

use ov_engine::config::{self, SourceStatus};

use super::{Check, Level};

/// The configuration's lines.
pub fn report(loaded: &config::Loaded) -> Vec<Check> {
    let used: Vec<String> = loaded
        .sources
        .iter()
        .filter(|s| s.status == SourceStatus::Loaded)
        .map(|s| s.source.to_string())
        .collect();
    let mut out = vec![Check::new(
        Level::Ok,
        "config sources",
        if used.is_empty() {
            "defaults only (no config file found)".to_owned()
        } else {
            used.join(", ")
        },
    )];
    for w in &loaded.warnings {
        out.push(Check::new(Level::Warn, "config", w.to_string()));
    }
    let c = &loaded.config;
    out.push(Check::new(
        Level::Ok,
        "config peer",
        match &c.actor_peer {
            Some(p) => format!(
                "{p} (peer.source {})",
                format!("{:?}", c.peer.source).to_lowercase()
            ),
            None => "none (no peer header)".to_owned(),
        },
    ));
    if !c.memory_enabled {
        out.push(Check::new(
            Level::Warn,
            "config",
            "memory.enabled is false: hooks do nothing",
        ));
    }
    out
}
