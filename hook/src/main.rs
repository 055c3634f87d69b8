//! `ovhook`: OpenViking long-term memory for coding agents (every harness in
//! [`harness::ALL`]).
//!
//! Hook subcommands read the hook payload on stdin, journal it, answer on stdout in
//! the harness's own output schema (or print nothing) and exit 0 on every path, panics
//! included. argv is parsed by hand: the hook hot path must start in about a
//! millisecond.

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

use std::process::ExitCode;

const USAGE: &str = "\
usage: ovhook [--harness zcode|claude-code|qwen|codex|copilot|gemini|opencode|kilo|cursor|antigravity] <command>

hook commands (stdin: the hook payload; always exit 0; the harness is the one the
hooks were installed for, zcode when not given):
  session-start        inject the OpenViking profile, drain unsent work
  user-prompt-submit   recall memories relevant to the prompt
  pre-tool-use         deny viking:// paths for Read/Glob/Grep
  post-tool-use        journal the tool call for the turn's answer (capture.tools)
  stop                 capture the turn (returns at once; a detached worker sends)
  session-end          capture what is left and commit the session (detached)

other commands:
  install [--harness NAME] [--scope user|project] [--no-mcp] [--api-key -] ...
                       (ovhook install --help for every option)
  uninstall            remove our entries from every place an install wrote
  drain                finish all unfinished work of every session
  pause [--project | --session ID]
                       stop capture and recall (everywhere, this repository, one session);
                       turns made while paused are never sent
  resume [--project | --session ID]
                       turn them back on
  status               whether capture is on for this project, and why not
  forget --session ID [--turn ID]
                       delete a session from the server and never send it (or one turn) again
  doctor               check the installation, the server and the journals
  mcp                  stdio MCP proxy to the OpenViking server
";

/// Every non-hook command `main` dispatches (the hook commands are [`harness::HookEvent`]s).
pub const OTHER_COMMANDS: [&str; 12] = [
    "worker",
    "drain",
    "pause",
    "resume",
    "status",
    "forget",
    "install",
    "uninstall",
    "doctor",
    "mcp",
    "completions",
    "man",
];

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // `--harness NAME` before the command: the installed hook commands name theirs.
    let mut harness_name = None;
    if args.first().map(String::as_str) == Some("--harness") {
        if let Some(name) = args.get(1).cloned() {
            harness_name = Some(name);
            args.drain(..2);
        }
    }
    let Some(cmd) = args.first().map(String::as_str) else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    if let Some(event) = harness::HookEvent::from_command(cmd) {
        match harness_name
            .as_deref()
            .map_or(Some(harness::DEFAULT), harness::named)
        {
            Some(h) => hooks::run_guarded(event, h),
            // A hook never fails: an unknown harness is logged, the hook passes through.
            None => hooks::unknown_harness(harness_name.as_deref().unwrap_or_default()),
        }
        return ExitCode::SUCCESS;
    }
    let mut rest: Vec<String> = args.get(1..).unwrap_or_default().to_vec();
    if let Some(h) = harness_name {
        rest.splice(0..0, ["--harness".to_string(), h]);
    }
    let rest = rest.as_slice();
    let result = match cmd {
        "worker" => worker::run(rest),
        "drain" => drain::run(rest),
        "pause" => pause_cmd::run_pause(rest),
        "resume" => pause_cmd::run_resume(rest),
        "status" => pause_cmd::run_status(rest),
        "forget" => forget::run(rest),
        "install" => cmd::install::run(rest),
        "uninstall" => cmd::uninstall::run(rest),
        "doctor" => cmd::doctor::run(rest),
        "mcp" => mcp::run(rest),
        "completions" => cli::run_completions(rest),
        "man" => cli::run_man(rest),
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
