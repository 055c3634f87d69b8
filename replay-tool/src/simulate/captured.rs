//! What a session's journal holds after a run, read once ([`read`]: its frames, damaged
//! ranges and the engine's fold) and asked of that one read.

use std::path::Path;

use ov_engine::projector::{MessageStatus, State};

use super::count::ServerMessage;
use crate::view::JournalView;

/// The journal of `session` under `state_dir`, read and folded once; `None` when it has no
/// readable journal.
pub fn read(state_dir: &Path, session: &str) -> Option<JournalView> {
    let dir = ov_engine::paths::journal_dir(state_dir, session);
    if !ov_journal::is_journal(&dir) {
        return None;
    }
    crate::view::read_journal(&dir).ok()
}

/// Turns still pending: turns with a message planned in the journal and not acknowledged
/// (pending, in flight or in doubt; a message set aside for good does not count), sorted.
pub fn pending_turns(journal: &JournalView) -> Vec<String> {
    pending_turn_ids(&journal.fold().state)
}

/// The messages the journal holds as captured (planned, not set aside), shaped like the
/// server's messages so the same counting applies.
pub fn journal_messages(journal: &JournalView) -> Vec<ServerMessage> {
    let state = &journal.fold().state;
    state
        .order
        .values()
        .filter_map(|k| state.messages.get(k))
        .filter(|r| !matches!(r.status, MessageStatus::SetAside { .. }))
        .map(|r| ServerMessage {
            role: r.role.as_str().to_string(),
            content: r.content.clone().unwrap_or_default(),
            turn_id: r.turn_id.clone(),
        })
        .collect()
}

/// Turns with a planned message that is neither acknowledged nor set aside, sorted.
fn pending_turn_ids(state: &State) -> Vec<String> {
    let mut turns = std::collections::BTreeSet::new();
    for r in state.messages.values() {
        if !r.status.is_settled() {
            turns.insert(r.turn_id.clone().unwrap_or_default());
        }
    }
    turns.into_iter().collect()
}

/// How the damage in a session's journal shows after a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Damage {
    /// Damaged ranges a read finds now.
    pub found: usize,
    /// Damage the engine recorded ([`State::damage_recorded`]: it outlives a compaction that
    /// removes the damaged segment).
    pub recorded: usize,
    /// One line each: the ranges found (`segment <id> at <offset>, <len> bytes: <what>`),
    /// then the damage recorded.
    pub notes: Vec<String>,
}

/// The damage of `journal` (none without a journal).
pub fn damage(journal: Option<&JournalView>) -> Damage {
    let Some(j) = journal else {
        return Damage::default();
    };
    let mut notes: Vec<String> = j
        .damage
        .iter()
        .map(|d| {
            format!(
                "segment {} at {}, {} bytes: {}",
                d.segment, d.offset, d.len, d.kind
            )
        })
        .collect();
    let recorded: Vec<&str> = j.fold().state.damage_recorded().collect();
    notes.extend(recorded.iter().map(|p| (*p).to_owned()));
    Damage {
        found: j.damage.len(),
        recorded: recorded.len(),
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_root_with(name: &str, session: &str) -> tempfile::TempDir {
        let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/journal-sessions")
            .join(name);
        let tmp = tempfile::tempdir().expect("tempdir");
        let to = ov_engine::paths::journal_dir(tmp.path(), session);
        std::fs::create_dir_all(&to).expect("mkdir");
        for e in std::fs::read_dir(golden).expect("golden") {
            let p = e.expect("entry").path();
            std::fs::copy(&p, to.join(p.file_name().expect("name"))).expect("copy");
        }
        tmp
    }

    fn pending(name: &str, session: &str) -> Option<usize> {
        let root = state_root_with(name, session);
        read(root.path(), session).map(|j| pending_turns(&j).len())
    }

    #[test]
    fn pending_turns_counts_turns_not_acknowledged() {
        // Two pending messages of one turn.
        assert_eq!(pending("unreachable", "sess_offline"), Some(1));
        // One turn acknowledged, one in doubt.
        assert_eq!(pending("in_doubt", "sess_doubt"), Some(1));
        // Set aside counts as settled.
        assert_eq!(pending("set_aside", "sess_aside"), Some(0));
        let root = state_root_with("set_aside", "sess_aside");
        assert!(read(root.path(), "sess_none").is_none());
    }

    /// A clean journal shows no damage; the damage the engine recorded is counted and told
    /// from the problem it journaled.
    #[test]
    fn damage_found_and_recorded() {
        let root = state_root_with("clean", "sess_clean");
        let clean = read(root.path(), "sess_clean");
        assert_eq!(damage(clean.as_ref()), Damage::default());
        assert_eq!(damage(None), Damage::default());
        let mut j = clean.expect("the clean journal");
        j.folded.state.apply(&ov_engine::event::Envelope {
            at_ms: 1,
            pid: 1,
            event: ov_engine::event::Event::JournalDamaged {
                segment: 0,
                offset: 32,
                len: 7,
                reason: "bad".into(),
            },
        });
        let d = damage(Some(&j));
        assert_eq!((d.found, d.recorded), (0, 1));
        assert_eq!(d.notes.len(), 1);
        assert!(d
            .notes
            .iter()
            .all(|n| n.contains("7 bytes unreadable at 0:32")));
    }
}
