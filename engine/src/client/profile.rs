//! The SessionStart profile block (`docs/anchor-behaviours.md` §2.4): profile.md plus preference and entity listings.

use serde_json::Value;

use super::{enc, fit_block, BlockLimit, Client, ClientError, Method};

/// Inputs of [`Client::profile`].
#[derive(Clone, Copy, Debug)]
pub struct ProfileRequest {
    /// Total token budget `T` (default 6000) (the anchor's minimum is 500; not enforced here).
    pub token_budget: usize,
    /// Upper bound of the block's JSON-escaped length.
    pub max_bytes: usize,
    /// Upper bound of the block's length in characters (a harness that counts them).
    pub max_chars: usize,
}

impl Default for ProfileRequest {
    fn default() -> Self {
        Self {
            token_budget: 6000,
            max_bytes: 30 * 1024,
            max_chars: usize::MAX,
        }
    }
}

/// Profile estimator: `ceil(cjk·1.5 + other/4)`, `cjk` = UTF-16 units ≥ U+3000.
pub(crate) fn tokens(s: &str) -> usize {
    let (mut cjk, mut other) = (0usize, 0usize);
    for u in s.encode_utf16() {
        if u >= 0x3000 {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    ((cjk as f64) * 1.5 + (other as f64) / 4.0).ceil() as usize
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// First `n` chars of `s`.
fn take_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => s.get(..i).unwrap_or(s),
        None => s,
    }
}

/// Anchor `elideProfile`: keep the head and as much of the tail as fits, or truncate.
pub(crate) fn elide_profile(content: &str, max_tokens: usize) -> String {
    const MARKER: &str = "\n... [profile middle elided] ...\n";
    let total = utf16_len(content).max(1);
    let cjk = content.encode_utf16().filter(|u| *u >= 0x3000).count();
    let r = cjk as f64 / total as f64;
    let per_char = (r * 1.5 + (1.0 - r) * 0.25).max(0.25);
    let max_chars = ((max_tokens as f64 / per_char).floor() as usize).max(400);
    if tokens(content) <= max_tokens {
        return content.to_owned();
    }
    let fallback = || {
        format!(
            "{}\n... [profile truncated]",
            take_chars(content, max_chars).trim_end()
        )
    };
    let lines: Vec<&str> = content.split('\n').collect();
    let head = lines.iter().take(8).copied().collect::<Vec<_>>().join("\n");
    if lines.len() <= 12 {
        return fallback();
    }
    let Some(reserve) = max_chars
        .checked_sub(utf16_len(&head) + MARKER.len())
        .filter(|r| *r >= 200)
    else {
        return fallback();
    };
    let mut tail: Vec<&str> = Vec::new();
    let mut used = 0usize;
    for (i, line) in lines.iter().enumerate().rev() {
        if i <= 8 {
            break;
        }
        let cost = utf16_len(line) + 1;
        if used + cost > reserve {
            break;
        }
        used += cost;
        tail.push(line);
    }
    if tail.len() < 2 {
        return fallback();
    }
    tail.reverse();
    format!("{head}{MARKER}{}", tail.join("\n"))
}

/// One listed memory file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: String,
    pub abstract_: String,
}

/// Anchor listing of one directory within `budget` tokens; returns the lines and tokens used.
pub(crate) fn render_listing(
    dir_uri: &str,
    entries: &[Entry],
    budget: usize,
) -> (Vec<String>, usize) {
    if entries.is_empty() {
        return (Vec::new(), 0);
    }
    let header = format!("  {dir_uri}/");
    if tokens(&header) > budget {
        let line = format!(
            "  {dir_uri}/  ({} entries, budget too tight; use `memory_recall`)",
            entries.len()
        );
        let t = tokens(&line);
        return (vec![line], t);
    }
    let mut used = tokens(&header);
    let mut lines = vec![header];
    for (i, e) in entries.iter().enumerate() {
        let mut line = format!("    - {}", e.name);
        if !e.abstract_.is_empty() {
            let collapsed = e.abstract_.split_whitespace().collect::<Vec<_>>().join(" ");
            line.push_str(" \u{2014} ");
            line.push_str(take_chars(&collapsed, 200));
        }
        let t = tokens(&line);
        if used + t > budget {
            let more = format!("    ... +{} more, use `memory_recall`", entries.len() - i);
            let mt = tokens(&more);
            if used + mt <= budget {
                lines.push(more);
                used += mt;
            }
            break;
        }
        lines.push(line);
        used += t;
    }
    (lines, used)
}

impl Client {
    /// The complete SessionStart `additionalContext`:
    /// `<openviking-context source="session-start">\n…\n</openviking-context>`, or `None` when the
    /// user has no profile.md and no preference or entity memories.
    pub fn profile(&self, req: &ProfileRequest) -> Result<Option<String>, ClientError> {
        let space = self.user_space()?;
        let base = format!("viking://user/{space}/memories");
        let profile_uri = format!("{base}/profile.md");
        let prefs_uri = format!("{base}/preferences");
        let ents_uri = format!("{base}/entities");
        let (profile, prefs, ents) = std::thread::scope(|s| {
            let prefs = s.spawn(|| self.list_memories(&prefs_uri));
            let ents = s.spawn(|| self.list_memories(&ents_uri));
            let profile = self.read_text(&profile_uri);
            let join = |h: std::thread::ScopedJoinHandle<'_, Result<Vec<Entry>, ClientError>>| {
                h.join().unwrap_or_else(|_| Ok(Vec::new()))
            };
            (profile, join(prefs), join(ents))
        });
        // Like the anchor's parallel fetches, one failed source only removes its part; all failed is an error.
        let (profile, prefs, ents) = match (profile, prefs, ents) {
            (Err(e), Err(_), Err(_)) => return Err(e),
            (p, a, b) => (
                p.ok().flatten(),
                a.unwrap_or_default(),
                b.unwrap_or_default(),
            ),
        };
        if profile.is_none() && prefs.is_empty() && ents.is_empty() {
            return Ok(None);
        }
        let total = req.token_budget;
        let mut lines: Vec<String> = Vec::new();
        let mut profile_tokens = 0;
        if let Some(p) = &profile {
            let elided = elide_profile(p, total / 2);
            profile_tokens = tokens(&elided);
            lines.push(format!("<user-profile uri=\"{profile_uri}\">"));
            lines.push(elided);
            lines.push("</user-profile>".to_owned());
        }
        let listing_budget = total.saturating_sub(profile_tokens);
        let (pref_lines, prefs_used) = render_listing(&prefs_uri, &prefs, listing_budget / 2);
        let (ent_lines, _) =
            render_listing(&ents_uri, &ents, listing_budget.saturating_sub(prefs_used));
        if !pref_lines.is_empty() || !ent_lines.is_empty() {
            lines.push("<available-memories>".to_owned());
            lines.extend(pref_lines);
            lines.extend(ent_lines);
            lines.push("</available-memories>".to_owned());
        }
        Ok(fit_block(
            "<openviking-context source=\"session-start\">\n",
            &lines.join("\n"),
            "\n</openviking-context>",
            BlockLimit {
                bytes: req.max_bytes,
                chars: req.max_chars,
            },
        ))
    }

    /// Anchor space resolution: `system/status` user, checked against the `viking://user` listing.
    fn user_space(&self) -> Result<String, ClientError> {
        let fallback = self.system_user()?.unwrap_or_else(|| "default".to_owned());
        let listing = self
            .call(
                Method::Get,
                &format!("/api/v1/fs/ls?uri={}&output=original", enc("viking://user")),
                None,
                None,
                None,
            )
            .unwrap_or(Value::Null);
        let candidates: Vec<String> = listing
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|e| e.get("isDir").and_then(Value::as_bool).unwrap_or(false))
            .filter_map(|e| e.get("name").and_then(Value::as_str).map(str::trim))
            .filter(|n| !n.is_empty() && !n.starts_with('.') && *n != "memories")
            .map(str::to_owned)
            .collect();
        if candidates.contains(&fallback) {
            return Ok(fallback);
        }
        if candidates.iter().any(|c| c == "default") {
            return Ok("default".to_owned());
        }
        if let [only] = candidates.as_slice() {
            return Ok(only.clone());
        }
        Ok(fallback)
    }

    fn read_text(&self, uri: &str) -> Result<Option<String>, ClientError> {
        match self.call(
            Method::Get,
            &format!("/api/v1/content/read?uri={}", enc(uri)),
            None,
            None,
            None,
        ) {
            Ok(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_owned())),
            Ok(_) => Ok(None),
            Err(e) if e.status() == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn list_memories(&self, dir: &str) -> Result<Vec<Entry>, ClientError> {
        let path = format!(
            "/api/v1/fs/ls?uri={}&output=agent&recursive=true&abs_limit=512&node_limit=512",
            enc(dir)
        );
        let v = match self.call(Method::Get, &path, None, None, None) {
            Ok(v) => v,
            Err(e) if e.status() == 404 => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out: Vec<Entry> = v
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|e| !e.get("isDir").and_then(Value::as_bool).unwrap_or(false))
            .filter_map(|e| {
                let s = |k: &str| e.get(k).and_then(Value::as_str).filter(|x| !x.is_empty());
                let name = s("rel_path").or_else(|| s("name"))?.to_owned();
                name.ends_with(".md").then(|| Entry {
                    name,
                    abstract_: s("abstract").unwrap_or_default().trim().to_owned(),
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_estimate_counts_cjk_heavier() {
        assert_eq!(tokens("abcd"), 1);
        assert_eq!(tokens("abcde"), 2);
        assert_eq!(tokens("中文"), 3);
    }

    #[test]
    fn short_profiles_are_kept_and_long_ones_elided() {
        assert_eq!(
            elide_profile("# Profile\nName: Alice", 3000),
            "# Profile\nName: Alice"
        );
        let long: String = (0..400)
            .map(|i| format!("line {i} with some words to pad it out\n"))
            .collect();
        let e = elide_profile(&long, 500);
        assert!(e.starts_with("line 0 "));
        assert!(e.contains("\n... [profile middle elided] ...\n"));
        assert!(
            e.ends_with("line 399 with some words to pad it out\n")
                || e.ends_with("line 399 with some words to pad it out")
        );
        assert!(tokens(&e) <= 600, "{}", tokens(&e));
        let few_lines = "x".repeat(10_000);
        assert!(elide_profile(&few_lines, 500).ends_with("\n... [profile truncated]"));
    }

    #[test]
    fn listing_stops_at_the_budget_with_a_hint() {
        let entries: Vec<Entry> = (0..50)
            .map(|i| Entry {
                name: format!("p{i:02}.md"),
                abstract_: format!("likes  rust\n a lot {}", "x".repeat(90)),
            })
            .collect();
        let (lines, used) = render_listing("viking://user/a/memories/preferences", &entries, 60);
        assert_eq!(
            lines.first().map(String::as_str),
            Some("  viking://user/a/memories/preferences/")
        );
        assert_eq!(
            lines.get(1).map(String::as_str),
            Some(format!("    - p00.md \u{2014} likes rust a lot {}", "x".repeat(90)).as_str())
        );
        assert!(lines.last().is_some_and(
            |l| l.starts_with("    ... +") && l.ends_with(" more, use `memory_recall`")
        ));
        assert!(used <= 60);
        let (tight, _) = render_listing("viking://user/a/memories/preferences", &entries, 3);
        assert_eq!(tight, ["  viking://user/a/memories/preferences/  (50 entries, budget too tight; use `memory_recall`)"]);
    }
}
