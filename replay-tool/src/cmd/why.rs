//! `ovreplay why JOURNAL TURN_ID`: the story of one turn.
//!
//! TODO: needs the event codec and projector (`ov_engine::codec`, `ov_engine::projector`).

use crate::cli::WhyArgs;

/// Runs `ovreplay why`.
pub fn run(_args: &WhyArgs) -> anyhow::Result<()> {
    Err(crate::exit::not_yet_available(
        "why",
        "the event codec and projector (ov_engine::codec, ov_engine::projector)",
    ))
}
