//! Subagents: the one rule for where a subagent's turns go (`capture.subagents`).
//!
//! # Context
//!
//! An agent spawns subagents for side tasks (Claude Code's Task tool, Codex's and Copilot's
//! agents, ZCode's `sess_subagent_…` sessions, an OpenCode or Kilo session with a parent).
//! Their prompts are the agent's, not the user's, so by default nothing of them is kept. Each
//! harness tells a subagent apart in its own way; all of them end up here:
//!
//! | harness | a subagent is | its parent | what is captured |
//! |---|---|---|---|
//! | Claude Code, Codex | a `SubagentStop` hook (`agent_id`) | the hook's session | the task (the agent transcript's first prompt) and `last_assistant_message` |
//! | Copilot CLI | a `subagentStop` hook (`agentId`, else `agentName`) | the hook's session | its `response` |
//! | OpenCode, Kilo Code | a session whose hooks name a `parent_id` | that session | its own turns (prompt and answer from the shim) |
//! | ZCode | a `sess_subagent_…` session (its payloads name no parent) | unknown | its own turns |
//!
//! # Design
//!
//! | `capture.subagents` | where its turns go |
//! |---|---|
//! | `skip` (default) | nowhere: its hooks pass through (no journal, no recall, no capture) |
//! | `separate` | a session of its own, named after its parent: native id `<parent>-sub-<agent>` ([`separate_session_id`]), so the server's session is `<parent's remote id>-sub-<agent>`; with no known parent, its own id |
//! | `inline` | the parent's session, each subagent turn as one [`crate::event::Event::SubagentTurn`] that leaves the parent's running turn open; with no known parent, as `separate` |
//!
//! A subagent whose hooks come as a session of their own (OpenCode, ZCode) keeps its hooks in
//! `separate` mode (the session is rerouted); in `inline` mode its Stop becomes the
//! `SubagentTurn` (its prompt hook journals nothing: a prompt would end the parent's turn).

/// `capture.subagents`: where a subagent's turns go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubagentCapture {
    /// Nowhere (the default): a subagent's hooks pass through.
    #[default]
    Skip,
    /// A session of their own, linked to the parent by name.
    Separate,
    /// The parent's session.
    Inline,
}

impl SubagentCapture {
    /// The configuration's names, off first (`false` means `skip`, `true` `separate`).
    pub const NAMES: &'static [&'static str] = &["skip", "separate", "inline"];

    /// The mode named `name` (one of [`SubagentCapture::NAMES`]); `skip` for anything else.
    pub fn from_name(name: &str) -> SubagentCapture {
        match name {
            "separate" => SubagentCapture::Separate,
            "inline" => SubagentCapture::Inline,
            _ => SubagentCapture::Skip,
        }
    }

    /// The configuration's name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            SubagentCapture::Skip => "skip",
            SubagentCapture::Separate => "separate",
            SubagentCapture::Inline => "inline",
        }
    }
}

/// A subagent as its harness reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subagent {
    /// The native session id of the session that spawned it, when the harness says.
    pub parent: Option<String>,
    /// The subagent's own id: the harness's agent id, or its own session id.
    pub agent: String,
}

/// Where a subagent's hook goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Nowhere: the hook passes through.
    PassThrough,
    /// A session of its own: this native session id.
    Own(String),
    /// The parent's session (this native id), as [`crate::event::Event::SubagentTurn`]s.
    Parent(String),
}

/// The one rule: where `sub`'s hooks go under `mode`.
pub fn route(mode: SubagentCapture, sub: &Subagent) -> Route {
    match (mode, sub.parent.as_deref()) {
        (SubagentCapture::Skip, _) => Route::PassThrough,
        (SubagentCapture::Inline, Some(parent)) => Route::Parent(parent.to_owned()),
        (SubagentCapture::Separate, Some(parent)) => {
            Route::Own(separate_session_id(parent, &sub.agent))
        }
        (SubagentCapture::Separate | SubagentCapture::Inline, None) => {
            Route::Own(sub.agent.clone())
        }
    }
}

/// The native session id of a subagent's own session: its parent's id, `-sub-`, its own id.
pub fn separate_session_id(parent: &str, agent: &str) -> String {
    format!("{parent}-sub-{agent}")
}

/// The turn id of a subagent's turn reported by a stop hook (one turn per subagent run).
pub fn turn_id(agent: &str) -> String {
    format!("{TURN_PREFIX}{agent}")
}

/// Whether `turn_id` is a subagent's turn ([`turn_id`]).
pub fn is_turn_id(turn_id: &str) -> bool {
    turn_id.starts_with(TURN_PREFIX)
}

const TURN_PREFIX: &str = "subagent-";

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(parent: Option<&str>, agent: &str) -> Subagent {
        Subagent {
            parent: parent.map(str::to_owned),
            agent: agent.to_owned(),
        }
    }

    #[test]
    fn each_mode_routes_a_subagent_with_a_parent() {
        let s = sub(Some("ses_p"), "ses_c");
        assert_eq!(route(SubagentCapture::Skip, &s), Route::PassThrough);
        assert_eq!(
            route(SubagentCapture::Separate, &s),
            Route::Own("ses_p-sub-ses_c".into())
        );
        assert_eq!(
            route(SubagentCapture::Inline, &s),
            Route::Parent("ses_p".into())
        );
    }

    #[test]
    fn without_a_parent_a_subagent_keeps_its_own_session() {
        let s = sub(None, "sess_subagent_agent_1");
        assert_eq!(route(SubagentCapture::Skip, &s), Route::PassThrough);
        for mode in [SubagentCapture::Separate, SubagentCapture::Inline] {
            assert_eq!(
                route(mode, &s),
                Route::Own("sess_subagent_agent_1".into()),
                "{mode:?}"
            );
        }
    }

    #[test]
    fn names_round_trip_and_unknown_is_skip() {
        for name in SubagentCapture::NAMES {
            assert_eq!(SubagentCapture::from_name(name).name(), *name);
        }
        assert_eq!(SubagentCapture::from_name("x"), SubagentCapture::Skip);
        assert_eq!(SubagentCapture::default(), SubagentCapture::Skip);
    }
}
