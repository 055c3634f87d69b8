//! `ovreplay why JOURNAL TURN_ID [--json]`: the story of one turn, ending with the verdict on
//! whether it is on the server (see [`crate::story`]).

use std::io::Write;

use crate::cli::WhyArgs;
use crate::journal_arg::resolve_journal;
use crate::story;

/// Runs `ovreplay why`.
pub fn run(args: &WhyArgs) -> anyhow::Result<()> {
    let dir = resolve_journal(&args.journal, args.state_dir.as_deref())?;
    let view = crate::view::read_journal(&dir)?;
    let story = story::tell(&view, &args.turn_id);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &story)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", story::render(&story))?;
    }
    out.flush()?;
    Ok(())
}
