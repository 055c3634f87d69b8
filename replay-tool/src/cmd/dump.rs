//! `ovreplay dump JOURNAL`.
//!
//! TODO: needs the event codec and projector (`ov_engine::codec`, `ov_engine::projector`).

use crate::cli::JournalArgs;

/// Runs `ovreplay dump`.
pub fn run(_args: &JournalArgs) -> anyhow::Result<()> {
    Err(crate::exit::not_yet_available(
        "dump",
        "the event codec and projector (ov_engine::codec, ov_engine::projector)",
    ))
}
