//! Privacy: what of the conversation may leave the machine, and what may be kept on it.
//!
//! # Context
//!
//! A prompt or an answer enters ovhook three ways: a hook payload (`prompt`, the Stop's answer
//! and its preview), a transcript read (the rollout, a Claude Code or Copilot transcript) and,
//! derived from the prompt, the recall query. Whatever enters is journaled, and what is
//! journaled is later sent. So the rule is applied once, where text enters, before anything is
//! journaled or sent: no file under the state directory and no request ever holds what it
//! removes. Every harness goes through the same entry points ([`Policy::capture`] for hook
//! payloads, [`Policy::chunk`] for every transcript reader, [`Policy::recall_query`] for the
//! query), so the rule has one implementation.
//!
//! # Design
//!
//! ```text
//!  text ─► spans::strip ─► detect (built-ins) ─► user rules ─► journal / request
//!          <private>…        [REDACTED:kind]      captureFilters (capture)
//!                                                 recallQueryFilters (recall query)
//! ```
//!
//! 1. [`spans`]: `<private>` regions are removed (nested, unclosed to the end, any case).
//! 2. [`detect`]: secrets are replaced by `[REDACTED:<kind>]`; the text around them is kept.
//!    No configuration can turn this off.
//! 3. [`rules`]: the user's rules, in OpenViking's syntax, run on what is left: they can only
//!    see text the built-ins already cleaned, so no rule can bring a secret back.
//!
//! What was removed is counted per kind ([`Redactions`]: `private`, each
//! [`detect::SecretKind`], `rule-drop`, `rule-edit`) and journaled as
//! [`crate::event::Event::Redacted`], never the text itself.
//!
//! Old journals keep the raw text they were written with; the fold never re-sanitizes (the
//! dedup keys of their turns stay as they were), but the planner runs the built-in rule on
//! every message it plans ([`builtin`]), so nothing raw from an old journal is ever sent.

pub mod detect;
pub mod rules;
pub mod spans;

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::turn::{Role, TranscriptChunk, TurnFragment};
pub use detect::SecretKind;
pub use rules::{RuleError, Rules};

/// Count kind of a removed `<private>` region.
pub const PRIVATE: &str = "private";
/// Count kind of a text dropped by a user's `d` or `k` rule.
pub const RULE_DROP: &str = "rule-drop";
/// Count kind of a text a user's `s` rule changed.
pub const RULE_EDIT: &str = "rule-edit";

/// How many things of each kind were removed. Never holds what was removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redactions(pub BTreeMap<String, u32>);

impl Redactions {
    /// Adds `n` of `kind`.
    pub fn add(&mut self, kind: &str, n: u32) {
        if n == 0 {
            return;
        }
        match self.0.get_mut(kind) {
            Some(c) => *c = c.saturating_add(n),
            None => {
                self.0.insert(kind.to_owned(), n);
            }
        }
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Redactions) {
        for (k, n) in &other.0 {
            self.add(k, *n);
        }
    }

    /// Nothing was removed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// All counts added up.
    pub fn total(&self) -> u64 {
        self.0.values().map(|n| u64::from(*n)).sum()
    }

    /// `2 openai-key, 1 private` (kinds in name order); empty when nothing was removed.
    pub fn summary(&self) -> String {
        self.0
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The built-in rule: `<private>` regions removed, secrets replaced by their markers.
/// Borrows when nothing was found. Used on its own where no configuration is at hand (the
/// planner, `ovreplay plan`); entry points use a [`Policy`].
pub fn builtin<'a>(text: &'a str, counts: &mut Redactions) -> Cow<'a, str> {
    let text: Cow<'a, str> = match spans::strip(text) {
        Some((t, n)) => {
            counts.add(PRIVATE, n);
            Cow::Owned(t)
        }
        None => Cow::Borrowed(text),
    };
    let hits = detect::find(&text);
    if hits.is_empty() {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for h in &hits {
        out.push_str(text.get(copied..h.start).unwrap_or_default());
        out.push_str(&h.kind.marker());
        counts.add(h.kind.as_str(), 1);
        copied = h.end;
    }
    out.push_str(text.get(copied..).unwrap_or_default());
    Cow::Owned(out)
}

/// The privacy rule with the user's rules: one per configuration.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    capture: Rules,
    recall: Rules,
}

impl Policy {
    /// Built-ins only.
    pub fn builtin() -> Policy {
        Policy::default()
    }

    /// Built-ins plus the user's rules for captured text and for the recall query.
    pub fn new(capture: Rules, recall: Rules) -> Policy {
        Policy { capture, recall }
    }

    /// From the configuration's `capture.filters` and `recall.query_filters`.
    pub fn from_config(cfg: &crate::config::Config) -> Policy {
        Policy::new(
            Rules::parse(&cfg.capture.filters),
            Rules::parse(&cfg.recall.query_filters),
        )
    }

    /// The rules for captured text.
    pub fn capture_rules(&self) -> &Rules {
        &self.capture
    }

    /// The rules for the recall query.
    pub fn recall_rules(&self) -> &Rules {
        &self.recall
    }

    /// A captured text of `role` as it may be journaled and sent: the built-ins, then the
    /// capture rules. A text a rule drops is empty (nothing to send).
    pub fn capture<'a>(&self, text: &'a str, role: Role, counts: &mut Redactions) -> Cow<'a, str> {
        apply(text, role, &self.capture, counts)
    }

    /// The recall query made from a prompt: the built-ins, then the recall query rules.
    /// `None` when a rule drops it or nothing is left (no recall).
    pub fn recall_query(&self, prompt: &str, counts: &mut Redactions) -> Option<String> {
        let q = apply(prompt, Role::User, &self.recall, counts);
        let q = q.trim();
        (!q.is_empty()).then(|| q.to_owned())
    }

    /// Applies [`Policy::capture`] to every text of a transcript read, in place; returns the
    /// counts per turn (only turns where something was removed).
    pub fn chunk(&self, chunk: &mut TranscriptChunk) -> Vec<(String, Redactions)> {
        let mut out = Vec::new();
        for f in &mut chunk.fragments {
            let counts = self.fragment(f);
            if !counts.is_empty() {
                out.push((f.turn_id.clone(), counts));
            }
        }
        out
    }

    fn fragment(&self, f: &mut TurnFragment) -> Redactions {
        let mut counts = Redactions::default();
        let mut clean = |t: &mut String, role: Role| {
            // Our own stand-in for a text never kept; a text that only quotes one is cleaned.
            if crate::text::oversized::is_stand_in(t) {
                return;
            }
            if let Cow::Owned(c) = self.capture(t, role, &mut counts) {
                *t = c;
            }
        };
        if let Some(p) = f.prompt.as_mut() {
            clean(p, Role::User);
        }
        for (_, s) in &mut f.steering {
            clean(s, Role::User);
        }
        if let Some(t) = f.final_text.as_mut() {
            clean(t, Role::Assistant);
        }
        if let Some(t) = f.last_text.as_mut() {
            clean(t, Role::Assistant);
        }
        counts
    }
}

fn apply<'a>(text: &'a str, role: Role, rules: &Rules, counts: &mut Redactions) -> Cow<'a, str> {
    let clean = builtin(text, counts);
    if rules.is_empty() {
        return clean;
    }
    match rules.apply(&clean, role) {
        rules::Outcome::Dropped => {
            counts.add(RULE_DROP, 1);
            Cow::Owned(String::new())
        }
        rules::Outcome::Kept(t) => {
            if t != clean.trim() {
                counts.add(RULE_EDIT, 1);
            }
            Cow::Owned(t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_text_quoting_a_stand_in_is_still_cleaned_and_a_stand_in_is_kept() {
        let stand_in = crate::text::oversized::stand_in(99_000_000);
        let mut chunk = TranscriptChunk {
            fragments: vec![TurnFragment {
                turn_id: "t1".into(),
                prompt: Some(format!("see <private>PW1</private> {stand_in}")),
                final_text: Some(stand_in.clone()),
                ..TurnFragment::default()
            }],
            ..TranscriptChunk::default()
        };
        Policy::builtin().chunk(&mut chunk);
        let f = chunk.fragments.first().expect("the fragment");
        assert_eq!(
            f.prompt.as_deref(),
            Some(format!("see  {stand_in}").as_str())
        );
        assert_eq!(f.final_text.as_deref(), Some(stand_in.as_str()));
    }

    #[test]
    fn builtin_borrows_clean_text_and_counts_what_it_removes() {
        let mut c = Redactions::default();
        assert!(matches!(
            builtin("plain text, sha 3f2a9c1e8b7d", &mut c),
            Cow::Borrowed(_)
        ));
        assert!(c.is_empty());
        let out = builtin(
            "deploy <private>PW1</private> with sk-proj-Ab12Cd34Ef56Gh78Ij90KlMnOp now",
            &mut c,
        );
        assert_eq!(out, "deploy  with [REDACTED:openai-key] now");
        assert_eq!(c.summary(), "1 openai-key, 1 private");
        assert_eq!(c.total(), 2);
    }

    #[test]
    fn user_rules_run_after_the_builtins_and_cannot_undo_them() {
        let p = Policy::new(
            Rules::parse(&["s/\\[REDACTED:[a-z-]+\\]/sk-proj-/g", "user:d/^drop me/"]),
            Rules::parse(&["s/^please //"]),
        );
        let mut c = Redactions::default();
        let out = p.capture(
            "key sk-proj-Ab12Cd34Ef56Gh78Ij90KlMnOp",
            Role::Assistant,
            &mut c,
        );
        assert_eq!(out, "key sk-proj-");
        assert_eq!(p.capture("drop me now", Role::User, &mut c), "");
        assert_eq!(
            p.capture("drop me now", Role::Assistant, &mut c),
            "drop me now"
        );
        assert_eq!(
            p.recall_query("please find <private>x</private>it", &mut c),
            Some("find it".to_owned())
        );
        assert_eq!(c.0.get(RULE_DROP), Some(&1));
    }
}
