//! The `ovreplay` command line: clap types only. Each subcommand is run by its own module
//! under [`crate::cmd`]; this file never changes when a command's behaviour does.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Inspect, verify and replay ovhook journals; play recorded ZCode sessions through ovhook.
///
/// Exit codes: 0 ok, 1 failed check or user error, 2 usage, 255 internal error.
#[derive(Debug, Parser)]
#[command(name = "ovreplay", version, propagate_version = true)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// `ovreplay` subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the sessions that have a journal under the state root.
    Sessions(SessionsArgs),
    /// Print every event of a journal, one per line.
    Dump(DumpArgs),
    /// Check every frame of a journal; exit non-zero with every damaged range and torn tail found.
    Verify(VerifyArgs),
    /// Print the folded state of a journal (acknowledged keys, outbox, cursor, ...).
    State(JournalArgs),
    /// Tell the story of one turn: seen, planned, sent, acknowledged, committed.
    Why(WhyArgs),
    /// Print events as they are appended to a journal (or to every journal of a folder).
    Follow(FollowArgs),
    /// Roll a journal into a snapshot and remove the segments it replaces.
    Compact(JournalArgs),
    /// Print the messages a first capture of a ZCode rollout file would send.
    Plan(PlanArgs),
    /// Play a recorded ZCode session through the real ovhook binary, with faults, and
    /// count what reached the OpenViking server.
    Simulate(SimulateArgs),
    /// Print the shell completion script.
    #[command(hide = true)]
    Completions(CompletionsArgs),
    /// Print the man page, or write every page into a folder.
    #[command(hide = true)]
    Man(ManArgs),
}

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}

/// Arguments of `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write `ovreplay.1` and `ovreplay-<command>.1` into this folder instead of printing
    /// `ovreplay.1`.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// State root (default: `$OVHOOK_STATE_DIR`, `$OPENVIKING_HOME/ovhook`, `~/.openviking/ovhook`).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of the commands that read one journal.
#[derive(Debug, Args)]
pub struct JournalArgs {
    /// The journal directory (`<state root>/journals/<session>`), or a bare session id.
    pub journal: PathBuf,
    /// State root a bare session id is looked up under (default: the usual state root).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// The journal directory (`<state root>/journals/<session>`), or a bare session id.
    pub journal: PathBuf,
    /// State root a bare session id is looked up under (default: the usual state root).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Only events of this kind (`hook`, `planned`, `send-started`, ...); repeatable.
    #[arg(long, value_name = "KIND")]
    pub kind: Vec<String>,
    /// Only events about this turn id (hooks, rollout reads, plans, and the sends, outcomes
    /// and reconciliations carrying its messages).
    #[arg(long, value_name = "TURN_ID")]
    pub turn: Option<String>,
    /// Print one JSON object per event (JSON lines).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The journal directory (`<state root>/journals/<session>`).
    pub journal: PathBuf,
    /// Cut a torn tail (an interrupted append, proven by the bytes at the end of the newest
    /// segment) instead of only reporting it. Damage is never cut.
    #[arg(long)]
    pub repair: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `why`.
#[derive(Debug, Args)]
pub struct WhyArgs {
    /// The journal directory, or a bare session id.
    pub journal: PathBuf,
    /// The turn (`turn_<uuid>`).
    pub turn_id: String,
    /// State root a bare session id is looked up under (default: the usual state root).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `follow`.
#[derive(Debug, Args)]
pub struct FollowArgs {
    /// A journal directory, or a folder of journals (default: the state root's `journals/`).
    pub path: Option<PathBuf>,
    /// State root whose `journals/` is followed when no path is given; also where a bare
    /// session id is looked up.
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Print JSON lines.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// A ZCode rollout file (`model-io-<sessionId>.jsonl`).
    pub rollout: PathBuf,
    /// Print the plan as a JSON array of `{"turn_id","role","content"}`.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The recorded ZCode rollout file to play.
    pub rollout: PathBuf,
    /// OpenViking server URL. Without it ovhook runs on its embedded default (journal only).
    #[arg(long)]
    pub url: Option<String>,
    /// API key passed to ovhook as `OPENVIKING_API_KEY` (and used to read the server back).
    #[arg(long)]
    pub api_key: Option<String>,
    /// Account passed as `OPENVIKING_ACCOUNT`.
    #[arg(long)]
    pub account: Option<String>,
    /// User passed as `OPENVIKING_USER`.
    #[arg(long)]
    pub user: Option<String>,
    /// Faults, comma-separated; turns numbered from 0: `drop-stop@N`, `dup-stop@N`,
    /// `late-stop@N`, `kill:POINT@N`, `server-down@A-B`, `race-stop@N`, `rotate@N`,
    /// `partial-line@N`, `server-slow@A-B`, `server-html@A-B`, `server-redirect@A-B`,
    /// `truncate@N`, `no-turn-id@N`, `stdin-open@N`, `lock-held@N`, `flip-first@N`,
    /// `flip-mid@N`, `compact@N`, `flip-snapshot@N`, `compact-race@N`, `fifo-rollout@N`,
    /// `huge-answer@N`, `forge-frame@N`, `forge-header@N`, `repo:KIND@0` (config-stdout,
    /// config-tty, raise-limits,
    /// git-config-huge, git-origin-token), `url-userinfo@0`.
    #[arg(long, value_name = "SPEC")]
    pub faults: Option<String>,
    /// The ovhook binary (default: next to ovreplay, else `target/{debug,release}/ovhook`).
    #[arg(long, value_name = "PATH")]
    pub ovhook: Option<PathBuf>,
    /// Keep the temporary HOME/state/work folder and print its path.
    #[arg(long)]
    pub keep: bool,
    /// Seconds to wait for detached workers (and for `ovhook drain`) before giving up.
    #[arg(long, default_value_t = 120)]
    pub worker_timeout: u64,
    /// Print the counts as JSON.
    #[arg(long)]
    pub json: bool,
}
