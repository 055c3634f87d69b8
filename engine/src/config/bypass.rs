//! `bypass.*`: the sessions memory skips.

/// `bypass.*` (the anchor's `shouldBypassAgent`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BypassConfig {
    /// `bypass.session`: bypass every session.
    pub session: bool,
    /// `bypass.patterns`: globs tested against the session id and the cwd (`**` any, `*` no `/`).
    pub patterns: Vec<String>,
}

impl BypassConfig {
    /// True when memory must be skipped for this session (id without the `zc-` prefix) and cwd.
    pub fn matches(&self, session_id: &str, cwd: &str) -> bool {
        self.session
            || self.patterns.iter().any(|p| {
                [session_id, cwd]
                    .iter()
                    .filter(|v| !v.is_empty())
                    .any(|v| glob_match(p, v))
            })
    }
}

/// Anchored glob: `**` matches anything, `*` anything but `/`, every other char is literal.
fn glob_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[char], t: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('*', rest)) => {
                if let Some(('*', rest2)) = rest.split_first() {
                    (0..=t.len()).any(|i| go(rest2, t.get(i..).unwrap_or_default()))
                } else {
                    let stop = t.iter().position(|c| *c == '/').unwrap_or(t.len());
                    (0..=stop).any(|i| go(rest, t.get(i..).unwrap_or_default()))
                }
            }
            Some((c, rest)) => t
                .split_first()
                .is_some_and(|(tc, tr)| tc == c && go(rest, tr)),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    go(&p, &t)
}
