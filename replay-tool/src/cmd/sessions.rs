//! `ovreplay sessions`: the sessions that have a journal.
//!
//! TODO: needs the event codec and projector (`ov_engine::codec`, `ov_engine::projector`)
//! to summarise each session.

use crate::cli::SessionsArgs;

/// Runs `ovreplay sessions`.
pub fn run(_args: &SessionsArgs) -> anyhow::Result<()> {
    Err(crate::exit::not_yet_available(
        "sessions",
        "the event codec and projector (ov_engine::codec, ov_engine::projector)",
    ))
}
