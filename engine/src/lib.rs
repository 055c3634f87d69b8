//! ovhook's engine: everything between a hook invocation and the OpenViking server.
//!
//! # Design
//!
//! ```text
//!  hook payload ──► event ──► journal (ov-journal, one per session)
//!                                  │
//!                                  ▼
//!                   projector::fold (pure) ──► State
//!                                  │            (acked keys, outbox, in-doubt,
//!                                  ▼             cursor, rollout position, …)
//!            delivery (worker): read transcript ► plan ► send ► journal outcome
//! ```
//!
//! State is never stored on its own: it is always the fold of the journal.
//! Text enters through [`privacy`] (hook payloads, transcript reads, the recall query) before
//! anything is journaled or sent. Modules are harness-agnostic: each agent's hook wire format
//! lives in the `ovhook` binary, and the one engine folder that knows an agent's files is
//! [`transcript`] (one reader per agent that writes a transcript, ZCode's rollout among them).
#![deny(missing_docs)]

pub mod backoff;
pub mod clock;
pub mod codec;
pub mod config;
pub mod delivery;
pub mod event;
pub mod failpoint;
pub mod failure;
pub mod ids;
pub mod paths;
pub mod pause;
pub mod plan;
pub mod privacy;
pub mod projector;
pub mod regular_file;
pub mod retention;
pub mod spill;
pub mod store;
pub mod subagent;
pub mod text;
pub mod time;
pub mod tool;
pub mod transcript;
pub mod turn;
pub mod turnbook;

#[cfg(feature = "http")]
pub mod client;
