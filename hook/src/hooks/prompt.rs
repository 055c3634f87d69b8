//! UserPromptSubmit: journal the prompt, drop duplicates, inject recalled memories.

use ov_engine::event::{Event, HookKind};
use ov_journal::Durability;

use super::{journal, load_config, Invocation, Journaled};
use crate::harness::HookEvent;

/// How long a server that rejected the context face (tier 1) is assumed not to have it.
const CONTEXT_FACE_RETRY_MS: u64 = 6 * 3600 * 1000;

/// Handles a UserPromptSubmit; returns the output line, if any.
pub fn handle(inv: &Invocation) -> Option<String> {
    let cfg = load_config(&inv.cwd);
    let capture = inv.capture(&cfg);
    // Recall may run with capture off; not while paused, bypassed or with memory off.
    let active = cfg.memory_enabled && !inv.passes_through(&cfg) && capture.may_inject();
    let privacy = ov_engine::privacy::Policy::from_config(&cfg);
    let Journaled::Store(store) = inv.open_journaling_all(inv.receipt(
        HookKind::PromptSubmit,
        active.then_some(&privacy),
        &capture,
    )) else {
        return None;
    };
    if !active || !cfg.recall.enabled {
        return None;
    }
    // Only the user's own words are a recall query (wrappers hold URLs and paths), and only
    // what the privacy rule leaves of them: no private span or secret reaches the server.
    let words = ov_engine::text::user_words(inv.input.prompt.as_deref()?)?;
    let prompt = privacy.recall_query(&words, &mut ov_engine::privacy::Redactions::default())?;
    // A prompt that only steers the work under way has nothing to search: no fold, no
    // round trip.
    if cfg.recall.skip_control_prompts {
        if let Some(kind) = ov_engine::text::control::control_prompt(&prompt) {
            log::info!(
                "recall: skipped for a control prompt ({}) in session {}",
                kind.as_str(),
                inv.session_id
            );
            return None;
        }
    }
    let state = store.fold().ok()?.state;
    if state.last_prompt_is_duplicate() {
        return None;
    }
    let hash = xxhash_rust::xxh3::xxh3_64(prompt.as_bytes());
    // The harness's output cap is read only once something may be printed.
    if let Some(cached) = state.cached_recall(hash) {
        let block = cached.map(str::to_string);
        journal(
            &store,
            Event::RecallServed {
                turn_id: inv.input.turn_id.clone(),
                prompt_hash: hash,
                tier: 0,
                block: block.clone(),
                context_face_unsupported: false,
                cached: true,
            },
            Durability::Buffered,
        );
        return inv.harness.context_output(
            HookEvent::UserPromptSubmit,
            &block?,
            inv.output_cap(&cfg).bytes,
        );
    }
    let now = ov_engine::store::now_ms();
    let client = inv.client(&cfg, &state)?;
    let max = inv.output_cap(&cfg);
    let budget = cfg.network.recall_budget().min(inv.budget.network_left());
    let mut req = ov_engine::client::RecallRequest::new(prompt, budget);
    req.session_id = Some(inv.harness.remote_session_id(&inv.session_id));
    req.limit = Some(cfg.recall.max_items as usize);
    req.score_threshold = cfg.recall.score_threshold;
    req.peer_scope_actor = cfg.recall.peer_scope == ov_engine::config::PeerScope::Actor;
    req.token_budget = cfg.recall.token_budget as usize;
    req.max_content_chars = cfg.recall.max_content_chars as usize;
    req.prefer_abstract = cfg.recall.prefer_abstract;
    req.skip_context_face = state
        .context_face_unsupported_at_ms
        .is_some_and(|at| ov_engine::clock::open_since(at, CONTEXT_FACE_RETRY_MS, now));
    req.max_bytes = max.bytes.saturating_sub(256);
    req.max_chars = max.chars;
    match client.recall(&req) {
        Ok(outcome) => {
            inv.server_answered(&cfg);
            if let Some(d) = &outcome.deprecated {
                super::deprecation::notice_once_a_day(&inv.root, d, now);
            }
            if !outcome.items.is_empty() {
                log::info!(
                    "recall: tier {}, {} item(s) by project: {}",
                    outcome.tier,
                    outcome.items.len(),
                    ov_engine::client::items_by_project(&outcome.items, cfg.actor_peer.as_deref())
                );
            }
            journal(
                &store,
                Event::RecallServed {
                    turn_id: inv.input.turn_id.clone(),
                    prompt_hash: hash,
                    tier: outcome.tier,
                    block: outcome.block.clone(),
                    context_face_unsupported: outcome.context_face_unsupported,
                    cached: false,
                },
                Durability::Buffered,
            );
            inv.harness
                .context_output(HookEvent::UserPromptSubmit, &outcome.block?, max.bytes)
        }
        Err(e) => {
            inv.note_unreachable(&store, &e, &cfg);
            log::warn!("recall: {e}");
            None
        }
    }
}
