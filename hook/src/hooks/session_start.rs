//! SessionStart: debounce, start a detached drain of unfinished work, inject
//! the user's OpenViking profile.

use ov_engine::event::{Event, HookKind};
use ov_journal::Durability;

use super::{journal, load_config, Invocation, Journaled};
use crate::harness::HookEvent;

/// Handles a SessionStart; returns the output line, if any.
pub fn handle(inv: &Invocation) -> Option<String> {
    let cfg = load_config(&inv.cwd);
    let paused = inv.paused(|| cfg.workspace.slot.clone()).is_some();
    let active = cfg.memory_enabled && !inv.passes_through(&cfg);
    let privacy = (active && !paused).then(|| ov_engine::privacy::Policy::from_config(&cfg));
    let mut events = inv.received_events(HookKind::SessionStart, privacy.as_ref());
    if active {
        // Before the drain below starts: it reads the file the payload names.
        events.extend(inv.transcript_named(HookEvent::SessionStart));
    }
    let Journaled::Store(store) = inv.open_journaling_all(events) else {
        return None;
    };
    if !active {
        return None;
    }
    let state = store.fold().ok()?.state;
    let source = inv.input.source.as_deref();
    if state.last_session_start_debounced(source) {
        return None;
    }
    if source == Some("resume") {
        // Resuming is no reason to commit this session: its drain only closes turns.
        let dir = ov_engine::ids::safe_part(&inv.session_id);
        crate::detach::spawn_self(&["drain", "--quiet", "--resumed", &dir]);
    } else {
        crate::detach::spawn_self(&["drain", "--quiet"]);
    }
    // Paused: other sessions' work may still be drained, but nothing is injected.
    if !cfg.profile.enabled || paused {
        return None;
    }
    let client = inv.client(&cfg, &state)?;
    let max = inv.output_cap(&cfg);
    let req = ov_engine::client::ProfileRequest {
        token_budget: cfg.profile.token_budget as usize,
        max_bytes: max.bytes.saturating_sub(256),
        max_chars: max.chars,
    };
    match client.profile(&req) {
        Ok(block) => {
            inv.server_answered(&cfg);
            let bytes = block.as_ref().map_or(0, |b| b.len() as u64);
            journal(&store, Event::ProfileServed { bytes }, Durability::Buffered);
            inv.harness
                .context_output(HookEvent::SessionStart, &block?, max.bytes)
        }
        Err(e) => {
            inv.note_unreachable(&store, &e, &cfg);
            log::warn!("profile: {e}");
            None
        }
    }
}
