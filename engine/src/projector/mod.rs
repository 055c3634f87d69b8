//! The projector: a pure, deterministic fold of a session's events into its state.
//!
//! # Laws (tested with proptest)
//!
//! * Deterministic: the same events give the same state (no clocks, no
//!   randomness, only ordered maps).
//! * Incremental: `fold(a ++ b) == fold_from(fold(a), b)`, so a snapshot of the
//!   state followed by the events after it gives the state of the whole journal.
//!
//! # What the state holds
//!
//! ```text
//! messages   key -> record { order, turn, role, status, content while unsent }
//! delivered  identities of delivered messages whose record was let go
//!            status: Pending | InFlight(send) | Acked | SetAside(why)
//! sends      send_id -> keys, for sends with no outcome yet (in doubt once the
//!            sender is gone: reconciled with the server before any resend)
//! book       the TurnBook: turns seen by hooks and the rollout, not yet planned
//! rollout    file identity + offset of the last complete line consumed
//! commit     acknowledged-but-uncommitted count and tokens, in-flight commit
//! hooks      per-turn liveness, prompt dedup, recall cache, SessionStart debounce
//! backoff    the unreachable-server window
//! tools      tool calls of turns not yet planned; those of planned, unsent messages
//! ```
//!
//! Nothing is ever forgotten that decides dedup, and nothing is kept that does not:
//! an acknowledged message's record is let go once every message planned before it is
//! settled, and its identity (a 64-bit digest of its key, [`delivered`]) stays in
//! `delivered` for the life of the journal, so a lost cursor, a rotated rollout or a
//! rescanned file can never make an old turn look new, and a snapshot holds eight bytes
//! per delivered message, never its text. Hook liveness is kept for the latest
//! [`KEPT_TURN_LIVENESS`] turns.
//!
//! # Files
//!
//! * `state.rs`: the state's types and the read-only questions asked of it.
//! * `fold.rs`: how each event changes the state (hooks, transcripts, the server's answers),
//!   with `fold_outbox.rs` (planned messages, sends, commits, letting go of what is settled)
//!   and `fold_tools.rs` (tool calls waiting for their turn's answer).
//! * `delivered.rs`: the compact set of delivered identities.

pub mod delivered;
mod fold;
mod fold_outbox;
mod fold_tools;
mod state;

pub use fold::FORGOTTEN;

pub use state::{
    CommitInFlight, CommitState, MessageRecord, MessageStatus, PromptSeen, RolloutPosition,
    SendRecord, State, TurnLiveness,
};

/// Two prompts with the same text within this window are one prompt delivered twice.
pub const PROMPT_DEDUP_WINDOW_MS: u64 = 500;
/// A SessionStart within this window of the previous one is ignored.
pub const SESSION_START_DEBOUNCE_MS: u64 = 2000;
/// Prompts whose recall block is kept for reuse.
pub const RECALL_CACHE_ENTRIES: usize = 8;
/// Turns whose hook liveness ([`State::turns`]) is kept; the oldest is let go first.
pub const KEPT_TURN_LIVENESS: usize = 256;
/// Settled records of a turn whose other message is not settled (its prompt may come late)
/// are kept, to keep the cursor behind that turn, while the state keeps at most this many
/// records.
pub const KEPT_HALF_TURN_RECORDS: usize = 256;
/// Turns whose tool calls wait for their answer to be planned ([`State::tool_calls`]); the
/// oldest is let go first.
pub const KEPT_TOOL_TURNS: usize = 256;
/// Retryable failures of one message sent on its own before it is set aside.
pub const MAX_SINGLE_ATTEMPTS: u32 = 8;

/// Rough token estimate of `len` bytes of text.
pub fn estimate_tokens(len: u64) -> u64 {
    len.div_ceil(4)
}
