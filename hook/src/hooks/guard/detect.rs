//! The guard's detector: which PreToolUse calls are local file tools handed a `viking://` URI,
//! and the denial text for them.
//!
//! # Context
//! `viking://…` URIs name OpenViking's virtual filesystem. A model that tries to `Read`,
//! `Glob` or `Grep` one gets a local "file not found"; the guard denies the call instead and
//! tells the model which OpenViking MCP tool to use (`docs/anchor-behaviours.md` §8).
//!
//! # Design
//! This is the hook hot path: no config, no HTTP, no regex crate, and no allocation except the
//! reason string of a denial. Detection is a byte scan for `viking:` (ASCII case-insensitive):
//!
//! | form | example | reported as |
//! |---|---|---|
//! | URI | `cat VIKING://user/x` | `VIKING://user/x` (case kept) |
//! | normalised by the harness (§8) | `/cwd/viking:/~/memories/x.md` | `viking://~/memories/x.md` |
//!
//! The URI form needs a word boundary before `viking` (as the anchor's `\b`); the normalised form
//! needs `viking:` to be a whole path segment (`/` before it, `/` or the end after it), so text
//! such as `echo viking:/tmp` is not mistaken for a URI.

use serde_json::Value;

/// Keys looked at first, in this order, before the recursive scan of the whole input.
const PRIORITY_KEYS: [&str; 8] = [
    "filePath",
    "file_path",
    "filepath",
    "path",
    "uri",
    "target_uri",
    "targetUri",
    "pattern",
];

/// The tools the guard knows; any other tool passes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    Read,
    Glob,
    Grep,
    Shell,
}

impl Tool {
    /// `trim()` + ASCII-case-insensitive match, without allocating.
    fn from_name(name: &str) -> Option<Tool> {
        let name = name.trim();
        let is = |s: &str| name.eq_ignore_ascii_case(s);
        if is("read") {
            Some(Tool::Read)
        } else if is("glob") {
            Some(Tool::Glob)
        } else if is("grep") {
            Some(Tool::Grep)
        } else if is("bash") || is("runcommand") || is("shell") {
            Some(Tool::Shell)
        } else {
            None
        }
    }
}

/// A detected URI: `scheme` is the `viking:` text as written, `rest` what follows `viking://`
/// (or `viking:/` for the normalised form). The URI is `scheme + "//" + rest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hit<'a> {
    scheme: &'a str,
    rest: &'a str,
}

/// A denial: the URI that was found (as written, in `viking://` form) and the reason text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// The `viking://` URI, for the journal.
    pub uri: String,
    /// The reason shown to the agent.
    pub reason: String,
}

/// Decides a PreToolUse call: the denial (URI and reason), or `None` to let the tool run.
pub fn deny(tool_name: Option<&str>, tool_input: Option<&Value>) -> Option<Denial> {
    let tool = Tool::from_name(tool_name?)?;
    let input = tool_input?;
    let hit = find_viking_uri(input)?;
    Some(Denial {
        uri: format!("{}//{}", hit.scheme, hit.rest),
        reason: reason(tool, hit, input),
    })
}

/// The first `viking://` URI in an object input: priority keys first, then every string in the
/// object, depth first. Non-object inputs never match (`docs/anchor-behaviours.md` §8).
fn find_viking_uri(input: &Value) -> Option<Hit<'_>> {
    let obj = input.as_object()?;
    for key in PRIORITY_KEYS {
        if let Some(hit) = obj.get(key).and_then(Value::as_str).and_then(scan_str) {
            return Some(hit);
        }
    }
    obj.values().find_map(scan_value)
}

fn scan_value(v: &Value) -> Option<Hit<'_>> {
    match v {
        Value::String(s) => scan_str(s),
        Value::Array(items) => items.iter().find_map(scan_value),
        Value::Object(map) => map.values().find_map(scan_value),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

const NEEDLE: &[u8] = b"viking";

/// The first viking URI in `s`, in either form (see the module docs).
fn scan_str(s: &str) -> Option<Hit<'_>> {
    let b = s.as_bytes();
    let mut from = 0;
    // Invariant: every `viking:` occurrence starts 6 bytes before a ':'; scanning the colons in
    // order finds the first occurrence by position.
    while let Some(off) = b.get(from..)?.iter().position(|&c| c == b':') {
        let colon = from + off;
        from = colon + 1;
        let Some(start) = colon.checked_sub(NEEDLE.len()) else {
            continue;
        };
        if !b
            .get(start..colon)
            .is_some_and(|w| w.eq_ignore_ascii_case(NEEDLE))
        {
            continue;
        }
        // `start` and `colon + 1` are char boundaries: the bytes around them are ASCII.
        let scheme = &s[start..=colon];
        let before = start.checked_sub(1).and_then(|i| b.get(i).copied());
        let after = b.get(colon + 1..).unwrap_or_default();
        if after.starts_with(b"//") {
            if before.is_some_and(is_word_byte) {
                continue;
            }
            return Some(Hit {
                scheme,
                rest: take_uri_chars(&s[colon + 3..]),
            });
        }
        let segment = before == Some(b'/');
        if segment && after.first() == Some(&b'/') {
            return Some(Hit {
                scheme,
                rest: take_uri_chars(&s[colon + 2..]),
            });
        }
        if segment && after.is_empty() {
            return Some(Hit { scheme, rest: "" });
        }
    }
    None
}

/// `\w` of a JavaScript regex without the `u` flag: ASCII only.
fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The anchor's `[^\s"'`<>)]*`: the URI ends at whitespace, a quote, a backtick, `<`, `>`, `)`.
fn take_uri_chars(s: &str) -> &str {
    let end = s
        .char_indices()
        .find(|&(_, c)| {
            c.is_whitespace() || c == '\u{feff}' || matches!(c, '"' | '\'' | '`' | '<' | '>' | ')')
        })
        .map_or(s.len(), |(i, _)| i);
    &s[..end]
}

/// The three-line reason of `docs/anchor-behaviours.md` §8.
fn reason(tool: Tool, hit: Hit<'_>, input: &Value) -> String {
    let Hit { scheme, rest } = hit;
    let pattern = input.get("pattern");
    let mut out = String::with_capacity(192 + 2 * rest.len());
    out.push_str("viking:// URIs are OpenViking virtual paths, not local filesystem paths.\nUse ");
    out.push_str(match tool {
        Tool::Read => "OpenViking MCP read",
        Tool::Glob => "OpenViking MCP glob or list",
        Tool::Grep => "OpenViking MCP grep or search",
        Tool::Shell => "OpenViking MCP read or search",
    });
    out.push_str(" instead.\nExample: ");
    let push_uri = |out: &mut String| {
        out.push_str(scheme);
        out.push_str("//");
        out.push_str(rest);
    };
    match tool {
        Tool::Read | Tool::Shell => {
            out.push_str("read(uris=\"");
            push_uri(&mut out);
            out.push_str("\")");
        }
        Tool::Glob => {
            out.push_str("glob(pattern=\"");
            push_escaped(&mut out, pattern, "**/*");
            out.push_str("\", uri=\"");
            push_uri(&mut out);
            out.push_str("\")");
        }
        Tool::Grep => {
            out.push_str("grep(uri=\"");
            push_uri(&mut out);
            out.push_str("\", pattern=\"");
            push_escaped(&mut out, pattern, "");
            out.push_str("\")");
        }
    }
    out
}

/// Appends `input.pattern` (or `default` when it is absent or null) with `"` escaped as `\"`.
/// A non-string pattern is written as its JSON text.
fn push_escaped(out: &mut String, pattern: Option<&Value>, default: &str) {
    let owned;
    let text = match pattern {
        None | Some(Value::Null) => default,
        Some(Value::String(s)) => s,
        Some(other) => {
            owned = other.to_string();
            &owned
        }
    };
    for c in text.chars() {
        if c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    /// The deny reason, or `None` to let the tool run.
    fn decide(tool_name: Option<&str>, tool_input: Option<&Value>) -> Option<String> {
        deny(tool_name, tool_input).map(|d| d.reason)
    }

    const LINE1: &str = "viking:// URIs are OpenViking virtual paths, not local filesystem paths.";

    fn uri_of(input: &Value) -> Option<String> {
        find_viking_uri(input).map(|h| format!("{}//{}", h.scheme, h.rest))
    }

    #[rstest]
    #[case::file_path_camel("filePath")]
    #[case::file_path("file_path")]
    #[case::filepath("filepath")]
    #[case::path("path")]
    #[case::uri("uri")]
    #[case::target_uri("target_uri")]
    #[case::target_uri_camel("targetUri")]
    #[case::pattern("pattern")]
    #[case::other_key("whatever")]
    fn every_path_field_is_detected(#[case] key: &str) {
        let input = json!({ key: "viking://resources/project/file.md" });
        let reason = decide(Some("Read"), Some(&input)).expect("denied");
        assert_eq!(
            reason,
            format!(
                "{LINE1}\nUse OpenViking MCP read instead.\nExample: read(uris=\"viking://resources/project/file.md\")"
            )
        );
    }

    #[test]
    fn priority_keys_win_over_earlier_values() {
        // BTreeMap order would visit "a" first; the priority key must win.
        let input = json!({"a": "viking://first", "file_path": "viking://second"});
        assert_eq!(uri_of(&input).as_deref(), Some("viking://second"));
        let input = json!({"path": "viking://p", "file_path": "viking://f"});
        assert_eq!(uri_of(&input).as_deref(), Some("viking://f"));
    }

    #[rstest]
    #[case::nested_command(json!({"args": {"command": "cat viking://resources/project/file.md"}}), "viking://resources/project/file.md")]
    #[case::array(json!({"argv": ["grep", "needle", "viking://resources/project/"]}), "viking://resources/project/")]
    #[case::deep(json!({"a": [{"b": [[{"c": "x viking://deep/y z"}]]}]}), "viking://deep/y")]
    #[case::stops_at_quote(json!({"command": "cat 'viking://a/b' \"x\""}), "viking://a/b")]
    #[case::stops_at_paren(json!({"command": "read(viking://a/b)"}), "viking://a/b")]
    #[case::stops_at_angle(json!({"command": "<viking://a/b>"}), "viking://a/b")]
    #[case::stops_at_backtick(json!({"command": "`viking://a/b`"}), "viking://a/b")]
    #[case::stops_at_newline(json!({"command": "viking://a/b\nls"}), "viking://a/b")]
    #[case::case_kept(json!({"file_path": "VIKING://User/Memories"}), "VIKING://User/Memories")]
    #[case::mixed_case(json!({"file_path": "ViKiNg://x"}), "ViKiNg://x")]
    #[case::empty_rest(json!({"uri": "viking://"}), "viking://")]
    #[case::normalised(json!({"file_path": "/work/cc/work/viking:/~/memories/x.md"}), "viking://~/memories/x.md")]
    #[case::normalised_upper(json!({"file_path": "/w/VIKING:/user/x"}), "VIKING://user/x")]
    #[case::normalised_bare(json!({"path": "/w/viking:"}), "viking://")]
    #[case::after_colon_skip(json!({"command": "a:b xviking://no then viking://yes"}), "viking://yes")]
    #[case::unicode_around(json!({"command": "é viking://ü/ß\u{3000}rest"}), "viking://ü/ß")]
    fn detection(#[case] input: Value, #[case] want: &str) {
        assert_eq!(uri_of(&input).as_deref(), Some(want));
    }

    #[rstest]
    #[case::local(json!({"file_path": "/tmp/local-file.txt"}))]
    #[case::word_before(json!({"command": "myviking://x"}))]
    #[case::underscore_before(json!({"command": "_viking://x"}))]
    #[case::not_a_segment(json!({"command": "echo viking:/tmp"}))]
    #[case::segment_suffix(json!({"path": "/w/viking:x/y"}))]
    #[case::prefix_segment(json!({"path": "/w/myviking:/x"}))]
    #[case::short(json!({"path": "king://x"}))]
    #[case::numbers(json!({"n": 1, "b": true, "z": null}))]
    #[case::empty(json!({}))]
    fn no_detection(#[case] input: Value) {
        assert_eq!(uri_of(&input), None);
    }

    #[rstest]
    #[case::string(json!("viking://x"))]
    #[case::array(json!(["viking://x"]))]
    #[case::null(Value::Null)]
    #[case::number(json!(3))]
    fn non_object_input_passes(#[case] input: Value) {
        assert_eq!(decide(Some("Read"), Some(&input)), None);
    }

    #[test]
    fn missing_parts_pass() {
        let input = json!({"file_path": "viking://x"});
        assert_eq!(decide(None, Some(&input)), None);
        assert_eq!(decide(Some("Read"), None), None);
        assert_eq!(decide(Some(""), Some(&input)), None);
    }

    #[rstest]
    #[case::read(" Read ", true)]
    #[case::read_upper("READ", true)]
    #[case::glob("Glob", true)]
    #[case::grep("grep", true)]
    #[case::bash("Bash", true)]
    #[case::runcommand("RunCommand", true)]
    #[case::shell("shell", true)]
    #[case::write("Write", false)]
    #[case::edit("Edit", false)]
    #[case::mcp("mcp__openviking__read", false)]
    fn tool_gate(#[case] name: &str, #[case] denied: bool) {
        let input = json!({"file_path": "viking://~/memories/profile.md"});
        assert_eq!(decide(Some(name), Some(&input)).is_some(), denied);
    }

    #[test]
    fn read_reason_matches_anchor_example() {
        let input = json!({"file_path": "viking://~/memories/profile.md"});
        let reason = decide(Some("Read"), Some(&input)).expect("denied");
        assert_eq!(
            reason,
            format!("{LINE1}\nUse OpenViking MCP read instead.\nExample: read(uris=\"viking://~/memories/profile.md\")")
        );
    }

    #[test]
    fn read_of_normalised_path_reports_the_uri() {
        let input = json!({"file_path": "/root/cc/work/viking:/~/memories/x.md"});
        let reason = decide(Some("Read"), Some(&input)).expect("denied");
        assert!(
            reason.ends_with("Example: read(uris=\"viking://~/memories/x.md\")"),
            "{reason}"
        );
    }

    #[test]
    fn glob_reason_matches_anchor_example() {
        let input = json!({"pattern": "viking://user/memories/**"});
        let reason = decide(Some("Glob"), Some(&input)).expect("denied");
        assert_eq!(
            reason,
            format!(
                "{LINE1}\nUse OpenViking MCP glob or list instead.\nExample: glob(pattern=\"viking://user/memories/**\", uri=\"viking://user/memories/**\")"
            )
        );
    }

    #[test]
    fn glob_with_local_pattern_passes() {
        let input = json!({"pattern": "src/**/*.rs", "path": "/work/repo"});
        assert_eq!(decide(Some("Glob"), Some(&input)), None);
    }

    #[test]
    fn glob_without_pattern_uses_default() {
        let input = json!({"path": "viking://user/x"});
        let reason = decide(Some("Glob"), Some(&input)).expect("denied");
        assert!(reason.ends_with("Example: glob(pattern=\"**/*\", uri=\"viking://user/x\")"));
    }

    #[test]
    fn grep_with_viking_path_escapes_pattern() {
        let input = json!({"pattern": "say \"hi\"", "path": "viking://~/memories"});
        let reason = decide(Some("Grep"), Some(&input)).expect("denied");
        assert_eq!(
            reason,
            format!(
                "{LINE1}\nUse OpenViking MCP grep or search instead.\nExample: grep(uri=\"viking://~/memories\", pattern=\"say \\\"hi\\\"\")"
            )
        );
        let input = json!({"path": "viking://~/memories"});
        let reason = decide(Some("Grep"), Some(&input)).expect("denied");
        assert!(reason.ends_with("pattern=\"\")"));
    }

    #[test]
    fn bash_command_with_uri() {
        let input = json!({"command": "cat viking://resources/project/file.md | head"});
        let reason = decide(Some("Bash"), Some(&input)).expect("denied");
        assert_eq!(
            reason,
            format!(
                "{LINE1}\nUse OpenViking MCP read or search instead.\nExample: read(uris=\"viking://resources/project/file.md\")"
            )
        );
        let local = json!({"command": "ls -la /tmp"});
        assert_eq!(decide(Some("Bash"), Some(&local)), None);
    }

    #[test]
    fn huge_input_is_scanned_linearly() {
        // 8 MiB of colons (the scan's trigger byte) and near-misses, then the URI at the end.
        let mut s = ":viking:/x ".repeat(800_000);
        s.push_str("viking://end/x");
        let input = json!({"content": s, "other": vec!["a:b"; 10_000]});
        let t = std::time::Instant::now();
        assert_eq!(uri_of(&input).as_deref(), Some("viking://end/x"));
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
        let clean = json!({"content": "x:".repeat(4_000_000)});
        assert_eq!(decide(Some("Read"), Some(&clean)), None);
    }

    #[rstest]
    #[case::read("Read", json!({"file_path": "/w/viking:/~/m/x.md"}), "viking://~/m/x.md")]
    #[case::glob_pattern("Glob", json!({"pattern": "viking://user/m/**"}), "viking://user/m/**")]
    #[case::glob_local_pattern("Glob", json!({"pattern": "auri=\"x", "path": "viking://u/p"}), "viking://u/p")]
    #[case::grep("Grep", json!({"pattern": "uri=\"q\"", "path": "VIKING://u/g"}), "VIKING://u/g")]
    #[case::bash("Bash", json!({"command": "cat viking://r/f.md"}), "viking://r/f.md")]
    fn denial_carries_the_uri(#[case] tool: &str, #[case] input: Value, #[case] want: &str) {
        let d = deny(Some(tool), Some(&input)).expect("denied");
        assert_eq!(d.uri, want, "{}", d.reason);
        assert!(d.reason.contains(want), "{}", d.reason);
        assert_eq!(decide(Some(tool), Some(&input)), Some(d.reason));
    }
}
