//! `ovreplay`: inspect, verify and replay ovhook journals (of every agent ovhook serves), and play
//! recorded ZCode and Claude Code sessions through the real `ovhook` binary (`simulate`).
//!
//! Exit codes: 0 ok, 1 user error or failed check, 2 usage, 255 internal error; a broken
//! pipe on stdout exits 0.

mod cli;
mod cmd;
mod exit;
mod journal_arg;
mod render;
mod simulate;
mod story;
mod view;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::exit::Failure;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // --help and --version are "errors" to clap but successes to us.
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => report(&err),
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Sessions(a) => cmd::sessions::run(&a),
        Command::Dump(a) => cmd::dump::run(&a),
        Command::Verify(a) => cmd::verify::run(&a),
        Command::State(a) => cmd::state::run(&a),
        Command::Why(a) => cmd::why::run(&a),
        Command::Follow(a) => cmd::follow::run(&a),
        Command::Compact(a) => cmd::compact::run(&a),
        Command::Plan(a) => cmd::plan::run(&a),
        Command::Simulate(a) => simulate::run(&a),
        Command::Completions(a) => cmd::shell_docs::completions(&a),
        Command::Man(a) => cmd::shell_docs::man(&a),
    }
}

/// Maps an error to its exit code and prints it (nothing for a broken pipe or a silent exit).
fn report(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return ExitCode::SUCCESS;
    }
    let failure = err.chain().find_map(|c| c.downcast_ref::<Failure>());
    let code = failure.map_or(255, Failure::code);
    if !failure.is_some_and(Failure::is_silent) {
        eprintln!("ovreplay: {err:#}");
    }
    ExitCode::from(code)
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
