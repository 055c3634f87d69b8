//! Generators for `testdata/`: ZCode rollout sessions in the real `model_io` line format
//! (field-research a.5), each with the messages a correct first capture sends.
//!
//! # Design
//!
//! A session is described by a [`SessionSpec`] (turns, calls, windows, faults);
//! [`write_session`] writes it line by line exactly as ZCode does (one line per model
//! call, each repeating the conversation, so files grow O(n²)); [`SessionSpec::expected`]
//! derives the correct capture from the spec itself, never from the file, so it is an
//! independent oracle for the engine's reader. Everything is seeded ([`Rng`]): the same
//! spec gives the same bytes.
#![deny(missing_docs)]

mod scenarios;
mod spec;
mod write;

pub use scenarios::{big, committed, random};
pub use spec::{
    CallSpec, ExpectedMessage, Finish, Rng, SessionSpec, Text, ToolUse, TurnSpec, Window,
};
pub use write::{write_session, Written};

/// The expected `plan --json` output of a written session.
pub fn expected_json(spec: &SessionSpec, written: &Written) -> String {
    serde_json::to_string(&spec.expected(&written.turn_ids)).unwrap_or_else(|_| "[]".to_owned())
}
