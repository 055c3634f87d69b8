//! Why each count `simulate` reports is not zero: which turns make it, and the reason in a
//! sentence. Where the journal knows a turn's fate, the reason is `why`'s own verdict
//! ([`crate::story::tell`]): one rule for both commands.
//!
//! Counts that are fine by design (`expected`, `delivered`) are not explained. `pending` in the
//! embedded mode is every captured turn (url = off sends nothing): one sentence says so.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::count::Counts;
use super::hooks::HookStats;
use super::session::Session;
use crate::view::JournalView;

/// One reason behind one count: the turns it applies to and the sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// The count, as `--json` names it (`lost`, `unexpected_turns`, ...).
    pub count: &'static str,
    /// The turns (or files, for `secrets_leaked`; hook events for the hook counts).
    pub turns: Vec<String>,
    /// Why, in a sentence.
    pub text: String,
}

/// What the explanations are drawn from.
pub struct Inputs<'a> {
    /// The recording as played.
    pub session: &'a Session,
    /// The counts and their turns.
    pub counts: &'a Counts,
    /// The turns pending in the journal (server mode), sorted.
    pub pending: Option<&'a [String]>,
    /// The session's journal, when it has one.
    pub journal: Option<&'a JournalView>,
    /// True without a server (url = off).
    pub embedded: bool,
    /// Hook runs.
    pub hooks: &'a HookStats,
    /// Files holding a planted secret.
    pub leaked: &'a [PathBuf],
    /// The journal's damage, one line per range or recorded problem.
    pub damage: &'a [String],
    /// A fault damaged the journal and nothing shows it.
    pub damage_unreported: bool,
}

/// The reasons, in report order; none when every count is as it should be.
pub fn explain(i: &Inputs<'_>) -> Vec<Reason> {
    let mut out = Vec::new();
    let verdict = |turn: &str| match i.journal {
        Some(view) => crate::story::tell(view, turn).verdict.text,
        None => "the session has no journal".to_owned(),
    };
    let label = |turn: &str| match i.session.turns.iter().find(|t| t.turn_id == turn) {
        Some(t) => format!("{turn} (turn {})", t.index),
        None => turn.to_owned(),
    };
    let lost_lead = if i.embedded {
        "a complete turn of the recording that the journal did not capture"
    } else {
        "a complete turn of the recording that is not on the server"
    };
    push_grouped(
        &mut out,
        "lost",
        i.counts
            .which
            .lost
            .iter()
            .map(|t| (label(t), format!("{lost_lead}: {}", verdict(t)))),
    );
    push_grouped(
        &mut out,
        "duplicates",
        i.counts.which.duplicated.iter().map(|(t, n)| {
            let what = match t.strip_prefix("content:") {
                Some(text) => format!("an untagged message {text:?}"),
                None => label(t),
            };
            (
                what,
                format!(
                    "the server holds {n} extra cop{} of its messages",
                    if *n == 1 { "y" } else { "ies" }
                ),
            )
        }),
    );
    push_grouped(
        &mut out,
        "content_mismatches",
        i.counts.which.mismatched.iter().map(|(t, role)| {
            let want = if role == "user" {
                "prompt"
            } else {
                "final answer"
            };
            (
                label(t),
                format!(
                    "no {role} message of the turn equals the recording's {want} (injected \
                     blocks and <private> spans removed)"
                ),
            )
        }),
    );
    let harness = i.session.harness;
    push_grouped(
        &mut out,
        "unexpected_turns",
        i.counts.which.unexpected.iter().map(|t| {
            let why_unexpected = match i.session.turns.iter().find(|s| s.turn_id == *t) {
                Some(s) => match s.incomplete_reason(harness) {
                    Some(r) => {
                        format!("captured, though the recording's turn is not complete: {r}")
                    }
                    None => "captured under the id of a complete turn more than once".to_owned(),
                },
                None => "no turn of the recording has this id".to_owned(),
            };
            (label(t), format!("{why_unexpected}; why: {}", verdict(t)))
        }),
    );
    push_grouped(
        &mut out,
        "incomplete_turns",
        i.session.turns.iter().filter_map(|t| {
            t.incomplete_reason(harness).map(|r| {
                (
                    label(&t.turn_id),
                    format!(
                        "{r}; not expected on the server; why: {}",
                        verdict(&t.turn_id)
                    ),
                )
            })
        }),
    );
    if i.embedded {
        let captured: Vec<usize> = i
            .session
            .turns
            .iter()
            .filter(|t| t.complete && !i.counts.which.lost.contains(&t.turn_id))
            .map(|t| t.index)
            .collect();
        if !captured.is_empty() {
            out.push(Reason {
                count: "pending",
                turns: vec![format!("turns {}", ranges(&captured))],
                text: "captured in the journal; url = off sends nothing, so every captured turn \
                       waits there"
                    .to_owned(),
            });
        }
    } else if let Some(pending) = i.pending {
        push_grouped(
            &mut out,
            "pending",
            pending.iter().map(|t| (label(t), verdict(t))),
        );
    }
    let mut hooks: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for note in &i.hooks.notes {
        let (event, why) = note.split_once(": ").unwrap_or(("hook", note.as_str()));
        hooks
            .entry(why.to_owned())
            .or_default()
            .push(event.to_owned());
    }
    // At most 20 distinct hook reasons: a broken binary fails every run alike.
    for (why, events) in hooks.into_iter().take(20) {
        out.push(Reason {
            count: "hooks",
            turns: events,
            text: why,
        });
    }
    if !i.leaked.is_empty() {
        out.push(Reason {
            count: "secrets_leaked",
            turns: i.leaked.iter().map(|p| p.display().to_string()).collect(),
            text: "a secret a fault planted is written in these files under the state folder"
                .to_owned(),
        });
    }
    if !i.damage.is_empty() {
        out.push(Reason {
            count: "journal_damage",
            turns: i.damage.to_vec(),
            text: "the session's journal holds damage: a read skips these ranges, or the engine \
                   recorded them"
                .to_owned(),
        });
    }
    if i.damage_unreported {
        out.push(Reason {
            count: "damage_unreported",
            turns: vec!["the journal".to_owned()],
            text: "a fault damaged the journal, but neither a read nor the engine shows any damage"
                .to_owned(),
        });
    }
    out
}

/// Adds one reason per distinct sentence, with every turn it applies to, in first-seen order.
fn push_grouped(
    out: &mut Vec<Reason>,
    count: &'static str,
    items: impl Iterator<Item = (String, String)>,
) {
    let start = out.len();
    for (turn, text) in items {
        match out.iter_mut().skip(start).find(|r| r.text == text) {
            Some(r) => r.turns.push(turn),
            None => out.push(Reason {
                count,
                turns: vec![turn],
                text,
            }),
        }
    }
}

/// Sorted turn numbers as ranges: `0-3, 5, 7-9`.
fn ranges(numbers: &[usize]) -> String {
    let mut parts: Vec<(usize, usize)> = Vec::new();
    for &n in numbers {
        match parts.last_mut() {
            Some((_, end)) if *end + 1 == n => *end = n,
            _ => parts.push((n, n)),
        }
    }
    parts
        .iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text lines: `<count>: <turns> — <reason>`.
pub fn render(reasons: &[Reason]) -> String {
    reasons
        .iter()
        .map(|r| {
            let name = r.count.replace('_', " ");
            format!("  {name}: {} — {}\n", r.turns.join(", "), r.text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_numbers_read_as_ranges() {
        assert_eq!(ranges(&[0, 1, 2, 3, 5, 7, 8, 9]), "0-3, 5, 7-9");
        assert_eq!(ranges(&[4]), "4");
        assert_eq!(ranges(&[]), "");
    }

    #[test]
    fn one_reason_per_sentence_in_first_seen_order() {
        let mut out = Vec::new();
        push_grouped(
            &mut out,
            "lost",
            [
                ("a".to_owned(), "x".to_owned()),
                ("b".to_owned(), "y".to_owned()),
                ("c".to_owned(), "x".to_owned()),
            ]
            .into_iter(),
        );
        push_grouped(
            &mut out,
            "pending",
            [("a".to_owned(), "x".to_owned())].into_iter(),
        );
        let got: Vec<(&str, Vec<String>, &str)> = out
            .iter()
            .map(|r| (r.count, r.turns.clone(), r.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("lost", vec!["a".to_owned(), "c".to_owned()], "x"),
                ("lost", vec!["b".to_owned()], "y"),
                ("pending", vec!["a".to_owned()], "x"),
            ]
        );
        assert_eq!(
            render(out.get(1..2).expect("two")),
            "  lost: b — y\n",
            "one line per reason"
        );
    }
}
