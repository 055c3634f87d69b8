//! Users' own filter rules, in OpenViking's plugin syntax (`captureFilters`,
//! `recallQueryFilters`), so an existing OpenViking configuration carries over unchanged.
//!
//! # Syntax
//!
//! ```text
//! [user:|assistant:] s<d>pattern<d>replacement<d>[flags]   substitute (flag g: every match)
//! [user:|assistant:] d<d>pattern<d>[flags]                 drop the text when the pattern matches
//! [user:|assistant:] k<d>pattern<d>[flags]                 keep the text only when it matches
//! ```
//!
//! `<d>` is any punctuation character (not a letter, digit, space or `\`); `\<d>` in a field is
//! a literal `<d>`, every other `\x` reaches the regular expression as written. Flags: `i`
//! (case-insensitive), `m` (multi-line), `s` (`.` matches a newline), `u` (accepted; patterns
//! are always Unicode here), `g` (substitute every match; ignored by `d` and `k`). A scope
//! applies the rule to that role's text only. In a replacement, `$1`, `$<name>`, `$&` and `$$`
//! mean what they mean in JavaScript. Rules run in order; a `d` or `k` that fires ends the
//! run with the text dropped; the result is trimmed. At most [`MAX_RULES`] rules of at most
//! [`MAX_PATTERN_LEN`] characters each are used.
//!
//! Patterns are Rust `regex` syntax, which is JavaScript's without look-around and
//! back-references: such a pattern is a [`RuleError`].
//!
//! # Design
//!
//! Parsing is cheap and happens where the configuration is loaded; a pattern is compiled the
//! first time a rule runs (a hook with no rules configured never touches the regex engine).
//! A rule that does not parse or compile is skipped, logged, and reported by `ovhook doctor`;
//! it never stops the other rules and never stops the built-in redaction, which runs first.

use std::sync::OnceLock;

use crate::turn::Role;

/// Most rules used per list (more are an error each).
pub const MAX_RULES: usize = 32;
/// Longest pattern, in characters.
pub const MAX_PATTERN_LEN: usize = 512;

/// What a rule does when its pattern matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `s`: substitute.
    Substitute,
    /// `d`: drop the text on a match.
    Drop,
    /// `k`: keep the text only on a match.
    Keep,
}

/// One rule, parsed; its pattern is compiled on first use.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Position in its list.
    pub index: usize,
    /// The rule as written (trimmed).
    pub source: String,
    /// What it does.
    pub op: Op,
    /// The role it applies to (`None`: both).
    pub scope: Option<Role>,
    pattern: String,
    /// The replacement in `regex` syntax (translated from JavaScript's).
    replacement: String,
    global: bool,
    case_insensitive: bool,
    multi_line: bool,
    dot_all: bool,
    compiled: OnceLock<Result<regex::Regex, String>>,
}

/// A rule that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rule {index} {rule:?}: {message}")]
pub struct RuleError {
    /// Position in its list.
    pub index: usize,
    /// The rule as written.
    pub rule: String,
    /// What is wrong.
    pub message: String,
}

/// A list of rules (one configuration key), parsed.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    rules: Vec<Rule>,
    errors: Vec<RuleError>,
}

/// What running the rules did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The text, rewritten or not (trimmed when a rule ran on it).
    Kept(String),
    /// A `d` or `k` rule dropped the text.
    Dropped,
}

impl Rules {
    /// Parses a list; blank entries are ignored, bad ones become [`Rules::errors`].
    pub fn parse<S: AsRef<str>>(list: &[S]) -> Rules {
        let mut out = Rules::default();
        for (index, entry) in list.iter().enumerate() {
            let entry = entry.as_ref();
            if entry.trim().is_empty() {
                continue;
            }
            if index >= MAX_RULES {
                out.errors.push(RuleError {
                    index,
                    rule: entry.trim().to_owned(),
                    message: format!("too many rules: only the first {MAX_RULES} are used"),
                });
                continue;
            }
            match parse_rule(index, entry) {
                Ok(rule) => out.rules.push(rule),
                Err(e) => out.errors.push(e),
            }
        }
        out
    }

    /// No usable rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The usable rules, in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Every problem: rules that do not parse and, compiling every pattern now, rules whose
    /// pattern is not a valid regular expression.
    pub fn errors(&self) -> Vec<RuleError> {
        let mut out = self.errors.clone();
        for r in &self.rules {
            if let Err(message) = r.regex() {
                out.push(RuleError {
                    index: r.index,
                    rule: r.source.clone(),
                    message: message.clone(),
                });
            }
        }
        out.sort_by_key(|e| e.index);
        out
    }

    /// Runs the rules over `text` as `role`'s. A rule whose pattern does not compile is skipped
    /// (logged once per process; [`Rules::errors`] reports it).
    pub fn apply(&self, text: &str, role: Role) -> Outcome {
        if self.rules.is_empty() {
            return Outcome::Kept(text.to_owned());
        }
        let mut cur = text.to_owned();
        for rule in &self.rules {
            if rule.scope.is_some_and(|s| s != role) {
                continue;
            }
            let re = match rule.regex() {
                Ok(re) => re,
                Err(e) => {
                    log::warn!("privacy rule {:?} skipped: {e}", rule.source);
                    continue;
                }
            };
            match rule.op {
                Op::Substitute => {
                    let next = if rule.global {
                        re.replace_all(&cur, rule.replacement.as_str())
                    } else {
                        re.replace(&cur, rule.replacement.as_str())
                    };
                    if let std::borrow::Cow::Owned(n) = next {
                        cur = n;
                    }
                }
                Op::Drop if re.is_match(&cur) => return Outcome::Dropped,
                Op::Keep if !re.is_match(&cur) => return Outcome::Dropped,
                Op::Drop | Op::Keep => {}
            }
        }
        Outcome::Kept(cur.trim().to_owned())
    }
}

impl Rule {
    fn regex(&self) -> &Result<regex::Regex, String> {
        self.compiled.get_or_init(|| {
            regex::RegexBuilder::new(&self.pattern)
                .case_insensitive(self.case_insensitive)
                .multi_line(self.multi_line)
                .dot_matches_new_line(self.dot_all)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| format!("invalid regular expression: {e}"))
        })
    }
}

/// One field up to the delimiter: `\<d>` is a literal delimiter, every other `\x` stays as is.
/// Returns the field and the index just past its closing delimiter (`None`: unterminated).
fn scan_field(chars: &[char], start: usize, delim: char) -> (String, Option<usize>) {
    let mut out = String::new();
    let mut i = start;
    while let Some(&c) = chars.get(i) {
        if c == '\\' {
            match chars.get(i + 1) {
                None => {
                    out.push('\\');
                    i += 1;
                }
                Some(&n) => {
                    if n != delim {
                        out.push('\\');
                    }
                    out.push(n);
                    i += 2;
                }
            }
            continue;
        }
        if c == delim {
            return (out, Some(i + 1));
        }
        out.push(c);
        i += 1;
    }
    (out, None)
}

fn parse_rule(index: usize, entry: &str) -> Result<Rule, RuleError> {
    let raw = entry.trim();
    let err = |message: String| RuleError {
        index,
        rule: raw.to_owned(),
        message,
    };
    let (scope, rest) = if let Some(r) = raw.strip_prefix("user:") {
        (Some(Role::User), r)
    } else if let Some(r) = raw.strip_prefix("assistant:") {
        (Some(Role::Assistant), r)
    } else {
        (None, raw)
    };
    let chars: Vec<char> = rest.chars().collect();
    let op = match chars.first() {
        Some('s') => Op::Substitute,
        Some('d') => Op::Drop,
        Some('k') => Op::Keep,
        other => {
            return Err(err(format!(
                "unknown operation {:?}: expected s (substitute), d (drop) or k (keep)",
                other.map(char::to_string).unwrap_or_default()
            )))
        }
    };
    let Some(&delim) = chars.get(1) else {
        return Err(err("missing delimiter after the operation".into()));
    };
    if delim.is_alphanumeric() || delim.is_whitespace() || delim == '\\' {
        return Err(err(format!(
            "invalid delimiter {delim:?}: use punctuation such as / | # or :"
        )));
    }
    let (pattern, after) = scan_field(&chars, 2, delim);
    let (replacement, flags_at) = if op == Op::Substitute {
        let Some(after) = after else {
            return Err(err(format!("missing {delim:?} after the pattern")));
        };
        let (rep, end) = scan_field(&chars, after, delim);
        let Some(end) = end else {
            return Err(err(format!(
                "missing {delim:?} after the replacement: write s{delim}pattern{delim}replacement{delim}"
            )));
        };
        (rep, Some(end))
    } else {
        (String::new(), after)
    };
    if pattern.is_empty() {
        return Err(err("pattern is empty".into()));
    }
    if pattern.chars().count() > MAX_PATTERN_LEN {
        return Err(err(format!(
            "pattern is too long ({} characters, limit {MAX_PATTERN_LEN})",
            pattern.chars().count()
        )));
    }
    let flags: String = flags_at
        .map(|at| chars.get(at..).unwrap_or_default().iter().collect())
        .unwrap_or_default();
    let mut rule = Rule {
        index,
        source: raw.to_owned(),
        op,
        scope,
        pattern,
        replacement: js_replacement(&replacement),
        global: false,
        case_insensitive: false,
        multi_line: false,
        dot_all: false,
        compiled: OnceLock::new(),
    };
    let mut seen = String::new();
    for f in flags.chars() {
        if seen.contains(f) {
            return Err(err(format!("duplicate flag {f:?}")));
        }
        seen.push(f);
        match f {
            'g' => rule.global = op == Op::Substitute,
            'i' => rule.case_insensitive = true,
            'm' => rule.multi_line = true,
            's' => rule.dot_all = true,
            'u' => {}
            other => {
                return Err(err(format!(
                    "unknown flag {other:?}: allowed flags are i, m, s, u, g"
                )))
            }
        }
    }
    Ok(rule)
}

/// A JavaScript replacement string in `regex` syntax: `$&` → `${0}`, `$n` → `${n}`,
/// `$<name>` → `${name}`, `$$` stays; any other `$` is literal.
fn js_replacement(js: &str) -> String {
    let mut out = String::with_capacity(js.len());
    let chars: Vec<char> = js.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c != '$' {
            out.push(c);
            i += 1;
            continue;
        }
        match chars.get(i + 1) {
            Some('$') => {
                out.push_str("$$");
                i += 2;
            }
            Some('&') => {
                out.push_str("${0}");
                i += 2;
            }
            Some(d) if d.is_ascii_digit() => {
                let mut j = i + 1;
                while j < i + 3 && chars.get(j).is_some_and(char::is_ascii_digit) {
                    j += 1;
                }
                let n: String = chars.get(i + 1..j).unwrap_or_default().iter().collect();
                out.push_str(&format!("${{{n}}}"));
                i = j;
            }
            Some('<') => {
                let close = (i + 2..chars.len()).find(|k| chars.get(*k) == Some(&'>'));
                match close {
                    Some(k) => {
                        let name: String = chars.get(i + 2..k).unwrap_or_default().iter().collect();
                        out.push_str(&format!("${{{name}}}"));
                        i = k + 1;
                    }
                    None => {
                        out.push_str("$$");
                        i += 1;
                    }
                }
            }
            _ => {
                out.push_str("$$");
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn run(rules: &[&str], text: &str, role: Role) -> Outcome {
        let r = Rules::parse(rules);
        assert_eq!(r.errors(), vec![], "{rules:?}");
        r.apply(text, role)
    }

    fn kept(s: &str) -> Outcome {
        Outcome::Kept(s.to_owned())
    }

    #[rstest]
    #[case::strip_prefix(&[r"s/^\s*ultrathink\s+//i"], "  ULTRATHINK  do it", kept("do it"))]
    #[case::first_only(&["s/a/b/"], "aaa", kept("baa"))]
    #[case::global(&["s/a/b/g"], "aaa", kept("bbb"))]
    #[case::groups(&["s/(\\w+)@(\\w+)/$2 at $1/"], "me@host", kept("host at me"))]
    #[case::whole_match(&["s/x+/[$&]/"], "axxb", kept("a[xx]b"))]
    #[case::named(&["s/(?<n>\\d+)/#$<n>/"], "n 42", kept("n #42"))]
    #[case::dollar(&["s/x/$$/"], "x", kept("$"))]
    #[case::drop(&[r"d|^\s*[/!]|"], " /clear", Outcome::Dropped)]
    #[case::drop_no_match(&[r"d|^\s*[/!]|"], "hello", kept("hello"))]
    #[case::keep(&[r"k/^\?ov\b/"], "?ov find", kept("?ov find"))]
    #[case::keep_no_match(&[r"k/^\?ov\b/"], "other", Outcome::Dropped)]
    #[case::scope_other_role(&["assistant:d/secret/"], "secret", kept("secret"))]
    #[case::scope_own_role(&["user:d/secret/"], "secret", Outcome::Dropped)]
    #[case::escaped_delim(&[r"s/a\/b/c/"], "a/b", kept("c"))]
    #[case::other_delim(&["s#/tmp/\\w+#<tmp>#g"], "/tmp/ab and /tmp/cd", kept("<tmp> and <tmp>"))]
    #[case::in_order(&["s/cat/dog/", "d/dog/"], "cat", Outcome::Dropped)]
    #[case::emptied_is_not_dropped(&["s/^ultrathink$//"], "ultrathink", kept(""))]
    fn apply(#[case] rules: &[&str], #[case] text: &str, #[case] want: Outcome) {
        assert_eq!(run(rules, text, Role::User), want);
    }

    #[rstest]
    #[case::op("x/a/")]
    #[case::no_delim("s")]
    #[case::letter_delim("sxaxbx")]
    #[case::unterminated_s("s/a/b")]
    #[case::empty_pattern("d//")]
    #[case::flag("d/a/q")]
    #[case::dup_flag("d/a/ii")]
    #[case::lookahead("d/a(?=b)/")]
    #[case::unbalanced("s/(/x/")]
    fn bad_rules_are_errors_and_skipped(#[case] rule: &str) {
        let r = Rules::parse(&[rule, "s/ok/OK/"]);
        let errors = r.errors();
        assert_eq!(errors.len(), 1, "{rule}: {errors:?}");
        assert_eq!(errors.first().map(|e| e.index), Some(0));
        // The good rule still runs; the bad one never crashes.
        assert_eq!(r.apply("ok a(b", Role::User), kept("OK a(b"));
    }

    #[test]
    fn too_many_rules_are_reported() {
        let list: Vec<String> = (0..MAX_RULES + 2).map(|i| format!("s/{i}x/y/")).collect();
        let r = Rules::parse(&list);
        assert_eq!(r.rules().len(), MAX_RULES);
        assert_eq!(r.errors().len(), 2);
    }

    #[test]
    fn g_on_drop_is_ignored() {
        assert_eq!(run(&["d/a/g"], "a", Role::User), Outcome::Dropped);
    }
}
