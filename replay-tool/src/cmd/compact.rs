//! `ovreplay compact JOURNAL`.
//!
//! TODO: needs the event codec and projector (`ov_engine::codec`, `ov_engine::projector`).

use crate::cli::JournalArgs;

/// Runs `ovreplay compact`.
pub fn run(_args: &JournalArgs) -> anyhow::Result<()> {
    Err(crate::exit::not_yet_available(
        "compact",
        "the event codec and projector (ov_engine::codec, ov_engine::projector)",
    ))
}
