//! Tier 3 of recall, the client-side fallback: `search/find` over memories and skills, ranked
//! ([`super::rank`]), rendered within the token budget as block format B.

use serde_json::{json, Value};

use super::project_first::current_first;
use super::rank::{rank, Item};
use super::{RecallOutcome, RecallRequest, FOOTER};
use crate::client::{enc, fit_block, Client, ClientError, Method};

const HEADER_B: &str = "<openviking-context>\nRelevant context from OpenViking. Use the read MCP tool to expand URIs.\n";

impl Client {
    pub(super) fn tier3(
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
        let picked = current_first(
            rank(query, &mut items, limit, self.actor_peer.as_deref()),
            |i| i.uri.clone(),
            self.actor_peer.as_deref(),
        );
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

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate_chars("abcdef", 3), "abc...");
        assert_eq!(truncate_chars("abc", 3), "abc");
    }
}
