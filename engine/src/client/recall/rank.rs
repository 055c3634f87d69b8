//! Tier-3 ranking (the anchor's): score boosts for leaves, events, preferences, query overlap
//! and the current project, then a stable sort and a dedupe.

use serde_json::Value;

use super::project_of;

/// How much lower an item of another project ranks in tier 3 (the client-side fallback), so
/// that the current project's memories come first, as the server's context face orders them
/// (its default `other_peer_penalty`).
pub(crate) const OTHER_PROJECT_PENALTY: f64 = 0.1;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
