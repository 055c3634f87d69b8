//! The turns the server should hold after a playback: every complete turn of the recording
//! that the engine may send, once each.
//!
//! Whether a turn may be sent is the engine's consent rule
//! ([`ov_engine::turnbook::TurnBook::consent`]), asked of a book fed the hooks the playback
//! fires for each turn ([`super::play`]): UserPromptSubmit when the turn has a prompt,
//! PreToolUse per tool call, Stop when the turn is complete and its Stop is not dropped; none
//! under `hooks-off`.

use ov_engine::turnbook::TurnBook;

use super::count::ExpectedTurn;
use super::faults::Faults;
use super::session::Session;

/// The turns the server should hold: complete turns a hook of the playback saw (a turn id that
/// recurs counts once).
pub fn expected_turns(session: &Session, faults: &Faults) -> Vec<ExpectedTurn> {
    let book = hooks_fired(session, faults);
    complete_turns(session)
        .into_iter()
        .filter(|e| book.consent_of(&e.turn_id).is_some_and(|c| c.is_given()))
        .collect()
}

/// A turn book of the hooks the playback fires, each naming its turn by its id.
fn hooks_fired(session: &Session, faults: &Faults) -> TurnBook {
    let mut book = TurnBook::new();
    for t in session.turns.iter().filter(|t| !faults.hooks_off(t.index)) {
        let id = Some(t.turn_id.as_str());
        if t.prompt.is_some() {
            book.observe_prompt_hook(id, None);
        }
        if t.tool_call_count() > 0 {
            book.observe_tool_use(id);
        }
        if t.complete && !faults.drop_stop(t.index) {
            book.observe_stop(id, None);
        }
    }
    book
}

/// The complete turns with what a capture sends of them, once each (a turn id that recurs
/// counts once, with its latest answer).
fn complete_turns(session: &Session) -> Vec<ExpectedTurn> {
    // A message over the engine's size limit is set aside, never sent: it is not expected.
    let sent = |text: Option<&String>| {
        text.filter(|t| ov_engine::text::oversized::fits(t))
            .cloned()
            .unwrap_or_default()
    };
    let mut out: Vec<ExpectedTurn> = Vec::new();
    for t in session.turns.iter().filter(|t| t.complete) {
        let answer = sent(t.final_text.as_ref());
        match out.iter_mut().find(|e| e.turn_id == t.turn_id) {
            Some(e) => e.answer = answer,
            None => out.push(ExpectedTurn {
                turn_id: t.turn_id.clone(),
                // Only the user's words are captured (a task notification is none), then
                // what the user typed into the running turn.
                prompt: sent(t.user_message.as_ref()),
                answer,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::simulate::count;

    const SESSION_ID: &str = "sess_00000000-0000-4000-8000-000000000000";

    /// The harness reads every committed session as the planner does: each complete turn is
    /// in the golden plan with the same prompt and final answer (the planner may add
    /// interrupted turns, which are not expected).
    #[test]
    fn expected_turns_agree_with_the_golden_plans() -> anyhow::Result<()> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/sessions");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let name = path.display().to_string();
            let Some(golden) = name
                .strip_suffix(".jsonl")
                .map(|s| format!("{s}.expected.json"))
            else {
                continue;
            };
            let plan: Vec<serde_json::Value> =
                serde_json::from_str(&std::fs::read_to_string(&golden)?)?;
            let find = |turn: &str, role: &str| {
                plan.iter()
                    .find(|m| m["turn_id"] == turn && m["role"] == role)
                    .and_then(|m| m["content"].as_str())
                    .map(str::to_owned)
            };
            let session = Session::load(&path, SESSION_ID)?;
            for t in expected_turns(&session, &Faults::default()) {
                let (prompt, answer) = (count::normalize(&t.prompt), count::normalize(&t.answer));
                // An all-private message is not planned (and not required on the server).
                let want = |s: String| (!s.is_empty()).then_some(s);
                assert_eq!(
                    find(&t.turn_id, "user"),
                    want(prompt),
                    "{name} {}",
                    t.turn_id
                );
                assert_eq!(
                    find(&t.turn_id, "assistant"),
                    want(answer),
                    "{name} {}",
                    t.turn_id
                );
            }
            checked += 1;
        }
        assert!(checked > 0);
        Ok(())
    }

    /// A turn none of whose hooks fire is not expected; one whose Stop alone is dropped still
    /// is (its prompt hook saw it).
    #[test]
    fn a_turn_no_hook_saw_is_not_expected() -> anyhow::Result<()> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/sessions/tools.jsonl");
        let session = Session::load(&path, SESSION_ID)?;
        let ids = |faults: &str| -> anyhow::Result<Vec<String>> {
            let faults = Faults::parse(faults).map_err(anyhow::Error::msg)?;
            Ok(expected_turns(&session, &faults)
                .into_iter()
                .map(|e| e.turn_id)
                .collect())
        };
        let all = ids("")?;
        let second = session.turns.get(1).map(|t| t.turn_id.clone());
        assert!(all.len() > 1 && second.as_ref().is_some_and(|s| all.contains(s)));
        let off = ids("hooks-off@1")?;
        assert_eq!(off.len(), all.len() - 1);
        assert!(second.as_ref().is_some_and(|s| !off.contains(s)));
        assert_eq!(ids("drop-stop@1")?, all);
        Ok(())
    }
}
