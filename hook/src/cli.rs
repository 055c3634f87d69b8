//! ovhook's command line: one clap description of every command and flag, from which every
//! command gets its typed arguments. `--help`, the usage errors (exit 2), `ovhook completions
//! SHELL` and `ovhook man` ([`crate::cmd::pages`]) all come from it.
//!
//! # The hook fast path
//!
//! Every installed hook runs `ovhook [--harness NAME] EVENT` (EVENT one of [`HookEvent::ALL`]'s
//! commands) and must start in about a millisecond. [`hook_call`] reads exactly that shape from
//! argv by hand and `main` answers it before any clap type is built: building the clap
//! description and parsing with it costs a hook about a tenth of a millisecond more
//! (BENCHMARKS.md, "hook start-up and the command line"). The description still holds the hook
//! commands (for help, completions and man pages) and parses them when argv has another shape
//! (`--harness=NAME`); a test checks that the two read every event and harness alike. Whatever
//! follows the event is ignored by both: a hook never fails on its argv.
//!
//! `--harness` before the command names the agent whose hooks run it; a name ovhook does not
//! know is accepted (the hook logs it and passes through), so a hook never exits 2. `install`
//! and `uninstall` take their own `--harness`, checked against [`harness::ALL`].

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use clap::builder::{NonEmptyStringValueParser, PossibleValue, PossibleValuesParser};
use clap::{Arg, ArgAction, Args, FromArgMatches, Subcommand, ValueEnum};
use ov_engine::config::Secret;

use crate::harness::{self, HookEvent};

/// `ovhook --version`: the version and the commit it was built from (`build.rs`).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("OVHOOK_GIT_COMMIT"),
    ")"
);

/// A hook invocation: the event and the harness argv names (`None`: the default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCall {
    /// The hook event.
    pub event: HookEvent,
    /// `--harness NAME`, as given.
    pub harness: Option<String>,
}

/// The hook fast path: argv (without the program name) as every installed hook writes it,
/// `[--harness NAME] EVENT [ANYTHING...]`, read without clap. `None` for any other shape.
pub fn hook_call(args: &[OsString]) -> Option<HookCall> {
    let (harness, rest) = match args {
        [flag, name, rest @ ..] if flag == "--harness" => {
            (Some(name.to_string_lossy().into_owned()), rest)
        }
        rest => (None, rest),
    };
    let event = HookEvent::from_command(rest.first()?.to_str()?)?;
    Some(HookCall { event, harness })
}

/// A parsed command line.
#[derive(Debug)]
pub enum Parsed {
    /// A hook command (argv the fast path did not take).
    Hook(HookCall),
    /// Any other command.
    Command(Command),
}

/// Parses argv (without the program name). An `Err` is clap's: usage (exit 2), or help and
/// version (exit 0); `exit_code` and `print` say which.
pub fn parse(args: Vec<OsString>) -> Result<Parsed, clap::Error> {
    let argv = std::iter::once(OsString::from("ovhook")).chain(args);
    let matches = command().try_get_matches_from(argv)?;
    let harness = matches.get_one::<String>("harness").cloned();
    if let Some(event) = matches.subcommand_name().and_then(HookEvent::from_command) {
        return Ok(Parsed::Hook(HookCall { event, harness }));
    }
    let mut command = Command::from_arg_matches(&matches)?;
    let usage = |msg: String| command_error(clap::error::ErrorKind::ArgumentConflict, msg);
    // `--harness` before the command goes with a hook, install or uninstall only; for these
    // two it must name a harness, as their own `--harness` does.
    let place = match &mut command {
        Command::Install(a) => Some(&mut a.place),
        Command::Uninstall(a) => Some(&mut a.place),
        _ => None,
    };
    match (harness, place) {
        (None, _) => {}
        (Some(name), None) => {
            return Err(usage(format!(
                "--harness {name} goes with a hook command, install or uninstall"
            )))
        }
        (Some(name), Some(place)) => {
            if harness::named(&name).is_none() {
                return Err(command_error(
                    clap::error::ErrorKind::InvalidValue,
                    format!(
                        "unsupported harness '{name}' (supported: {})",
                        harness::names().join(", ")
                    ),
                ));
            }
            place.harness = place.harness.take().or(Some(name));
        }
    }
    if let Command::Install(InstallArgs { place, .. })
    | Command::Uninstall(UninstallArgs { place }) = &mut command
    {
        match (place.scope, &place.project) {
            (Some(ScopeArg::User), Some(_)) => {
                return Err(usage("--project goes with --scope project".to_owned()))
            }
            (None, Some(_)) => place.scope = Some(ScopeArg::Project),
            _ => {}
        }
    }
    Ok(Parsed::Command(command))
}

/// Prints a usage error a command found (in clap's format, as clap's own); its exit code, 2.
pub fn usage_error(msg: impl std::fmt::Display) -> i32 {
    let _ = command_error(clap::error::ErrorKind::ArgumentConflict, msg.to_string()).print();
    2
}

/// A usage error found once clap has parsed argv, in clap's words (exit 2).
fn command_error(kind: clap::error::ErrorKind, msg: String) -> clap::Error {
    command().error(kind, msg)
}

/// The commands other than the hooks.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Install the hooks (and the MCP server) into an agent's configuration
    Install(InstallArgs),
    /// Remove our entries from every place an install wrote; the journals stay
    Uninstall(UninstallArgs),
    /// Finish all unfinished work of every session
    Drain(DrainArgs),
    /// Pause capture and recall (everywhere, this repository, one session); turns made while
    /// paused are never sent, even after resume
    Pause(ScopeArgs),
    /// Resume what `ovhook pause` paused (the same scope)
    Resume(ScopeArgs),
    /// Say whether capture is on for this project, and why not
    Status,
    /// Delete a session from the OpenViking server and never send it again (or never send one
    /// of its turns)
    Forget(ForgetArgs),
    /// Check the installation (here and in every project), the server and the journals
    Doctor(DoctorArgs),
    /// Stdio MCP proxy to the OpenViking server configured in ~/.openviking/ovcli.conf or
    /// OPENVIKING_URL / OPENVIKING_API_KEY
    Mcp,
    /// The detached worker of one session (started by the hooks; not for users)
    #[command(hide = true)]
    Worker(WorkerArgs),
    /// Print the shell completion script
    #[command(hide = true)]
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
    /// Print the man page of ovhook or of one command; --out DIR writes every page
    #[command(hide = true)]
    Man(ManArgs),
}

/// Where `install` and `uninstall` work: the agent, the scope, the home folder.
#[derive(Debug, Args)]
pub struct PlaceArgs {
    /// The agent (default: zcode)
    #[arg(long, value_name = "NAME", value_parser = harness_names())]
    pub harness: Option<String>,
    /// user: the user's own configuration (default); project: the repository holding --project
    /// DIR (the current folder by default), our hooks only, no credentials or URLs
    #[arg(long, value_enum, value_name = "SCOPE")]
    pub scope: Option<ScopeArg>,
    /// A folder inside the repository for --scope project (implies it)
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub project: Option<PathBuf>,
    /// Home folder to work on (default: $HOME)
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub home: Option<PathBuf>,
}

/// `--scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    /// The user's own configuration.
    User,
    /// One repository's configuration.
    Project,
}

/// `ovhook install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub place: PlaceArgs,
    /// Install the hooks without the OpenViking MCP server
    #[arg(long)]
    pub no_mcp: bool,
    /// For an agent that runs only hooks you trust (Codex): record that you trust ovhook's
    /// hooks, as its own review screen does (without --trust or --no-trust, install asks when
    /// run on a terminal)
    #[arg(long, conflicts_with = "no_trust")]
    pub trust: bool,
    /// Do not record trust in ovhook's hooks, and do not ask
    #[arg(long)]
    pub no_trust: bool,
    /// OpenViking server URL, written to ~/.openviking/ovcli.conf (0600; empty: remove it)
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// API key for ovcli.conf; `--api-key -` reads it from stdin (a key in argv is visible in
    /// `ps`). Without this flag OPENVIKING_API_KEY is used when set
    #[arg(long, value_name = "KEY", value_parser = secret)]
    pub api_key: Option<Secret>,
    /// OpenViking account for ovcli.conf (empty: remove it)
    #[arg(long, value_name = "ACCOUNT")]
    pub account: Option<String>,
    /// OpenViking user for ovcli.conf (empty: remove it)
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
}

impl InstallArgs {
    /// `--trust` (true), `--no-trust` (false), neither (ask).
    pub fn trust(&self) -> Option<bool> {
        (self.trust || self.no_trust).then_some(self.trust)
    }
}

/// `ovhook uninstall`: every place any install wrote (every recorded project too), unless
/// `--scope project` names one repository.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub place: PlaceArgs,
}

/// `ovhook drain`.
#[derive(Debug, Args)]
pub struct DrainArgs {
    /// Print nothing
    #[arg(long)]
    pub quiet: bool,
    /// The session being resumed (SessionStart with `source: resume`): its drain commits only
    /// by threshold
    #[arg(long, value_name = "SESSION", hide = true)]
    pub resumed: Option<String>,
}

/// The scope of `pause` and `resume` (no flag: every session of every project).
#[derive(Debug, Args)]
pub struct ScopeArgs {
    /// Only the repository of the current folder (every clone, subfolder and worktree of it)
    #[arg(long, conflicts_with = "session")]
    pub project: bool,
    /// Only this session (the agent's session id)
    #[arg(long, value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
    pub session: Option<String>,
}

/// `ovhook forget`.
#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// The agent's session id (as `ovreplay sessions` lists it): the session is deleted from the
    /// OpenViking server and nothing of it is ever sent again
    #[arg(long, value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
    pub session: String,
    /// Only this turn: it is never sent; what the server holds of it stays (OpenViking 0.5.2
    /// cannot delete one turn; forget the session to remove it)
    #[arg(long, value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
    pub turn: Option<String>,
}

/// `ovhook doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Home folder to check (default: $HOME)
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub home: Option<PathBuf>,
}

/// `ovhook worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The session (its journal folder's name or the agent's id)
    #[arg(long, value_name = "ID")]
    pub session: String,
    /// What started the worker
    #[arg(long, value_enum, default_value = "stop")]
    pub reason: WorkerReasonArg,
}

/// `ovhook worker --reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WorkerReasonArg {
    /// A Stop hook.
    Stop,
    /// A SessionEnd hook.
    SessionEnd,
}

/// `ovhook man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (default: ovhook's own)
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
    /// Write every page into DIR (`ovhook.1`, `ovhook-<command>.1`)
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub out: Option<PathBuf>,
}

/// The arguments before the command.
#[derive(Debug, Args)]
struct Root {
    /// The agent whose hooks run this command: zcode (default), or another of the possible
    /// values; a hook of an unknown agent passes through
    #[arg(long, value_name = "NAME", value_parser = AnyHarness)]
    harness: Option<String>,
}

/// `--api-key`: held as a [`Secret`] from the moment it is parsed.
fn secret(value: &str) -> Result<Secret, std::convert::Infallible> {
    Ok(Secret::from(value))
}

/// `--harness` values install and uninstall accept.
fn harness_names() -> PossibleValuesParser {
    PossibleValuesParser::new(harness::names())
}

/// `--harness` before a command: any name (a hook passes an unknown one through), the known
/// ones offered by completions and help.
#[derive(Debug, Clone, Copy)]
struct AnyHarness;

impl clap::builder::TypedValueParser for AnyHarness {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            harness::names().into_iter().map(PossibleValue::new),
        ))
    }
}

/// What each hook command does, for its help.
fn hook_about(event: HookEvent) -> &'static str {
    match event {
        HookEvent::SessionStart => "Inject the OpenViking profile and drain unsent work",
        HookEvent::UserPromptSubmit => "Recall memories relevant to the prompt",
        HookEvent::PreToolUse => "Deny viking:// paths to the agent's file and shell tools",
        HookEvent::PostToolUse => "Journal the tool call for the turn's answer (capture.tools)",
        HookEvent::Stop => "Capture the turn (returns at once; a detached worker sends)",
        HookEvent::SessionEnd => {
            "Capture what is left and commit the session (returns at once; detached)"
        }
        HookEvent::PreCompact => {
            "Send and commit what the session holds before the agent compacts its context"
        }
        HookEvent::SubagentStop => "Capture a subagent's turn where capture.subagents says",
    }
}

fn hook_command(event: HookEvent) -> clap::Command {
    let about = hook_about(event);
    clap::Command::new(event.command())
        .about(about)
        .long_about(format!(
            "{about}. Reads the hook payload on stdin, prints the agent's own JSON answer or \
             nothing, and exits 0 on every path."
        ))
        // Whatever follows the event is ignored, as the fast path ignores it.
        .arg(
            Arg::new("ignored")
                .num_args(0..)
                .trailing_var_arg(true)
                .allow_hyphen_values(true)
                .action(ArgAction::Append)
                .hide(true),
        )
}

/// The whole command line: the hook commands, then the others.
pub fn command() -> clap::Command {
    let root = clap::Command::new("ovhook").subcommands(HookEvent::ALL.map(hook_command));
    // What the derive adds first: the root's own texts below are the ones that stay.
    Command::augment_subcommands(Root::augment_args(root))
        .version(VERSION)
        .about("OpenViking long-term memory for coding agents, through their lifecycle hooks")
        .long_about(
            "OpenViking long-term memory for coding agents (every agent in the --harness list) \
             through their lifecycle hooks: the user's profile at session start, recall on every \
             prompt, capture of every turn, OpenViking's MCP tools. Every hook invocation is \
             journaled first; nothing acknowledged is lost and nothing is sent twice.",
        )
        .subcommand_required(true)
        .arg_required_else_help(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn description_is_consistent() {
        command().debug_assert();
    }

    /// The fast path and clap read every hook argv an install writes (and its `=` form, and
    /// anything after the event) as the same event and harness.
    #[test]
    fn the_fast_path_and_clap_agree_on_every_hook_command() {
        let names: Vec<Option<&str>> = std::iter::once(None)
            .chain(harness::names().into_iter().map(Some))
            .chain([Some("no-such-agent")])
            .collect();
        for event in HookEvent::ALL {
            for name in &names {
                for tail in [&[][..], &["extra", "--flag"][..]] {
                    let mut args: Vec<&str> =
                        name.map(|n| vec!["--harness", n]).unwrap_or_default();
                    args.push(event.command());
                    args.extend_from_slice(tail);
                    let want = HookCall {
                        event,
                        harness: name.map(str::to_owned),
                    };
                    assert_eq!(hook_call(&argv(&args)).as_ref(), Some(&want), "{args:?}");
                    match parse(argv(&args)) {
                        Ok(Parsed::Hook(call)) => assert_eq!(call, want, "{args:?}"),
                        other => panic!("{args:?}: {other:?}"),
                    }
                }
                if let Some(n) = name {
                    let eq = format!("--harness={n}");
                    match parse(argv(&[&eq, event.command()])) {
                        Ok(Parsed::Hook(call)) => {
                            assert_eq!(call.harness.as_deref(), Some(*n));
                            assert_eq!(call.event, event);
                        }
                        other => panic!("{eq}: {other:?}"),
                    }
                }
            }
        }
    }

    /// What the fast path leaves to clap: no event, another command, a flag first.
    #[rstest::rstest]
    #[case::nothing(&[])]
    #[case::install(&["install", "--harness", "codex"])]
    #[case::harness_then_install(&["--harness", "codex", "install"])]
    #[case::help(&["--help"])]
    #[case::harness_alone(&["--harness", "stop"])]
    #[case::unknown(&["sto"])]
    fn other_shapes_go_to_clap(#[case] args: &[&str]) {
        assert_eq!(hook_call(&argv(args)), None);
    }

    #[test]
    fn every_hook_command_names_its_event() {
        for event in HookEvent::ALL {
            assert_eq!(HookEvent::from_command(event.command()), Some(event));
        }
    }

    #[rstest::rstest]
    #[case::install_flags(&["install", "--harness", "codex", "--scope", "project", "--project", "/", "--no-mcp", "--trust", "--url", "", "--api-key", "-", "--account", "a", "--user", "u", "--home", "/h"])]
    #[case::install_inline(&["install", "--harness=gemini", "--url=http://x"])]
    #[case::harness_before_install(&["--harness", "kilo", "install"])]
    #[case::uninstall(&["uninstall", "--scope", "user", "--home", "/h"])]
    #[case::drain(&["drain", "--quiet", "--resumed", "s"])]
    #[case::pause_project(&["pause", "--project"])]
    #[case::resume_session(&["resume", "--session", "s"])]
    #[case::status(&["status"])]
    #[case::forget(&["forget", "--session", "s", "--turn", "t"])]
    #[case::doctor(&["doctor", "--home", "/h"])]
    #[case::mcp(&["mcp"])]
    #[case::worker(&["worker", "--session", "s", "--reason", "session-end"])]
    #[case::completions(&["completions", "zsh"])]
    #[case::man(&["man", "--out", "/tmp/x"])]
    fn every_command_and_flag_parses(#[case] args: &[&str]) {
        match parse(argv(args)) {
            Ok(Parsed::Command(_)) => {}
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[rstest::rstest]
    #[case::no_command(&[])]
    #[case::unknown_command(&["sto"])]
    #[case::unknown_flag(&["install", "--no-such-flag"])]
    #[case::unknown_harness(&["install", "--harness", "claude"])]
    #[case::missing_value(&["install", "--url"])]
    #[case::install_only_flag(&["uninstall", "--url", "x"])]
    #[case::bad_scope(&["install", "--scope", "everywhere"])]
    #[case::both_trusts(&["install", "--trust", "--no-trust"])]
    #[case::two_scopes(&["pause", "--project", "--session", "s"])]
    #[case::empty_session(&["pause", "--session", ""])]
    #[case::forget_without_session(&["forget"])]
    #[case::status_with_argument(&["status", "x"])]
    #[case::harness_with_drain(&["--harness", "codex", "drain"])]
    #[case::unknown_harness_before_install(&["--harness", "claude", "install"])]
    #[case::project_with_user_scope(&["install", "--scope", "user", "--project", "/x"])]
    fn usage_errors_exit_2(#[case] args: &[&str]) {
        let err = parse(argv(args)).expect_err("a usage error");
        assert_eq!(err.exit_code(), 2, "{args:?}: {err}");
    }

    #[rstest::rstest]
    #[case::help(&["--help"])]
    #[case::help_command(&["help", "install"])]
    #[case::install_help(&["install", "--help"])]
    #[case::version(&["--version"])]
    fn help_and_version_exit_0(#[case] args: &[&str]) {
        let err = parse(argv(args)).expect_err("help");
        assert_eq!(err.exit_code(), 0, "{args:?}: {err}");
    }

    #[test]
    fn install_help_says_how_to_keep_the_key_out_of_argv() {
        let help = command()
            .find_subcommand_mut("install")
            .expect("install")
            .render_long_help()
            .to_string();
        for want in ["--api-key -", "stdin", "OPENVIKING_API_KEY", "`ps`"] {
            assert!(help.contains(want), "{want}: {help}");
        }
    }
}
