//! Transcript files of harnesses other than ZCode (whose rollout is [`crate::rollout`]).
//!
//! Each reader turns a byte range of its harness's transcript into the same
//! [`crate::turn::RolloutChunk`] the rollout reader produces, so the turn book, the
//! journal and the planner never learn which harness wrote the file.

pub mod claude_code;
pub mod copilot;
pub mod gemini;
pub mod tail;
