//! Writing an edited JSON object back in the user's own text: every top-level member whose
//! value did not change keeps its exact bytes (number spellings like `1.0e2`, `\u` escapes,
//! spacing, the whitespace around it); only the members install or uninstall changed are
//! rendered anew, indented like the file.
//!
//! # Design
//!
//! ```text
//!  original text ── scan ──► [ member: lead ws | "key" ws : ws | value ] … tail ws } after
//!  new object    ── for each key, in the new order:
//!                     in the original with an equal value ─► its bytes, as they were
//!                     in the original, value changed     ─► its key text, the value rendered
//!                     new                                ─► rendered, led like the last member
//!  the result is parsed back: unless it equals the new object (keys in order), the whole
//!  object is rendered plainly instead
//! ```
//!
//! The scan trusts nothing: any text it does not understand (duplicate keys, not an object)
//! gives `None` and the caller renders plainly.

use serde_json::{Map, Value};

/// One top-level member of the original text.
struct Member {
    key: String,
    /// Whitespace before the key.
    lead: String,
    /// The key as written, the colon and the whitespace around it.
    head: String,
    /// The value as written.
    value: String,
    /// The value parsed.
    parsed: Value,
    /// Whitespace between the value and the comma after it (the last member's is the tail).
    trail: String,
}

/// The top-level object of the original text.
struct Original {
    before: String,
    members: Vec<Member>,
    /// Whitespace before the closing brace.
    tail: String,
    /// Everything after the closing brace (the final newline).
    after: String,
}

/// `root` written over `original`'s text, keeping the bytes of every member it did not change.
/// `None` when `original` is not a JSON object this can follow (the caller renders plainly).
pub fn splice(original: &[u8], root: &Map<String, Value>) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(original).ok()?;
    let orig = scan(text)?;
    let indent = indent_unit(&orig);
    // A file on one line gets its new values on one line too.
    let one_line = !orig.members.is_empty() && !orig.members.iter().any(|m| m.lead.contains('\n'));
    let default_lead = orig
        .members
        .last()
        .map_or_else(|| format!("\n{indent}"), |m| m.lead.clone());
    let mut out = String::with_capacity(text.len() + 1024);
    out.push_str(&orig.before);
    out.push('{');
    for (i, (key, value)) in root.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match orig.members.iter().find(|m| &m.key == key) {
            Some(m) if &m.parsed == value => {
                out.push_str(&m.lead);
                out.push_str(&m.head);
                out.push_str(&m.value);
                out.push_str(&m.trail);
            }
            Some(m) => {
                out.push_str(&m.lead);
                out.push_str(&m.head);
                out.push_str(&render(value, &line_indent(&m.lead), &indent, one_line)?);
            }
            None => {
                out.push_str(&default_lead);
                out.push_str(&serde_json::to_string(key).ok()?);
                out.push_str(": ");
                out.push_str(&render(
                    value,
                    &line_indent(&default_lead),
                    &indent,
                    one_line,
                )?);
            }
        }
    }
    if root.is_empty() {
        out.push_str(&orig.tail);
    } else if orig.members.is_empty() {
        out.push('\n');
    } else {
        out.push_str(&orig.tail);
    }
    out.push('}');
    out.push_str(&orig.after);
    if orig.members.is_empty() && !root.is_empty() && !orig.after.ends_with('\n') {
        out.push('\n');
    }
    // The safety net: what is written must read back as exactly `root`.
    let back: Value = serde_json::from_str(&out).ok()?;
    let same_order = back
        .as_object()
        .is_some_and(|b| b.keys().eq(root.keys()) && b == root);
    same_order.then(|| out.into_bytes())
}

/// The indentation of a member's line: the whitespace after the lead's last newline.
fn line_indent(lead: &str) -> String {
    lead.rsplit('\n').next().unwrap_or("").to_owned()
}

/// One level of indentation as the file writes it (two spaces when it does not say).
fn indent_unit(orig: &Original) -> String {
    orig.members
        .iter()
        .filter(|m| m.lead.contains('\n'))
        .map(|m| line_indent(&m.lead))
        .find(|i| !i.is_empty())
        .unwrap_or_else(|| "  ".to_owned())
}

/// `value` pretty-printed with `unit` per level, its lines after the first led by `base`
/// (`one_line`: compact).
fn render(value: &Value, base: &str, unit: &str, one_line: bool) -> Option<String> {
    use serde::Serialize;
    if one_line {
        return serde_json::to_string(value).ok();
    }
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    value.serialize(&mut ser).ok()?;
    let text = String::from_utf8(buf).ok()?;
    Some(text.replace('\n', &format!("\n{base}")))
}

/// Splits the text of a top-level JSON object into its members.
fn scan(text: &str) -> Option<Original> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    let before = text.get(..i)?.to_owned();
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut members: Vec<Member> = Vec::new();
    loop {
        let lead_start = i;
        i = skip_ws(b, i);
        if b.get(i) == Some(&b'}') && members.is_empty() {
            let tail = text.get(lead_start..i)?.to_owned();
            return Some(Original {
                before,
                members,
                tail,
                after: text.get(i + 1..)?.to_owned(),
            });
        }
        let key_start = i;
        let key_end = skip_string(b, i)?;
        let key: String = serde_json::from_str(text.get(key_start..key_end)?).ok()?;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let value_start = i;
        let value_end = skip_value(b, i)?;
        let value = text.get(value_start..value_end)?;
        let parsed: Value = serde_json::from_str(value).ok()?;
        if members.iter().any(|m| m.key == key) {
            return None;
        }
        let tail_start = value_end;
        i = skip_ws(b, value_end);
        members.push(Member {
            key,
            lead: text.get(lead_start..key_start)?.to_owned(),
            head: text.get(key_start..value_start)?.to_owned(),
            value: value.to_owned(),
            parsed,
            trail: String::new(),
        });
        match b.get(i) {
            Some(b',') => {
                if let Some(m) = members.last_mut() {
                    m.trail = text.get(tail_start..i)?.to_owned();
                }
                i += 1;
            }
            Some(b'}') => {
                return Some(Original {
                    before,
                    members,
                    tail: text.get(tail_start..i)?.to_owned(),
                    after: text.get(i + 1..)?.to_owned(),
                })
            }
            _ => return None,
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string starting at `i`.
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        match b.get(j)? {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
}

/// The end (exclusive) of the value starting at `i` (its syntax is checked by parsing it).
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b.get(j)? {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!("an object literal"),
        }
    }

    #[test]
    fn untouched_members_keep_their_bytes_and_changed_ones_are_indented_like_the_file() {
        let text = "{\n\t\"n\": 1.0e2,\n\t\"s\": \"caf\\u00e9\",\n\t\"hooks\": {}\n}\n";
        let mut root: Map<String, Value> = serde_json::from_str(text).unwrap();
        root.insert("hooks".into(), json!({"a": [1]}));
        root.insert("mcp".into(), json!({"x": true}));
        let out = String::from_utf8(splice(text.as_bytes(), &root).unwrap()).unwrap();
        assert_eq!(
            out,
            "{\n\t\"n\": 1.0e2,\n\t\"s\": \"caf\\u00e9\",\n\t\"hooks\": {\n\t\t\"a\": [\n\t\t\t1\n\t\t]\n\t},\n\t\"mcp\": {\n\t\t\"x\": true\n\t}\n}\n"
        );
    }

    #[test]
    fn removing_a_member_keeps_the_others_and_an_empty_file_gets_pretty_members() {
        let text = r#"{"a": 1.0e2, "b": 2, "c": "\/"}"#;
        let mut root: Map<String, Value> = serde_json::from_str(text).unwrap();
        root.shift_remove("b");
        let out = String::from_utf8(splice(text.as_bytes(), &root).unwrap()).unwrap();
        assert_eq!(out, r#"{"a": 1.0e2, "c": "\/"}"#);
        let out = splice(b"{}", &obj(json!({"k": 1}))).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "{\n  \"k\": 1\n}\n");
        let out = splice(b"{ \"k\": 1 }\n", &Map::new()).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "{ }\n");
    }

    #[rstest::rstest]
    #[case::not_an_object("[1]")]
    #[case::duplicate_keys(r#"{"a": 1, "a": 2}"#)]
    #[case::malformed(r#"{"a": 1,, }"#)]
    #[case::blank("  ")]
    fn text_it_cannot_follow_is_left_to_the_plain_rendering(#[case] text: &str) {
        assert_eq!(splice(text.as_bytes(), &obj(json!({"a": 1}))), None);
    }

    fn leaf() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "1.0e2",
            "-0",
            "12345678901234567890",
            "true",
            "null",
            r#""caf\u00e9""#,
            r#""a\/b""#,
            r#""\"}{""#,
            "[ 1 , {\"x\" : \"]\"} ]",
            "{ }",
        ])
        .prop_map(str::to_owned)
    }

    fn ws() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["", " ", "\n  ", "\r\n\t", "\n    "])
    }

    proptest! {
        /// Any object text, any edit of its top-level members: the result reads back as the
        /// edited object, and every member not edited keeps its exact bytes.
        #[test]
        fn every_edit_reads_back_and_keeps_the_untouched_bytes(
            members in prop::collection::vec((ws(), leaf(), ws()), 0..6),
            end in ws(),
            edits in prop::collection::vec((0usize..8, prop::option::of(0i64..3)), 0..4),
        ) {
            let items: Vec<String> = members
                .iter()
                .enumerate()
                .map(|(i, (a, v, b))| format!("{a}\"m{i}\"{b}:{a}{v}{b}"))
                .collect();
            let untouched_text = |i: usize| {
                let (a, v, b) = &members[i];
                format!("{a}\"m{i}\"{b}:{a}{v}")
            };
            let text = format!("{{{}{end}}}\n", items.join(","));
            let mut root: Map<String, Value> = serde_json::from_str(&text).unwrap();
            let mut touched = Vec::new();
            for (k, v) in edits {
                let key = format!("m{k}");
                match v {
                    Some(n) => { root.insert(key.clone(), json!({"ours": n})); }
                    None => { root.shift_remove(&key); }
                }
                touched.push(key);
            }
            let out = splice(text.as_bytes(), &root).unwrap();
            let back: Map<String, Value> = serde_json::from_slice(&out).unwrap();
            prop_assert_eq!(&back, &root);
            prop_assert!(back.keys().eq(root.keys()));
            let out = String::from_utf8(out).unwrap();
            for i in 0..members.len() {
                if !touched.contains(&format!("m{i}")) {
                    let want = untouched_text(i);
                    prop_assert!(out.contains(&want), "{} lost {:?}", out, want);
                }
            }
            if touched.is_empty() {
                prop_assert_eq!(out, text, "nothing edited: the same bytes");
            }
        }
    }
}
