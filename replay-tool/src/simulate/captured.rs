//! What a session's journal holds after a run, read through the engine's fold.

use std::path::Path;

use ov_engine::projector::{MessageStatus, State};

use super::count::ServerMessage;

/// The engine's fold of `session`'s journal under `state_dir`; `None` when it has no readable
/// journal.
fn folded_state(state_dir: &Path, session: &str) -> Option<State> {
    let dir = ov_engine::paths::journal_dir(state_dir, session);
    if !ov_journal::is_journal(&dir) {
        return None;
    }
    crate::view::fold(&dir).ok().map(|f| f.state)
}

/// Turns still pending for `session` under `state_dir`: turns with a message planned in the
/// journal and not acknowledged (pending, in flight or in doubt; a message set aside for good
/// does not count). `None` when the session has no readable journal.
pub fn pending_turns(state_dir: &Path, session: &str) -> Option<Vec<String>> {
    folded_state(state_dir, session).map(|s| pending_turn_ids(&s))
}

/// The messages the journal of `session` holds as captured (planned, not set
/// aside), shaped like the server's messages so the same counting applies.
/// `None` when the session has no readable journal.
pub fn journal_messages(state_dir: &Path, session: &str) -> Option<Vec<ServerMessage>> {
    let state = folded_state(state_dir, session)?;
    Some(
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
            .collect(),
    )
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

/// How the damage in `session`'s journal shows after a run: damaged ranges a read finds now,
/// and ranges the engine recorded (`JournalDamaged`, which outlives a compaction that removes
/// the damaged segment).
pub fn journal_damage(state_dir: &Path, session: &str) -> (usize, usize) {
    let dir = ov_engine::paths::journal_dir(state_dir, session);
    if !ov_journal::is_journal(&dir) {
        return (0, 0);
    }
    let Ok(reader) = crate::view::open_reader(&dir) else {
        return (0, 0);
    };
    let ranges = reader.damage().len();
    let recorded = ov_engine::store::fold_reader(&reader)
        .state
        .problems
        .iter()
        .filter(|p| p.starts_with("journal: "))
        .count();
    (ranges, recorded)
}

/// The damage [`journal_damage`] counts, one line each: the ranges a read finds
/// (`segment <id> at <offset>, <len> bytes: <what>`), then the problems the engine recorded.
pub fn journal_damage_notes(state_dir: &Path, session: &str) -> Vec<String> {
    let dir = ov_engine::paths::journal_dir(state_dir, session);
    if !ov_journal::is_journal(&dir) {
        return Vec::new();
    }
    let Ok(reader) = crate::view::open_reader(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = reader
        .damage()
        .iter()
        .map(|d| {
            format!(
                "segment {} at {}, {} bytes: {}",
                d.segment, d.offset, d.len, d.kind
            )
        })
        .collect();
    out.extend(
        ov_engine::store::fold_reader(&reader)
            .state
            .problems
            .into_iter()
            .filter(|p| p.starts_with("journal: ")),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_root_with(name: &str, session: &str) -> tempfile::TempDir {
        let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/journals")
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

    #[test]
    fn pending_turns_counts_turns_not_acknowledged() {
        // Two pending messages of one turn.
        let root = state_root_with("unreachable", "sess_offline");
        assert_eq!(
            pending_turns(root.path(), "sess_offline").map(|t| t.len()),
            Some(1)
        );
        // One turn acknowledged, one in doubt.
        let root = state_root_with("in_doubt", "sess_doubt");
        assert_eq!(
            pending_turns(root.path(), "sess_doubt").map(|t| t.len()),
            Some(1)
        );
        // Set aside counts as settled.
        let root = state_root_with("set_aside", "sess_aside");
        assert_eq!(pending_turns(root.path(), "sess_aside"), Some(Vec::new()));
        assert_eq!(pending_turns(root.path(), "sess_none"), None);
    }
}
