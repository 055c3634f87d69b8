//! `ovhook`: OpenViking long-term memory for coding agents (every harness in
//! [`harness::ALL`]).
//!
//! Hook subcommands read the hook payload on stdin, journal it, answer on stdout in
//! the harness's own output schema (or print nothing) and exit 0 on every path, panics
//! included. The command line is described once, in [`cli`]; a hook's argv takes the fast
//! path ([`cli::hook_call`]) and never builds it: a hook starts in about a millisecond.
//!
//! Exit codes: 0 done, 1 failed or refused, 2 usage; a broken pipe on stdout exits 0.

mod cli;
mod cmd;
mod config;
mod detach;
mod doctor;
mod drain;
mod forget;
mod harness;
mod held;
mod hooks;
mod install;
mod logfile;
mod mcp;
mod pause_cmd;
mod worker;

use std::ffi::OsString;
use std::process::ExitCode;

use cli::{Command, HookCall, Parsed};

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if let Some(call) = cli::hook_call(&args) {
        return run_hook(&call);
    }
    match cli::parse(args) {
        Ok(Parsed::Hook(call)) => run_hook(&call),
        Ok(Parsed::Command(command)) => finish(run(command)),
        Err(err) => {
            // Help and version go to stdout (exit 0), usage errors to stderr (exit 2).
            let _ = err.print();
            ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2))
        }
    }
}

/// A hook: the harness argv names (the default when none), or, for a name ovhook does not
/// know, a logged pass-through. Exit 0 on every path.
fn run_hook(call: &HookCall) -> ExitCode {
    match call
        .harness
        .as_deref()
        .map_or(Some(harness::DEFAULT), harness::named)
    {
        Some(h) => hooks::run_guarded(call.event, h),
        None => hooks::unknown_harness(call.harness.as_deref().unwrap_or_default()),
    }
    ExitCode::SUCCESS
}

/// Runs a command other than a hook; its exit code.
fn run(command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Install(args) => cmd::install::run(&args),
        Command::Uninstall(args) => cmd::uninstall::run(&args),
        Command::Drain(args) => drain::run(&args),
        Command::Pause(args) => pause_cmd::run_pause(&args),
        Command::Resume(args) => pause_cmd::run_resume(&args),
        Command::Status => pause_cmd::run_status(),
        Command::Forget(args) => forget::run(&args),
        Command::Doctor(args) => cmd::doctor::run(&args),
        Command::Mcp => mcp::run(),
        Command::Worker(args) => worker::run(&args),
        Command::Completions { shell } => cmd::pages::run_completions(shell),
        Command::Man(args) => cmd::pages::run_man(&args),
    }
}

/// The exit code of a command's result: an error is printed (exit 1), a broken pipe is not.
fn finish(result: anyhow::Result<i32>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("ovhook: {err:#}");
            ExitCode::from(1)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
