//! Recall for UserPromptSubmit: the three tiers of `docs/anchor-behaviours.md` §2.3 under one deadline.
//!
//! ```text
//!  tier 1  POST /api/v1/search/search  mode=context, session_id, dedup_turns 5   ──► block format A
//!    │ failure (400/422 "extra|mode|unexpected" ⇒ context_face_unsupported)
//!  tier 2  POST /api/v1/search/recall  quotas events/entities/preferences,        ──► block format A
//!          session_id, dedup_turns 5 (deprecated in 0.5.2: `Deprecation` + `Link` to tier 1's endpoint)
//!    │ failure
//!  tier 3  POST /api/v1/search/find ×2 (memories, skills) ► rank ► budget         ──► block format B
//! ```
//! A tier that answers but finds nothing ends the chain with no block (the anchor does not fall back).
//! Tier 1 is the successor OpenViking names for tier 2, and is always tried first (unless the
//! server rejected it within the last 6 h); a reply that says its endpoint is deprecated is
//! reported in [`RecallOutcome::deprecated`] (the hook logs it once a day).

use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::{enc, fit_block, BlockLimit, Client, ClientError, Method};

const HEADER_A: &str = "<openviking-context>\nRelevant memory from OpenViking. Use the search/read MCP tools to expand URIs.\n";
const HEADER_B: &str = "<openviking-context>\nRelevant context from OpenViking. Use the read MCP tool to expand URIs.\n";
const FOOTER: &str = "\n</openviking-context>";
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

/// How much lower an item of another project ranks in tier 3 (the client-side fallback), so
/// that the current project's memories come first, as the server's context face orders them
/// (its default `other_peer_penalty`).
pub(crate) const OTHER_PROJECT_PENALTY: f64 = 0.1;

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
            "peer_scope": peer_scope,
        });
        if let Some(o) = body.as_object_mut() {
            if peer_scope.is_none() {
                o.remove("peer_scope");
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
        out.items = block_uris(rendered);
        Ok(block_a(rendered, req.limit()))
    }

    fn tier3(
        &self,
        req: &RecallRequest,
        query: &str,
        out: &mut RecallOutcome,
    ) -> Result<Option<String>, ClientError> {
        let limit = req.limit.unwrap_or(10).max(1);
        let per_source = (2 * limit).max(8);
        let find = |uri: &str, key: &str| -> Result<Vec<Value>, ClientError> {
            let t = self.budget(req.deadline);
            let body = json!({"query": query, "target_uri": uri, "limit": per_source, "score_threshold": 0});
            let r = self.call(Method::Post, "/api/v1/search/find", Some(&body), t, None)?;
            Ok(r.get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default())
        };
        let (memories, skills) = std::thread::scope(|s| {
            let skills = s.spawn(|| find("viking://~/skills", "skills"));
            let memories = find("viking://~/memories", "memories");
            let skills = skills.join().unwrap_or_else(|_| Ok(Vec::new()));
            (memories, skills)
        });
        let (memories, skills) = match (memories, skills) {
            (Err(e), Err(_)) => return Err(e),
            (m, s) => (m.unwrap_or_default(), s.unwrap_or_default()),
        };
        let mut items: Vec<Item> = memories
            .iter()
            .map(|v| Item::from_json(v, "memory"))
            .chain(skills.iter().map(|v| Item::from_json(v, "skill")))
            .filter(|i| i.score >= req.score_threshold)
            .collect();
        let picked = rank(query, &mut items, limit, self.actor_peer.as_deref());
        if picked.is_empty() {
            return Ok(None);
        }
        out.items = picked.iter().map(|i| i.uri.clone()).collect();
        let lines = self.render_items(req, &picked);
        Ok(fit_block(HEADER_B, &lines.join("\n"), FOOTER, req.limit()))
    }

    fn render_items(&self, req: &RecallRequest, items: &[Item]) -> Vec<String> {
        let mut budget = req.token_budget.max(200) as i64;
        let max_chars = req.max_content_chars.max(50);
        let mut lines = Vec::new();
        let mut emitted_content = false;
        for item in items {
            let pct = (item.score * 100.0).round() as i64;
            let hint = format!("- [{} {pct}%] {}", item.kind, item.uri);
            if budget <= 0 {
                lines.push(hint);
                continue;
            }
            let content = self.item_content(req, item);
            let line = format!(
                "- [{} {pct}%] {}",
                item.kind,
                truncate_chars(&content, max_chars)
            );
            let tokens = line.encode_utf16().count().div_ceil(4) as i64;
            if tokens > budget && emitted_content {
                lines.push(hint);
            } else {
                lines.push(line);
                emitted_content = true;
                budget -= tokens;
            }
        }
        lines
    }

    fn item_content(&self, req: &RecallRequest, item: &Item) -> String {
        if req.prefer_abstract && !item.abstract_.is_empty() {
            return item.abstract_.clone();
        }
        if item.level == Some(2) {
            let path = format!("/api/v1/content/read?uri={}", enc(&item.uri));
            if let Some(t) = self.budget(req.deadline) {
                if let Ok(Value::String(body)) = self.call(Method::Get, &path, None, Some(t), None)
                {
                    if !body.trim().is_empty() {
                        return body;
                    }
                }
            }
        }
        if item.abstract_.is_empty() {
            item.uri.clone()
        } else {
            item.abstract_.clone()
        }
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

/// A tier-3 candidate from `search/find`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Item {
    pub kind: &'static str,
    pub uri: String,
    pub abstract_: String,
    pub category: String,
    pub level: Option<i64>,
    /// `clamp01(score)`.
    pub score: f64,
}

impl Item {
    pub(crate) fn from_json(v: &Value, kind: &'static str) -> Item {
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim()
                .to_owned()
        };
        let abstract_ = Some(s("abstract"))
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| s("overview"));
        let score = v
            .get("score")
            .and_then(Value::as_f64)
            .filter(|x| !x.is_nan())
            .unwrap_or(0.0)
            .clamp(0.0, 1.0);
        Item {
            kind,
            uri: s("uri"),
            abstract_,
            category: s("category"),
            level: v.get("level").and_then(Value::as_i64),
            score,
        }
    }
}

const STOPWORDS: &[&str] = &[
    "what", "when", "where", "which", "who", "whom", "whose", "why", "how", "did", "does", "is",
    "are", "was", "were", "the", "and", "for", "with", "from", "that", "this", "your", "you",
];
const PREF_WORDS: &[&str] = &[
    "prefer",
    "preference",
    "favorite",
    "favourite",
    "like",
    "偏好",
    "喜欢",
    "爱好",
    "更倾向",
];
const TIME_WORDS: &[&str] = &[
    "when",
    "what time",
    "date",
    "day",
    "month",
    "year",
    "yesterday",
    "today",
    "tomorrow",
    "last",
    "next",
    "什么时候",
    "何时",
    "哪天",
    "几月",
    "几年",
    "昨天",
    "今天",
    "明天",
];

/// Query tokens: runs of `[a-z0-9一-龥]{2,}` of the lowercased query, stopwords removed.
fn tokens(query: &str) -> Vec<String> {
    let lower = query.to_lowercase();
    let mut out = Vec::new();
    let mut cur = String::new();
    let word = |c: char| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || ('\u{4e00}'..='\u{9fa5}').contains(&c)
    };
    for c in lower.chars().chain(std::iter::once(' ')) {
        if word(c) {
            cur.push(c);
        } else {
            if cur.chars().count() >= 2 && !STOPWORDS.contains(&cur.as_str()) {
                out.push(cur.clone());
            }
            cur.clear();
        }
    }
    out
}

/// Anchor tier-3 ranking: boosts, stable sort descending, dedupe, first `limit`.
pub(crate) fn rank(
    query: &str,
    items: &mut [Item],
    limit: usize,
    actor_peer: Option<&str>,
) -> Vec<Item> {
    let lower = query.to_lowercase();
    let temporal = TIME_WORDS.iter().any(|w| lower.contains(w));
    let preference = PREF_WORDS.iter().any(|w| lower.contains(w));
    let toks = tokens(query);
    let considered: Vec<&String> = toks.iter().take(8).collect();
    let denom = toks.len().min(4);
    let mut scored: Vec<(f64, Item)> = items
        .iter()
        .map(|it| {
            let uri = it.uri.to_lowercase();
            let mut s = it.score;
            if actor_peer.is_some() && project_of(&it.uri).is_some_and(|p| Some(p) != actor_peer) {
                s -= OTHER_PROJECT_PENALTY;
            }
            if it.level == Some(2) || uri.ends_with(".md") {
                s += 0.12;
            }
            if temporal && (it.category == "events" || uri.contains("/events/")) {
                s += 0.10;
            }
            if preference && (it.category == "preferences" || uri.contains("/preferences/")) {
                s += 0.08;
            }
            if denom > 0 {
                let hay = format!(
                    " {} ",
                    format!("{} {}", it.uri, it.abstract_).to_lowercase()
                );
                let matched = considered
                    .iter()
                    .filter(|t| hay.contains(t.as_str()))
                    .count();
                s += (matched as f64 / denom as f64 * 0.2).min(0.2);
            }
            (s, it.clone())
        })
        .collect();
    // Stable, like JS `Array.prototype.sort`: equal scores keep find's order.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (_, it) in scored {
        let uri = it.uri.to_lowercase();
        let event_like = matches!(it.category.as_str(), "events" | "cases")
            || uri.contains("/events/")
            || uri.contains("/cases/");
        let key = if event_like || it.abstract_.is_empty() {
            format!("uri:{}", it.uri)
        } else {
            it.abstract_.to_lowercase()
        };
        if seen.insert(key) {
            out.push(it);
        }
        if out.len() == limit {
            break;
        }
    }
    out
}

/// First `max` chars, plus `...` when cut.
fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", s.get(..i).unwrap_or(s)),
        None => s.to_owned(),
    }
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
    fn tokens_drop_stopwords_and_short_runs() {
        assert_eq!(
            tokens("Which editor does the user like? a 中文"),
            ["editor", "user", "like", "中文"]
        );
    }

    fn item(uri: &str, abs: &str, score: f64, level: i64) -> Item {
        Item {
            kind: "memory",
            uri: uri.into(),
            abstract_: abs.into(),
            category: String::new(),
            level: Some(level),
            score,
        }
    }

    #[test]
    fn ranking_boosts_leaves_preferences_and_overlap_then_dedupes() {
        let mut items = vec![
            item("viking://user/d/memories/entities/x", "unrelated", 0.60, 1),
            item(
                "viking://user/d/memories/preferences/editor.md",
                "Helix editor",
                0.50,
                2,
            ),
            item(
                "viking://user/d/memories/preferences/dup.md",
                "helix editor",
                0.49,
                2,
            ),
        ];
        let out = rank("which editor do I prefer", &mut items, 10, None);
        let uris: Vec<&str> = out.iter().map(|i| i.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "viking://user/d/memories/preferences/editor.md",
                "viking://user/d/memories/entities/x"
            ]
        );
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate_chars("abcdef", 3), "abc...");
        assert_eq!(truncate_chars("abc", 3), "abc");
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

    /// Tier 3 ranks another project's memory lower: of two equal hits the current
    /// project's comes first, whichever order find gave them.
    #[test]
    fn tier_three_ranks_the_current_project_first() {
        let alpha = "viking://user/u/peers/github.com-acme-alpha/memories/preferences/t.md";
        let beta = "viking://user/u/peers/github.com-acme-beta/memories/preferences/t.md";
        for actor in ["github.com-acme-alpha", "github.com-acme-beta"] {
            let mut items = vec![
                item(beta, "tests with pytest", 0.55, 2),
                item(alpha, "tests with nextest", 0.55, 2),
            ];
            let out = rank("how are tests run", &mut items, 10, Some(actor));
            assert_eq!(out.first().and_then(|i| project_of(&i.uri)), Some(actor));
        }
        let mut items = vec![item(beta, "b", 0.55, 2), item(alpha, "a", 0.55, 2)];
        let out = rank("q", &mut items, 10, None);
        assert_eq!(
            out.first().map(|i| i.uri.as_str()),
            Some(beta),
            "no project: find's order"
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
