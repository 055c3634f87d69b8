//! `ovreplay follow [JOURNAL|DIR]`: print events as they are appended.
//!
//! TODO: needs the event codec (`ov_engine::codec`); watch with notify plus a periodic re-read.

use crate::cli::FollowArgs;

/// Runs `ovreplay follow`.
pub fn run(_args: &FollowArgs) -> anyhow::Result<()> {
    Err(crate::exit::not_yet_available(
        "follow",
        "the event codec (ov_engine::codec)",
    ))
}
