//! `ovhook`: OpenViking long-term memory for ZCode.
//!
//! Hook subcommands read the hook payload on stdin, journal it, answer on stdout in
//! ZCode's canonical schema (or print nothing) and exit 0 on every path, panics
//! included. argv is parsed by hand: the hook hot path must start in about a
//! millisecond.

mod detach;
mod doctor;
mod drain;
mod harness;
mod hooks;
mod install;
mod logfile;
mod mcp;
mod worker;

use std::process::ExitCode;

const USAGE: &str = "\
usage: ovhook <command>

hook commands (stdin: the hook payload; always exit 0):
  session-start        inject the OpenViking profile, drain unsent work
  user-prompt-submit   recall memories relevant to the prompt
  pre-tool-use         deny viking:// paths for Read/Glob/Grep
  stop                 capture the turn (returns at once; a detached worker sends)

other commands:
  install [--harness zcode] [--scope user|project] [--no-mcp] [--api-key -] ...
                       (ovhook install --help for every option)
  uninstall            remove our entries from every place an install wrote
  drain                finish all unfinished work of every session
  doctor               check the installation, the server and the journals
  mcp                  stdio MCP proxy to the OpenViking server
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first().map(String::as_str) else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &args[1..];
    if let Some(event) = harness::HookEvent::from_command(cmd) {
        hooks::run_guarded(event);
        return ExitCode::SUCCESS;
    }
    let result = match cmd {
        "worker" => worker::run(rest),
        "drain" => drain::run(rest),
        "install" => install::run(rest),
        "uninstall" => install::run_uninstall(rest),
        "doctor" => doctor::run(rest),
        "mcp" => mcp::run(rest),
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            Ok(0)
        }
        "-V" | "--version" => {
            println!(
                "ovhook {} (commit {})",
                env!("CARGO_PKG_VERSION"),
                env!("OVHOOK_GIT_COMMIT")
            );
            Ok(0)
        }
        other => {
            eprintln!("ovhook: unknown command '{other}'\n\n{USAGE}");
            Ok(2)
        }
    };
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
