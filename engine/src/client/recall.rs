//! Recall for UserPromptSubmit: the three tiers of `docs/anchor-behaviours.md` §2.3 under one deadline.
//!
//! ```text
//!  tier 1  POST /api/v1/search/search  mode=context, session_id, dedup_turns 5,  ──► block format A
//!          query_expansion off
//!    │ failure (400/422 "extra|mode|unexpected" ⇒ context_face_unsupported)
//!  tier 2  POST /api/v1/search/recall  quotas events/entities/preferences,        ──► block format A
//!          session_id, dedup_turns 5 (deprecated in 0.5.2: `Deprecation` + `Link` to tier 1's endpoint)
//!    │ failure
//!  tier 3  POST /api/v1/search/find ×2 (memories, skills) ► rank ► budget         ──► block format B
//! ```
//! A tier that answers but finds nothing ends the chain with no block (the anchor does not fall back).
//! With an actor peer (the current project), tiers 1 and 2 ask for `other_peer_penalty` and put
//! the current project's items first (`project_first.rs`).
//! Tier 1 is the successor OpenViking names for tier 2, and is always tried first (unless the
//! server rejected it within the last 6 h); a reply that says its endpoint is deprecated is
//! reported in [`RecallOutcome::deprecated`] (the hook logs it once a day).

use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::{fit_block, BlockLimit, Client, ClientError, Method};

mod project_first;
mod rank;
mod tier3;

use project_first::current_project_first;
use rank::OTHER_PROJECT_PENALTY;

const HEADER_A: &str = "<openviking-context>\nRelevant memory from OpenViking. Use the search/read MCP tools to expand URIs.\n";
const FOOTER: &str = "\n</openviking-context>";
/// Tiers 1 and 2 ask the server not to expand the query (`query_expansion`; its default is
/// `auto`). With `auto` and a live session holding messages, the server asks its query planner (a
/// model call) on every prompt before it searches: 4.4 s on the test server against 0.04 s with
/// `off`, on the agent's path, inside a recall budget of 5 s.
const QUERY_EXPANSION: &str = "off";
/// The latest turns of the session whose memories recall leaves out (`dedup_turns`; the
/// server's default is 0): what the agent has just seen is not injected again.
const DEDUP_TURNS: u32 = 5;

/// Inputs of [`Client::recall`] (ZCode config `recall*` keys, anchor defaults).
#[derive(Clone, Debug)]
pub struct RecallRequest {
    /// The cleaned prompt; it is trimmed before use.
    pub query: String,
    /// Wire session id (`zc-<id>`), sent to tier 1 for turn dedup.
    pub session_id: Option<String>,
    /// `OPENVIKING_RECALL_LIMIT` when configured. `None`: tier 1 sends no quotas, tiers 2-3 use 10.
    pub limit: Option<usize>,
    /// Minimum score (default 0.35).
    pub score_threshold: f64,
    /// Send `peer_scope:"actor"` (`OPENVIKING_RECALL_PEER_SCOPE=actor`).
    pub peer_scope_actor: bool,
    /// Tier-3 token budget (default 2000), at least 200.
    pub token_budget: usize,
    /// Tier-3 characters per item and tier-2 `max_chars` factor (default 500), at least 50 for tier 3.
    pub max_content_chars: usize,
    /// Tier 3 renders abstracts instead of reading leaf bodies (default true).
    pub prefer_abstract: bool,
    /// Skip tier 1 (the legacy marker says the server has no context face).
    pub skip_context_face: bool,
    /// Upper bound of the block's JSON-escaped length (leave room for the hook's JSON envelope).
    pub max_bytes: usize,
    /// Upper bound of the block's length in characters (a harness that counts them).
    pub max_chars: usize,
    /// Every tier shares this deadline; tiers not started by then are skipped.
    pub deadline: Instant,
}

impl RecallRequest {
    fn limit(&self) -> BlockLimit {
        BlockLimit {
            bytes: self.max_bytes,
            chars: self.max_chars,
        }
    }

    /// A request with the anchor's defaults and a deadline `budget` from now.
    pub fn new(query: impl Into<String>, budget: Duration) -> RecallRequest {
        RecallRequest {
            query: query.into(),
            session_id: None,
            limit: None,
            score_threshold: 0.35,
            peer_scope_actor: false,
            token_budget: 2000,
            max_content_chars: 500,
            prefer_abstract: true,
            skip_context_face: false,
            max_bytes: 30 * 1024,
            max_chars: usize::MAX,
            deadline: Instant::now() + budget,
        }
    }
}

/// What [`Client::recall`] found.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RecallOutcome {
    /// The complete `<openviking-context>…</openviking-context>` block, or `None` for no injection.
    pub block: Option<String>,
    /// The tier that decided (1, 2 or 3); 0 when no tier answered in time.
    pub tier: u8,
    /// Tier 1 answered 400/422 about unknown fields: the caller writes the legacy marker (6 h).
    pub context_face_unsupported: bool,
    /// A tier's endpoint answered that it is deprecated (tier 2's `search/recall` on
    /// OpenViking 0.5.2, whose successor is tier 1's `search/search` in context mode).
    pub deprecated: Option<super::Deprecated>,
    /// The URIs of the items in the block, in block order ([`project_of`] says whose).
    pub items: Vec<String>,
}

/// The project (peer) a memory belongs to: the segment after `/peers/` of its URI
/// (`viking://user/<u>/peers/github.com-acme-alpha/memories/…`); `None` for the user's own
/// memories, resources and skills.
pub fn project_of(uri: &str) -> Option<&str> {
    let (_, rest) = uri.split_once("/peers/")?;
    rest.split('/').next().filter(|p| !p.is_empty())
}

/// Each item's project, in order: its peer, `(this project)` after `current`'s, `-` for the
/// user's own memories, resources and skills. What the log and `ovhook doctor` show.
pub fn items_by_project(items: &[String], current: Option<&str>) -> String {
    items
        .iter()
        .map(|u| match project_of(u) {
            Some(p) if Some(p) == current => format!("{p} (this project)"),
            Some(p) => p.to_owned(),
            None => "-".to_owned(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `uri="…"` attributes of a recall block (tiers 1 and 2 name every item's URI), in order.
pub fn block_uris(rendered: &str) -> Vec<String> {
    rendered
        .split("uri=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// Anchor `scaleQuotas`: every key at least 1, then the largest deficit against `limit·w/Σw` first.
pub(crate) fn scale_quotas(
    limit: usize,
    weights: &[(&'static str, f64)],
) -> Vec<(&'static str, usize)> {
    let mut q: Vec<(&'static str, usize)> = weights.iter().map(|(k, _)| (*k, 1)).collect();
    if limit < weights.len() {
        return q;
    }
    let total: f64 = weights.iter().map(|(_, w)| w).sum();
    while q.iter().map(|(_, n)| n).sum::<usize>() < limit {
        let mut best: Option<(usize, f64)> = None;
        for (i, ((_, w), (_, n))) in weights.iter().zip(&q).enumerate() {
            let deficit = limit as f64 * w / total - *n as f64;
            if best.is_none_or(|(_, d)| deficit > d) {
                best = Some((i, deficit));
            }
        }
        match best.and_then(|(i, _)| q.get_mut(i)) {
            Some((_, n)) => *n += 1,
            None => break,
        }
    }
    q
}

fn quotas_json(q: &[(&'static str, usize)]) -> Value {
    Value::Object(
        q.iter()
            .map(|(k, n)| ((*k).to_owned(), json!(n)))
            .collect::<Map<_, _>>(),
    )
}

impl Client {
    /// Builds the recall block for a prompt (`docs/anchor-behaviours.md` §2.3), within `req.deadline`.
    ///
    /// Returns `Err` only when every tier that ran failed; the error is the last tier's.
    pub fn recall(&self, req: &RecallRequest) -> Result<RecallOutcome, ClientError> {
        let query = req.query.trim();
        let mut out = RecallOutcome::default();
        if query.is_empty() {
            return Ok(out);
        }
        let mut last_err = None;

        if !req.skip_context_face {
            if let Some(t) = self.budget(req.deadline) {
                match self.tier1(req, query, t, &mut out) {
                    Ok(block) => {
                        return Ok(RecallOutcome {
                            block,
                            tier: 1,
                            ..out
                        })
                    }
                    Err(e) => {
                        out.context_face_unsupported = is_unsupported_face(&e);
                        last_err = Some(e);
                    }
                }
            }
        }
        if self.budget(req.deadline).is_some() {
            match self.tier2(req, query, &mut out) {
                Ok(block) => {
                    return Ok(RecallOutcome {
                        block,
                        tier: 2,
                        ..out
                    })
                }
                Err(e) => last_err = Some(e),
            }
        }
        if self.budget(req.deadline).is_some() {
            match self.tier3(req, query, &mut out) {
                Ok(block) => {
                    return Ok(RecallOutcome {
                        block,
                        tier: 3,
                        ..out
                    })
                }
                Err(e) => last_err = Some(e),
            }
        }
        match last_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    fn tier1(
        &self,
        req: &RecallRequest,
        query: &str,
        t: Duration,
        out: &mut RecallOutcome,
    ) -> Result<Option<String>, ClientError> {
        let mut body = Map::new();
        body.insert("query".into(), json!(query));
        body.insert("mode".into(), json!("context"));
        body.insert("purpose".into(), json!("coding"));
        body.insert("score_threshold".into(), json!(req.score_threshold));
        body.insert("query_expansion".into(), json!(QUERY_EXPANSION));
        if let Some(limit) = req.limit {
            let w = [
                ("events", 1.0),
                ("entities", 2.0),
                ("preferences", 1.0),
                ("experiences", 1.0),
                ("resources", 3.0),
                ("skills", 2.0),
            ];
            body.insert("quotas".into(), quotas_json(&scale_quotas(limit, &w)));
        }
        if req.peer_scope_actor {
            body.insert("peer_scope".into(), json!("actor"));
        }
        if self.actor_peer.is_some() {
            body.insert("other_peer_penalty".into(), json!(OTHER_PROJECT_PENALTY));
        }
        if let Some(sid) = &req.session_id {
            body.insert("session_id".into(), json!(sid));
            body.insert("dedup_turns".into(), json!(DEDUP_TURNS));
        }
        let body = Value::Object(body);
        let r = self.call(
            Method::Post,
            "/api/v1/search/search",
            Some(&body),
            Some(t),
            None,
        )?;
        let rewrite = r
            .pointer("/stats/rewrite")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if rewrite.eq_ignore_ascii_case("no_relevant") {
            return Ok(None);
        }
        let text = |k: &str| {
            r.get(k)
                .and_then(Value::as_str)
                .map(str::trim)
                .unwrap_or_default()
                .to_owned()
        };
        let digest = text("digest");
        let injected = if digest.is_empty() {
            text("rendered")
        } else {
            digest
        };
        let injected = current_project_first(&injected, self.actor_peer.as_deref());
        out.items = block_uris(&injected);
        Ok(block_a(&injected, req.limit()))
    }

    fn tier2(
        &self,
        req: &RecallRequest,
        query: &str,
        out: &mut RecallOutcome,
    ) -> Result<Option<String>, ClientError> {
        let limit = req.limit.unwrap_or(10).max(1);
        let mut quotas = scale_quotas(
            limit,
            &[("events", 10.0), ("entities", 10.0), ("preferences", 3.0)],
        );
        quotas.push(("experiences", 0));
        let peer_scope = req.peer_scope_actor.then_some("actor");
        let mut body = json!({
            "query": query, "quotas": quotas_json(&quotas),
            "max_chars": (req.max_content_chars * limit).max(1000),
            "min_score": req.score_threshold, "render": true,
            "peer_scope": peer_scope, "query_expansion": QUERY_EXPANSION,
        });
        if let Some(o) = body.as_object_mut() {
            if peer_scope.is_none() {
                o.remove("peer_scope");
            }
            if self.actor_peer.is_some() {
                o.insert("other_peer_penalty".into(), json!(OTHER_PROJECT_PENALTY));
            }
            // As tier 1: the turns already in this session are not recalled again (the
            // server's default is 0).
            if let Some(sid) = &req.session_id {
                o.insert("session_id".into(), json!(sid));
                o.insert("dedup_turns".into(), json!(DEDUP_TURNS));
            }
        }
        let post = |body: &Value, t: Option<Duration>| {
            let bytes = serde_json::to_vec(body).map_err(|e| ClientError::Config(e.to_string()))?;
            self.exchange(Method::Post, "/api/v1/search/recall", Some(bytes), t, None)
        };
        let t = self.budget(req.deadline);
        let reply = match post(&body, t) {
            Err(e) if req.peer_scope_actor && matches!(e.status(), 400 | 422) => {
                if let Some(m) = body.as_object_mut() {
                    m.remove("peer_scope");
                }
                let t = self.budget(req.deadline).ok_or(e)?;
                post(&body, Some(t))?
            }
            other => other?,
        };
        out.deprecated = reply.deprecated;
        let r = reply.body;
        let rendered = r
            .get("rendered")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or_default();
        let rendered = current_project_first(rendered, self.actor_peer.as_deref());
        out.items = block_uris(&rendered);
        Ok(block_a(&rendered, req.limit()))
    }
}

fn block_a(injected: &str, limit: BlockLimit) -> Option<String> {
    if injected.is_empty() {
        return None;
    }
    fit_block(HEADER_A, injected, FOOTER, limit)
}

fn is_unsupported_face(e: &ClientError) -> bool {
    let ClientError::Http {
        status: 400 | 422,
        code,
        message,
        ..
    } = e
    else {
        return false;
    };
    let text = format!("{} {}", code.as_deref().unwrap_or_default(), message).to_lowercase();
    ["extra", "mode", "unexpected"]
        .iter()
        .any(|w| text.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(limit: usize, w: &[(&'static str, f64)]) -> Vec<usize> {
        scale_quotas(limit, w).into_iter().map(|(_, n)| n).collect()
    }

    const CODING: [(&str, f64); 6] = [
        ("events", 1.0),
        ("entities", 2.0),
        ("preferences", 1.0),
        ("experiences", 1.0),
        ("resources", 3.0),
        ("skills", 2.0),
    ];
    const V1: [(&str, f64); 3] = [("events", 10.0), ("entities", 10.0), ("preferences", 3.0)];

    #[test]
    fn quotas_match_the_anchor_tables() {
        assert_eq!(q(3, &CODING), [1, 1, 1, 1, 1, 1]);
        assert_eq!(q(6, &CODING), [1, 1, 1, 1, 1, 1]);
        assert_eq!(q(8, &CODING), [1, 2, 1, 1, 2, 1]);
        assert_eq!(q(10, &CODING), [1, 2, 1, 1, 3, 2]);
        assert_eq!(q(20, &CODING), [2, 4, 2, 2, 6, 4]);
        assert_eq!(q(1, &V1), [1, 1, 1]);
        assert_eq!(q(5, &V1), [2, 2, 1]);
        assert_eq!(q(6, &V1), [3, 2, 1]);
        assert_eq!(q(8, &V1), [4, 3, 1]);
        assert_eq!(q(10, &V1), [5, 4, 1]);
        assert_eq!(q(20, &V1), [9, 9, 2]);
    }

    #[test]
    fn unsupported_face_detection() {
        let e = ClientError::Http {
            status: 422,
            code: None,
            message: "Extra inputs are not permitted: mode".into(),
            retryable: false,
            trace_id: None,
        };
        assert!(is_unsupported_face(&e));
        let e = ClientError::Http {
            status: 400,
            code: None,
            message: "bad query".into(),
            retryable: false,
            trace_id: None,
        };
        assert!(!is_unsupported_face(&e));
    }

    #[test]
    fn the_project_of_a_memory_is_its_peer() {
        assert_eq!(
            project_of("viking://user/u/peers/github.com-acme-alpha/memories/preferences/t.md"),
            Some("github.com-acme-alpha")
        );
        assert_eq!(
            project_of("viking://user/u/memories/preferences/t.md"),
            None
        );
        assert_eq!(project_of("viking://user/u/peers/"), None);
        assert_eq!(
            block_uris(
                "<memory uri=\"viking://a\" type=\"x\">t</memory>\n<memory uri=\"viking://b\">"
            ),
            ["viking://a", "viking://b"]
        );
    }

    #[test]
    fn each_item_says_its_project() {
        let items = [
            "viking://user/u/peers/github.com-acme-alpha/memories/preferences/t.md".to_owned(),
            "viking://user/u/peers/github.com-acme-beta/memories/preferences/t.md".to_owned(),
            "viking://user/u/memories/profile.md".to_owned(),
        ];
        assert_eq!(
            items_by_project(&items, Some("github.com-acme-alpha")),
            "github.com-acme-alpha (this project), github.com-acme-beta, -"
        );
    }
}
