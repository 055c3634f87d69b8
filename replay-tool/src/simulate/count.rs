//! Counting what the server holds against what the session should have produced.
//!
//! Pure: the server's message list in, counts out, so the rules are tested without a server.
//!
//! Rules (the `ovreplay simulate` contract):
//! * `expected`: complete turns of the session.
//! * `delivered`: expected turns for which the server holds at least one user message and
//!   one assistant message with that `turn_id` (a role whose content is only `<private>` spans
//!   is never sent and not required).
//! * `duplicates`: for every (turn_id, role) group on the server, count − 1, summed. Messages
//!   without a turn id are grouped by (role, content).
//! * `lost` = expected − delivered.
//! * `content_mismatches`: delivered messages of an expected turn none of whose copies equals
//!   the prompt (user) or the final answer (assistant) once injected blocks and `<private>`
//!   spans are removed and whitespace trimmed; one per (turn, role).
//! * `unexpected_turns`: turn ids on the server that are not expected turns of this session
//!   (incomplete turns that were captured anyway, or foreign messages).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// One message as the server holds it (live or archived).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerMessage {
    /// `user` or `assistant` (others are ignored).
    pub role: String,
    /// The text content.
    pub content: String,
    /// The `turn_id` the message was sent with.
    pub turn_id: Option<String>,
}

/// What one expected turn should look like on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedTurn {
    /// Its `turnId`.
    pub turn_id: String,
    /// The prompt (injected blocks removed).
    pub prompt: String,
    /// The final answer.
    pub answer: String,
}

/// Which turns make each count that is not zero (turn ids, in order).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Which {
    /// Expected turns not delivered.
    pub lost: Vec<String>,
    /// Turns (or untagged contents) with extra copies, and how many extra.
    pub duplicated: Vec<(String, usize)>,
    /// Delivered (turn, role) whose copies all differ from the recording.
    pub mismatched: Vec<(String, String)>,
    /// Turn ids on the server that are not expected turns.
    pub unexpected: Vec<String>,
}

/// The counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// See the module doc.
    pub expected: usize,
    /// See the module doc.
    pub delivered: usize,
    /// See the module doc.
    pub duplicates: usize,
    /// See the module doc.
    pub lost: usize,
    /// See the module doc.
    pub content_mismatches: usize,
    /// See the module doc.
    pub unexpected_turns: usize,
    /// The turns behind each count.
    #[serde(skip)]
    pub which: Which,
}

/// What a message should look like on the server: injected blocks removed and the built-in
/// privacy rule applied (ovhook never sends either), trimmed; the engine's own filters.
pub fn normalize(s: &str) -> String {
    let mut counts = ov_engine::privacy::Redactions::default();
    ov_engine::privacy::builtin(&ov_engine::text::clean_injected(s), &mut counts)
        .trim()
        .to_owned()
}

/// Counts `messages` against `expected` (see the module doc).
pub fn count(expected: &[ExpectedTurn], messages: &[ServerMessage]) -> Counts {
    // (turn key, role) -> contents of every copy.
    let mut groups: BTreeMap<(String, &str), Vec<&str>> = BTreeMap::new();
    for m in messages {
        let role = m.role.as_str();
        if role != "user" && role != "assistant" {
            continue;
        }
        let key = match &m.turn_id {
            Some(t) if !t.is_empty() => format!("turn:{t}"),
            _ => format!("content:{}", m.content),
        };
        groups.entry((key, role)).or_default().push(&m.content);
    }
    let duplicates = groups.values().map(|v| v.len().saturating_sub(1)).sum();
    let mut which = Which::default();
    for ((key, _), copies) in &groups {
        let extra = copies.len().saturating_sub(1);
        let name = key
            .strip_prefix("turn:")
            .map_or_else(|| key.clone(), str::to_owned);
        match which.duplicated.last_mut() {
            Some((last, n)) if *last == name => *n += extra,
            _ if extra > 0 => which.duplicated.push((name, extra)),
            _ => {}
        }
    }

    let mut delivered = 0;
    let mut content_mismatches = 0;
    let mut expected_ids = BTreeSet::new();
    for turn in expected {
        expected_ids.insert(format!("turn:{}", turn.turn_id));
        let key = format!("turn:{}", turn.turn_id);
        let user = groups.get(&(key.clone(), "user"));
        let assistant = groups.get(&(key, "assistant"));
        // A role whose content is all `<private>` is never sent, so it is not required.
        let mut complete = true;
        for (role, copies, want) in [
            ("user", user, &turn.prompt),
            ("assistant", assistant, &turn.answer),
        ] {
            let want = normalize(want);
            match copies {
                None => complete &= want.is_empty(),
                Some(copies) => {
                    if !copies.iter().any(|c| normalize(c) == want) {
                        content_mismatches += 1;
                        which
                            .mismatched
                            .push((turn.turn_id.clone(), role.to_owned()));
                    }
                }
            }
        }
        if complete {
            delivered += 1;
        } else {
            which.lost.push(turn.turn_id.clone());
        }
    }
    let unexpected: BTreeSet<&String> = groups
        .keys()
        .filter(|(k, _)| k.starts_with("turn:") && !expected_ids.contains(k))
        .map(|(k, _)| k)
        .collect();
    which.unexpected = unexpected
        .iter()
        .filter_map(|k| k.strip_prefix("turn:"))
        .map(str::to_owned)
        .collect();
    let unexpected_turns = unexpected.len();
    Counts {
        expected: expected.len(),
        delivered,
        duplicates,
        lost: expected.len().saturating_sub(delivered),
        content_mismatches,
        unexpected_turns,
        which,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(id: &str) -> ExpectedTurn {
        ExpectedTurn {
            turn_id: id.into(),
            prompt: format!("prompt {id}"),
            answer: format!("answer {id}"),
        }
    }

    fn msg(role: &str, turn: Option<&str>, content: &str) -> ServerMessage {
        ServerMessage {
            role: role.into(),
            content: content.into(),
            turn_id: turn.map(Into::into),
        }
    }

    fn both(id: &str) -> [ServerMessage; 2] {
        [
            msg("user", Some(id), &format!("prompt {id}")),
            msg("assistant", Some(id), &format!("answer {id}")),
        ]
    }

    #[test]
    fn all_delivered_once() {
        let exp = [turn("t0"), turn("t1")];
        let msgs: Vec<_> = both("t0").into_iter().chain(both("t1")).collect();
        assert_eq!(
            count(&exp, &msgs),
            Counts {
                expected: 2,
                delivered: 2,
                ..Counts::default()
            }
        );
    }

    #[test]
    fn nothing_on_server() {
        let exp = [turn("t0"), turn("t1"), turn("t2")];
        let c = count(&exp, &[]);
        assert_eq!(
            (c.expected, c.delivered, c.lost, c.duplicates),
            (3, 0, 3, 0)
        );
    }

    #[test]
    fn half_a_turn_is_not_delivered() {
        let exp = [turn("t0"), turn("t1")];
        let mut msgs: Vec<_> = both("t0").into();
        msgs.push(msg("user", Some("t1"), "prompt t1"));
        let c = count(&exp, &msgs);
        assert_eq!((c.delivered, c.lost, c.content_mismatches), (1, 1, 0));
        assert_eq!(c.which.lost, ["t1"]);
    }

    #[test]
    fn duplicates_are_extra_copies_per_turn_and_role() {
        let exp = [turn("t0"), turn("t1")];
        let mut msgs: Vec<_> = both("t0").into_iter().chain(both("t1")).collect();
        msgs.extend(both("t0")); // t0 sent twice: +2
        msgs.push(msg("assistant", Some("t1"), "answer t1")); // +1
        msgs.push(msg("assistant", Some("t1"), "answer t1")); // +1
        let c = count(&exp, &msgs);
        assert_eq!((c.delivered, c.duplicates, c.lost), (2, 4, 0));
        assert_eq!(
            c.which.duplicated,
            [("t0".to_owned(), 2), ("t1".to_owned(), 2)]
        );
    }

    #[test]
    fn the_node_plugin_shape_is_caught() {
        // The prompt once per model call and every narration as its own message: a 3-call turn
        // sends 6 messages instead of 2 (`docs/anchor-behaviours.md` §10.2).
        let exp = [turn("t0")];
        let msgs = [
            msg("user", Some("t0"), "prompt t0"),
            msg("assistant", Some("t0"), "Let me look."),
            msg("user", Some("t0"), "prompt t0"),
            msg("assistant", Some("t0"), "Reading the file."),
            msg("user", Some("t0"), "prompt t0"),
            msg("assistant", Some("t0"), "answer t0"),
        ];
        let c = count(&exp, &msgs);
        assert_eq!((c.delivered, c.duplicates, c.content_mismatches), (1, 4, 0));
    }

    #[test]
    fn content_is_compared_without_injected_blocks() {
        let exp = [turn("t0"), turn("t1")];
        let msgs = [
            msg(
                "user",
                Some("t0"),
                "<system-reminder>ctx</system-reminder>\nprompt t0\n",
            ),
            msg("assistant", Some("t0"), "answer t0"),
            msg("user", Some("t1"), "something else"),
            msg("assistant", Some("t1"), "answer t1 (truncated?"),
        ];
        let c = count(&exp, &msgs);
        assert_eq!((c.delivered, c.content_mismatches), (2, 2));
        assert_eq!(
            c.which.mismatched,
            [
                ("t1".to_owned(), "user".to_owned()),
                ("t1".to_owned(), "assistant".to_owned())
            ]
        );
    }

    #[test]
    fn an_all_private_prompt_is_not_required() {
        let mut t = turn("t0");
        t.prompt = "<private>sk-123</private>".into();
        let msgs = [msg("assistant", Some("t0"), "answer t0")];
        let c = count(&[t], &msgs);
        assert_eq!((c.delivered, c.lost, c.content_mismatches), (1, 0, 0));
        let c = count(&[turn("t0")], &msgs);
        assert_eq!((c.delivered, c.lost), (0, 1));
    }

    #[test]
    fn unexpected_and_untagged_messages() {
        let exp = [turn("t0")];
        let mut msgs: Vec<_> = both("t0").into();
        msgs.extend(both("t_interrupted"));
        msgs.push(msg("user", None, "hello"));
        msgs.push(msg("user", None, "hello"));
        msgs.push(msg("user", None, "other"));
        msgs.push(msg("system", Some("t0"), "ignored"));
        let c = count(&exp, &msgs);
        assert_eq!((c.delivered, c.unexpected_turns, c.duplicates), (1, 1, 1));
        assert_eq!(c.which.unexpected, ["t_interrupted"]);
        assert_eq!(c.which.duplicated, [("content:hello".to_owned(), 1)]);
    }
}
