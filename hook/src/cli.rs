//! ovhook's command line described as a clap [`Command`], for shell completions and man pages
//! (`ovhook completions SHELL` and `ovhook man [COMMAND]`, both hidden).
//!
//! argv itself is parsed by hand in each subcommand: a hook must start in about a millisecond,
//! and no hook path calls into this module. A test keeps this description and the hand parsers
//! in step (every flag described here is accepted, and every command dispatches).

use std::io::Write;

use anyhow::Context;
use clap::{Arg, ArgAction, Command};

fn flag(name: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .action(ArgAction::SetTrue)
        .help(help)
}

fn value(name: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    Arg::new(name).long(name).value_name(value_name).help(help)
}

fn home() -> Arg {
    value("home", "DIR", "Home folder to work on (default: $HOME)")
        .value_hint(clap::ValueHint::DirPath)
}

fn harness() -> Arg {
    value(
        "harness",
        "NAME",
        "The agent to install into (default: zcode)",
    )
    .value_parser(crate::harness::names())
}

fn scope() -> Arg {
    value(
        "scope",
        "SCOPE",
        "user: the user's own configuration (default); project: the repository holding \
         --project DIR (hooks only, no credentials or URLs)",
    )
    .value_parser(["user", "project"])
}

fn project() -> Arg {
    value(
        "project",
        "DIR",
        "A folder inside the repository for --scope project (default: the current folder)",
    )
    .value_hint(clap::ValueHint::DirPath)
}

fn hook(name: &'static str, about: &'static str) -> Command {
    Command::new(name).about(about).long_about(format!(
        "{about}. Reads the hook payload on stdin, prints the agent's canonical JSON or \
         nothing, and exits 0 on every path."
    ))
}

/// The whole command line.
pub fn command() -> Command {
    Command::new("ovhook")
        .version(env!("CARGO_PKG_VERSION"))
        .about("OpenViking long-term memory for coding agents' lifecycle hooks")
        .long_about(
            "OpenViking long-term memory for ZCode (and other agents) through their lifecycle \
             hooks: the user's profile at session start, recall on every prompt, capture of \
             every turn, OpenViking's MCP tools. Every hook invocation is journaled first; \
             nothing acknowledged is lost and nothing is sent twice.",
        )
        .subcommand_required(true)
        .subcommand(hook(
            "session-start",
            "Inject the OpenViking profile and drain unsent work",
        ))
        .subcommand(hook(
            "user-prompt-submit",
            "Recall memories relevant to the prompt",
        ))
        .subcommand(hook(
            "pre-tool-use",
            "Deny viking:// paths for Read/Glob/Grep",
        ))
        .subcommand(hook(
            "post-tool-use",
            "Journal the tool call for the turn's answer (capture.tools)",
        ))
        .subcommand(hook(
            "stop",
            "Capture the turn (returns at once; a detached worker sends)",
        ))
        .subcommand(
            Command::new("install")
                .about("Install the hooks (and the MCP server) into an agent's configuration")
                .arg(harness())
                .arg(scope())
                .arg(project())
                .arg(flag(
                    "no-mcp",
                    "Install the hooks without the OpenViking MCP server",
                ))
                .arg(flag(
                    "trust",
                    "For an agent that runs only hooks you trust (Codex): record that you trust \
                     ovhook's hooks, as its own review screen does",
                ))
                .arg(
                    flag(
                        "no-trust",
                        "Do not record trust in ovhook's hooks, and do not ask",
                    )
                    .conflicts_with("trust"),
                )
                .arg(value(
                    "url",
                    "URL",
                    "OpenViking server URL, written to ~/.openviking/ovcli.conf (empty: remove)",
                ))
                .arg(value(
                    "api-key",
                    "KEY",
                    "API key for ovcli.conf; `-` reads it from stdin (a key in argv is visible \
                     in `ps`). Without this flag OPENVIKING_API_KEY is used when set",
                ))
                .arg(value(
                    "account",
                    "ACCOUNT",
                    "OpenViking account for ovcli.conf",
                ))
                .arg(value("user", "USER", "OpenViking user for ovcli.conf"))
                .arg(home()),
        )
        .subcommand(
            Command::new("uninstall")
                .about("Remove our entries from every place an install wrote; the journals stay")
                .arg(harness())
                .arg(scope())
                .arg(project())
                .arg(home()),
        )
        .subcommand(
            Command::new("drain")
                .about("Finish all unfinished work of every session")
                .arg(flag("quiet", "Print nothing")),
        )
        .subcommand(
            Command::new("pause")
                .about(
                    "Pause capture and recall (everywhere, this repository, one session); turns \
                     made while paused are never sent, even after resume",
                )
                .arg(flag(
                    "project",
                    "Only the repository of the current folder (every clone and worktree)",
                ))
                .arg(value(
                    "session",
                    "ID",
                    "Only this session (the agent's session id)",
                )),
        )
        .subcommand(
            Command::new("resume")
                .about("Resume what `ovhook pause` paused (the same scope)")
                .arg(flag(
                    "project",
                    "Only the repository of the current folder (every clone and worktree)",
                ))
                .arg(value(
                    "session",
                    "ID",
                    "Only this session (the agent's session id)",
                )),
        )
        .subcommand(
            Command::new("status").about("Say whether capture is on for this project, and why not"),
        )
        .subcommand(
            Command::new("forget")
                .about(
                    "Delete a session from the OpenViking server and never send it again (or \
                     never send one of its turns)",
                )
                .arg(
                    value(
                        "session",
                        "ID",
                        "The agent's session id (`ovreplay sessions`)",
                    )
                    .required(true),
                )
                .arg(value(
                    "turn",
                    "ID",
                    "Only this turn: never sent; what the server holds of it stays (OpenViking \
                     0.5.2 cannot delete one turn)",
                )),
        )
        .subcommand(
            Command::new("doctor")
                .about(
                    "Check the installation (here and in every project), the server and the \
                     journals",
                )
                .arg(home()),
        )
        .subcommand(Command::new("mcp").about("Stdio MCP proxy to the OpenViking server"))
        .subcommand(
            Command::new("completions")
                .hide(true)
                .about("Print the shell completion script")
                .arg(
                    Arg::new("shell")
                        .required(true)
                        .value_parser(clap::value_parser!(clap_complete::Shell)),
                ),
        )
        .subcommand(
            Command::new("man")
                .hide(true)
                .about("Print the man page (of one command)")
                .arg(Arg::new("command")),
        )
}

/// `ovhook completions SHELL`.
pub fn run_completions(args: &[String]) -> anyhow::Result<i32> {
    let [shell] = args else {
        eprintln!("usage: ovhook completions bash|zsh|fish|elvish|powershell");
        return Ok(2);
    };
    let Ok(shell) = shell.parse::<clap_complete::Shell>() else {
        eprintln!("ovhook: unknown shell '{shell}'");
        return Ok(2);
    };
    let mut cmd = command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "ovhook", &mut out);
    std::io::stdout()
        .write_all(&out)
        .context("could not write the completions")?;
    Ok(0)
}

/// `ovhook man [COMMAND]`: the roff man page of ovhook, or of `ovhook COMMAND`, on stdout.
/// `ovhook man --out DIR`: every page into DIR (`ovhook.1`, `ovhook-<command>.1`).
pub fn run_man(args: &[String]) -> anyhow::Result<i32> {
    match args {
        [] => print_page(&man_page(None)?),
        [flag, dir] if flag == "--out" => {
            let dir = std::path::Path::new(dir);
            std::fs::create_dir_all(dir)
                .with_context(|| format!("could not create {}", dir.display()))?;
            let mut pages = vec![(None, "ovhook.1".to_owned())];
            for c in command().get_subcommands().filter(|c| !c.is_hide_set()) {
                let name = c.get_name().to_owned();
                pages.push((Some(name.clone()), format!("ovhook-{name}.1")));
            }
            for (sub, file) in pages {
                let path = dir.join(file);
                std::fs::write(&path, man_page(sub.as_deref())?)
                    .with_context(|| format!("could not write {}", path.display()))?;
            }
            Ok(0)
        }
        [sub]
            if command()
                .find_subcommand(sub)
                .is_some_and(|c| !c.is_hide_set()) =>
        {
            print_page(&man_page(Some(sub))?)
        }
        _ => {
            eprintln!("usage: ovhook man [COMMAND] | ovhook man --out DIR");
            Ok(2)
        }
    }
}

fn print_page(page: &[u8]) -> anyhow::Result<i32> {
    std::io::stdout()
        .write_all(page)
        .context("could not write the man page")?;
    Ok(0)
}

/// The roff page of ovhook (`None`) or of one visible subcommand.
fn man_page(sub: Option<&str>) -> anyhow::Result<Vec<u8>> {
    let root = command();
    let page = match sub {
        None => root,
        Some(sub) => root
            .find_subcommand(sub)
            .with_context(|| format!("no command '{sub}'"))?
            .clone()
            // A one-shot command: the leaked name lives as long as the process anyway.
            .name(&*Box::leak(format!("ovhook-{sub}").into_boxed_str()))
            .version(env!("CARGO_PKG_VERSION")),
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .context("could not render the man page")?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn description_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn every_described_install_flag_is_accepted_by_the_parser() {
        let cmd = command();
        for sub in ["install", "uninstall"] {
            let c = cmd.find_subcommand(sub).expect("sub");
            for arg in c.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                let mut argv = vec![format!("--{long}")];
                if !matches!(arg.get_action(), ArgAction::SetTrue) {
                    let v = match long {
                        "harness" => "zcode",
                        "scope" => "user",
                        _ => "x",
                    };
                    argv.push(v.into());
                }
                if long == "project" {
                    argv = vec![
                        "--scope".into(),
                        "project".into(),
                        "--project".into(),
                        "/".into(),
                    ];
                }
                assert!(
                    crate::cmd::install_args::accepts(&argv, sub == "install"),
                    "{sub} {argv:?} is described but rejected"
                );
            }
        }
    }

    #[test]
    fn every_described_command_dispatches() {
        for c in command().get_subcommands() {
            let name = c.get_name();
            assert!(
                crate::harness::HookEvent::from_command(name).is_some()
                    || crate::OTHER_COMMANDS.contains(&name),
                "{name} is described but not dispatched"
            );
        }
    }
}
