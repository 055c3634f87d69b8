//! The journal section of `ovhook doctor`: per session, unsent, in-doubt and
//! set-aside work, hooks that stopped arriving (turns with UserPromptSubmit but
//! no Stop), records that could not be read, spill files set aside as damaged, and what the
//! privacy rule redacted (counts per kind, never the text).

use std::path::Path;

use ov_engine::store::{session_dirs, SessionStore};

use super::{Check, Level};

/// Hooks are "missing" only for turns older than this (a live turn has no Stop yet).
const STALE_TURN_MS: u64 = 10 * 60 * 1000;

/// Checks over every session journal under `state_root`; `current` is the project (peer) of
/// the directory doctor runs in.
pub fn report(state_root: &Path, current: Option<&str>) -> Vec<Check> {
    let dirs = session_dirs(state_root);
    if dirs.is_empty() {
        return vec![Check::new(
            Level::Ok,
            "journals",
            format!("none yet under {}", state_root.display()),
        )];
    }
    let now = ov_engine::store::now_ms();
    let mut out = Vec::new();
    let (mut pending_total, mut sessions_with_work) = (0usize, 0usize);
    for dir in &dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let folded = match SessionStore::open(dir).and_then(|s| s.fold()) {
            Ok(f) => f,
            Err(e) => {
                out.push(Check::new(
                    Level::Fail,
                    format!("journal {name}"),
                    e.to_string(),
                ));
                continue;
            }
        };
        let st = &folded.state;
        for aside in ov_engine::spill::set_aside(dir) {
            out.push(Check::new(
                Level::Warn,
                format!("journal {name}"),
                format!(
                    "spill file {} could not be read: its events are not in the journal (kept for inspection)",
                    aside.display()
                ),
            ));
        }
        for skipped in &folded.skipped {
            out.push(Check::new(
                Level::Warn,
                format!("journal {name}"),
                format!("record at {} skipped: {}", skipped.position, skipped.reason),
            ));
        }
        // The latest recall block of the session, by the project of each item.
        if let Some(block) = st.recall_cache.iter().rev().find_map(|(_, b)| b.as_deref()) {
            let items = ov_engine::client::block_uris(block);
            if !items.is_empty() {
                out.push(Check::new(
                    Level::Ok,
                    format!("recall {name}"),
                    format!(
                        "latest block, {} item(s) by project: {}",
                        items.len(),
                        ov_engine::client::items_by_project(&items, current)
                    ),
                ));
            }
        }
        let pending = st.outbox().len();
        let in_doubt: usize = st.sends.values().map(|s| s.keys.len()).sum();
        if pending + in_doubt > 0 {
            sessions_with_work += 1;
            pending_total += pending + in_doubt;
            let why = match (&st.backoff_reason, st.backing_off(now)) {
                (Some(r), true) => format!("; server unreachable: {r}"),
                _ => String::new(),
            };
            out.push(Check::new(
                Level::Warn,
                format!("session {name}"),
                format!(
                    "{pending} message(s) unsent, {in_doubt} in doubt{why} (run `ovhook drain`)"
                ),
            ));
        }
        for (key, rec) in st.set_aside() {
            if let ov_engine::projector::MessageStatus::SetAside { status, error } = &rec.status {
                out.push(Check::new(
                    Level::Warn,
                    format!("session {name}"),
                    format!("{key} set aside: {status}: {error}"),
                ));
            }
        }
        let uncaptured: Vec<&str> = st
            .turns_uncaptured()
            .into_iter()
            .filter(|t| {
                st.turns
                    .get(*t)
                    .is_some_and(|l| now.saturating_sub(l.last_at_ms) > STALE_TURN_MS)
            })
            .collect();
        if !uncaptured.is_empty() {
            out.push(Check::new(
                Level::Warn,
                format!("session {name}"),
                format!(
                    "{} turn(s) not captured: {} (last problem: {})",
                    uncaptured.len(),
                    uncaptured.join(", "),
                    st.problems.last().map_or("none recorded", String::as_str)
                ),
            ));
        }
        let missing: Vec<&str> = st
            .turns_missing_stop()
            .into_iter()
            .filter(|t| {
                st.turns
                    .get(*t)
                    .is_some_and(|l| now.saturating_sub(l.last_at_ms) > STALE_TURN_MS)
            })
            .collect();
        if !missing.is_empty() {
            out.push(Check::new(
                Level::Warn,
                format!("session {name}"),
                format!(
                    "{} turn(s) saw UserPromptSubmit but no Stop (Stop hook not firing?): {}",
                    missing.len(),
                    missing.join(", ")
                ),
            ));
        }
        if !st.redactions.is_empty() {
            out.push(Check::new(
                Level::Ok,
                format!("session {name}"),
                format!(
                    "{} item(s) redacted before they were journaled: {}",
                    st.redactions.total(),
                    st.redactions.summary()
                ),
            ));
        }
        if st.malformed_hooks > 0 {
            out.push(Check::new(
                Level::Warn,
                format!("session {name}"),
                format!("{} hook payload(s) were malformed", st.malformed_hooks),
            ));
        }
    }
    out.push(Check::new(
        Level::Ok,
        "journals",
        format!(
            "{} session(s); {pending_total} message(s) waiting in {sessions_with_work}",
            dirs.len()
        ),
    ));
    out
}
