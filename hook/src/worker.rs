//! `ovhook worker --session <id>`: the detached Stop worker of one session.
//!
//! It builds the session's context (configuration read fresh, the harness's transcript file,
//! the OpenViking client as transport) and runs the engine's worker protocol. Exit status is
//! irrelevant (nobody waits); problems are
//! journaled and logged.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use ov_engine::client::Client;
use ov_engine::config::Config;
use ov_engine::delivery::{self, DeliverySettings, TranscriptSource, Transport, WorkerContext};
use ov_engine::event::WorkerReason;
use ov_engine::projector::State;
use ov_engine::store::SessionStore;

use crate::cli::{WorkerArgs, WorkerReasonArg};
use crate::harness::{self, Harness};

/// A worker's context: configuration, client, and the session's harness.
pub struct WorkerCtx {
    cfg: Config,
    privacy: ov_engine::privacy::Policy,
    client: Option<Client>,
    home: std::path::PathBuf,
    /// The hook's budget when the worker runs inside a hook (PreCompact).
    deadline: Option<Instant>,
}

impl WorkerCtx {
    /// Builds the context for a session whose last known cwd is `cwd`; its requests never
    /// run past `deadline` (a hook's budget), if one is given.
    pub fn until(cwd: Option<&str>, deadline: Option<Instant>) -> WorkerCtx {
        let cfg = crate::config::load_config(cwd.unwrap_or("/"));
        let client = ov_engine::client::client_until(&cfg, deadline).and_then(|r| match r {
            Ok(c) => Some(c),
            Err(e) => {
                log::error!("client: {e}");
                None
            }
        });
        WorkerCtx {
            privacy: ov_engine::privacy::Policy::from_config(&cfg),
            cfg,
            client,
            home: ov_engine::paths::home_dir(),
            deadline,
        }
    }
}

impl WorkerContext for WorkerCtx {
    fn transcript(&self, state: &State) -> Option<Box<dyn TranscriptSource>> {
        let sid = state.session_id.as_deref()?;
        // The file a Stop named, else the harness finds it (journals from before such
        // Stops, harnesses whose payloads name none).
        let named = state.transcript_path.as_deref().map(Path::new);
        let file = harness_of(state).transcript(&self.home, sid, state.cwd.as_deref(), named)?;
        Some(Box::new(file))
    }

    fn transport(&self) -> Option<&dyn Transport> {
        self.client.as_ref().map(|c| c as &dyn Transport)
    }

    fn settings(&self, state: &State) -> DeliverySettings {
        let sid = state.session_id.as_deref().unwrap_or("unknown");
        let harness = harness_of(state);
        let mut s = DeliverySettings::new(harness.remote_session_id(sid));
        s.answer_precedence = harness.answer_precedence();
        s.capture_enabled = self.cfg.memory_enabled && self.cfg.capture.enabled;
        s.max_length = self.cfg.capture.max_length;
        s.commit_token_threshold = self.cfg.capture.commit_token_threshold;
        s.backoff_ms = self.cfg.network.backoff_ms;
        s.privacy = self.privacy.clone();
        s.retention_days = self.cfg.journal.retention_days;
        s.capture_tools = self.cfg.capture.tools;
        s.deadline = self.deadline;
        s
    }
}

/// The harness that fed a session, by the name its hook events journaled.
fn harness_of(state: &State) -> &'static dyn Harness {
    harness::by_name(state.harness.as_deref())
}

/// Runs the worker protocol on one session directory (name under `journals/`).
/// Returns true when one of its passes reached the server (a transport was
/// configured and not skipped as offline).
pub fn run_session(root: &Path, dir_name: &str, reason: WorkerReason) -> anyhow::Result<bool> {
    run_session_within(root, dir_name, reason, None)
}

/// [`run_session`] inside a hook the agent waits for (PreCompact): every wait (the journal's
/// lock, the worker lock, each request) ends by `deadline`; what is left stays journaled.
pub fn run_session_until(
    root: &Path,
    dir_name: &str,
    reason: WorkerReason,
    deadline: Instant,
) -> anyhow::Result<bool> {
    run_session_within(root, dir_name, reason, Some(deadline))
}

fn run_session_within(
    root: &Path,
    dir_name: &str,
    reason: WorkerReason,
    deadline: Option<Instant>,
) -> anyhow::Result<bool> {
    // Never zero: a free lock is always taken.
    let left = |most: Duration| match deadline {
        Some(d) => d
            .saturating_duration_since(Instant::now())
            .min(most)
            .max(Duration::from_millis(1)),
        None => most,
    };
    let dir = ov_engine::paths::journals_dir(root).join(journal_dir_name(dir_name));
    let store = SessionStore::open_with(&dir, left(Duration::from_secs(5)))
        .with_context(|| format!("could not open {}", dir.display()))?;
    let folded = store.fold()?;
    let state = folded.state;
    let ctx = WorkerCtx::until(state.cwd.as_deref(), deadline);
    if let Some(why) = held_back(root, &state, &ctx.cfg) {
        log::info!("session {dir_name}: {why}: nothing sent");
        return Ok(false);
    }
    // Inside a hook, the back-off every session's hooks share holds as it does for their
    // recall: the agent does not wait on a server known to be down.
    let url = ctx.cfg.server.as_ref().map(|s| s.url.clone());
    let in_hook = deadline.is_some();
    if let Some(url) = url.as_deref().filter(|_| in_hook) {
        if ov_engine::backoff::active(root, url, ov_engine::store::now_ms()) {
            log::info!("session {dir_name}: the server is backing off: left for a later worker");
            return Ok(false);
        }
    }
    // Unreported journal damage is work: the worker journals it and reconciles.
    if matches!(reason, WorkerReason::Drain | WorkerReason::Resume) && folded.unreported.is_empty()
    {
        let transcript = ctx.transcript(&state);
        let settings = ctx.settings(&state);
        if !delivery::drain_has_work(
            &state,
            &settings,
            ctx.transport().is_some(),
            transcript.as_deref(),
        ) {
            return Ok(false);
        }
    }
    let wait = match reason {
        WorkerReason::Stop | WorkerReason::Sweep => Duration::from_millis(20),
        // A SessionEnd's commit must not be lost to a Stop worker still holding the lock, nor
        // a PreCompact's (which waits only as long as its hook may).
        WorkerReason::Drain
        | WorkerReason::SessionEnd
        | WorkerReason::Resume
        | WorkerReason::PreCompact => Duration::from_secs(10),
    };
    let reports = delivery::run_worker(&store, &ctx, reason, left(wait))?;
    // A hook's run that found the server unreachable (its session's window opened) opens the
    // shared one too, as a hook's recall does.
    if let Some(url) = url.as_deref().filter(|_| in_hook) {
        let now = ov_engine::store::now_ms();
        if store.fold()?.state.backing_off(now) {
            let backoff_ms = ctx.cfg.network.backoff_ms;
            ov_engine::backoff::start(root, url, now, backoff_ms, "unreachable from a hook's run");
        }
    }
    Ok(ctx.transport().is_some() && reports.iter().any(|r| !r.offline))
}

/// Why a session's unsent work stays where it is: capture is paused for it, or its harness
/// was uninstalled ([`crate::held`]).
fn held_back(root: &Path, state: &State, cfg: &Config) -> Option<String> {
    let harness = harness_of(state).name();
    if crate::held::is_held(root, harness) {
        return Some(format!("{harness} was uninstalled"));
    }
    let sid = state.session_id.as_deref().unwrap_or_default();
    ov_engine::pause::paused(root, sid, || cfg.workspace.slot.clone())
        .map(|scope| format!("capture paused ({})", scope.describe()))
}

/// A journal directory name handed over by another process is used as is; anything
/// else is a session id, mapped to its directory name.
pub(crate) fn journal_dir_name(name: &str) -> String {
    if ov_engine::ids::is_safe_part(name) {
        name.to_owned()
    } else {
        ov_engine::ids::safe_part(name)
    }
}

/// Time a Stop worker spends on other sessions' unsent work after its own.
const SWEEP_BUDGET: Duration = Duration::from_secs(10);

/// After its own session, a Stop worker sends what other sessions left unsent
/// (a server outage, a killed worker), within [`SWEEP_BUDGET`]. A session whose
/// worker lock is taken is skipped; its holder is on it. A settled session's whole journal is
/// pruned once finished for `journal.retention_days` (the user's configuration: no repository
/// is in view here; see `ov_engine::retention`).
fn sweep_others(root: &Path, own: &str) {
    let start = Instant::now();
    let retention_days = crate::config::load_config("/").journal.retention_days;
    let own = journal_dir_name(own);
    for dir in ov_engine::store::session_dirs(root) {
        if start.elapsed() > SWEEP_BUDGET {
            break;
        }
        let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name == own {
            continue;
        }
        // Read-only look first: most sessions are settled.
        let busy = ov_journal::Reader::open(&dir, Duration::from_millis(50))
            .map(|r| !ov_engine::store::fold_reader(&r).state.is_settled())
            .unwrap_or(false);
        if !busy {
            let now = ov_engine::retention::now_ms();
            match ov_engine::retention::prune_journal(&dir, retention_days, now) {
                Ok(Some(bytes)) => log::info!("pruned finished session {name} ({bytes} bytes)"),
                Ok(None) => {}
                Err(e) => log::warn!("prune {name}: {e}"),
            }
            continue;
        }
        if let Err(e) = run_session(root, name, WorkerReason::Sweep) {
            log::warn!("sweep {name}: {e:#}");
        }
    }
}

/// `ovhook worker --session <id> [--reason stop|session-end]`.
pub fn run(args: &WorkerArgs) -> anyhow::Result<i32> {
    crate::logfile::init(false);
    let session = &args.session;
    let reason = match args.reason {
        WorkerReasonArg::Stop => WorkerReason::Stop,
        WorkerReasonArg::SessionEnd => WorkerReason::SessionEnd,
    };
    let root = ov_engine::paths::state_root();
    match run_session(&root, session, reason) {
        // Other sessions' leftovers, only when this pass reached the server.
        Ok(true) if reason == WorkerReason::Stop => sweep_others(&root, session),
        Ok(_) => {}
        Err(e) => {
            log::error!("worker {session}: {e:#}");
            return Ok(1);
        }
    }
    Ok(0)
}
