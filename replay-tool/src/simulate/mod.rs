//! `ovreplay simulate RECORDING.jsonl`: play a recorded ZCode session (its rollout) or Claude
//! Code session (its transcript, [`claude_session`]) through the real `ovhook` binary exactly as
//! the agent would, with faults, then count what reached the server (`zc-<id>` / `cc-<id>`).
//!
//! # Design
//!
//! ```text
//!  recording ──► Session (turns) ──► Player: SessionStart, then per turn
//!                                      UserPromptSubmit → rollout lines (+ PreToolUse per
//!                                      tool call) → Stop      (faults bend this order)
//!                                  ──► wait for detached workers ──► ovhook drain
//!                                  ──► read the server's session zc-<id> ──► count
//! ```
//!
//! Everything runs in a temporary HOME with its own state root, under a fresh session id, so
//! runs against a shared server never collide and never touch the user's files
//! ([`mod@env`], [`binary`]). Afterwards the session's journal is read and folded once
//! ([`captured`]); what should have arrived is [`expected`]; the [`report`] says how it went.

mod binary;
mod captured;
mod claude_session;
pub mod count;
mod env;
mod expected;
mod explain;
mod faults;
mod hooks;
mod journal_faults;
mod play;
mod proxy;
mod repo;
mod report;
mod server;
mod session;
mod workers;

use std::time::Duration;

use anyhow::Context;

use crate::cli::SimulateArgs;
use crate::exit::{usage, user, Failure};
use count::{count, Counts};
use faults::Faults;
use hooks::{HookEnv, HookStats};
use report::Report;
use server::ServerAccess;
use session::Session;

/// Runs `ovreplay simulate`.
pub fn run(args: &SimulateArgs) -> anyhow::Result<()> {
    let faults = Faults::parse(args.faults.as_deref().unwrap_or(""))
        .map_err(|e| usage(format!("--faults: {e}")))?;
    if !args.rollout.is_file() {
        return Err(user(format!(
            "could not read {}: no such file",
            args.rollout.display()
        )));
    }
    let ovhook = binary::locate_ovhook(args.ovhook.as_deref())?;
    let session_id = env::fresh_session_id()?;
    let mut session = Session::load(&args.rollout, &session_id)?;
    let huge: Vec<usize> = (0..session.turns.len())
        .filter(|n| faults.has(&faults::Fault::HugeAnswer(*n)))
        .collect();
    for n in &huge {
        if let Some(t) = session.turns.get_mut(*n) {
            t.make_answer_huge();
        }
    }
    if let Some(max) = faults.max_turn().filter(|m| *m >= session.turns.len()) {
        eprintln!(
            "ovreplay: warning: --faults names turn {max}, the session has {} turns",
            session.turns.len()
        );
    }
    if faults.any_server_down() && args.url.is_none() {
        eprintln!(
            "ovreplay: warning: server-down has no effect on the embedded default (no --url)"
        );
    }

    let tmp = tempfile::Builder::new()
        .prefix("ovreplay-")
        .tempdir()
        .context("could not create a temporary folder")?;
    let root = tmp.path().to_path_buf();
    let (home, state, work, logs, scratch) = (
        root.join("home"),
        root.join("state"),
        root.join("work"),
        root.join("hooks"),
        root.join("tmp"),
    );
    for d in [&home, &state, &work, &logs, &scratch] {
        std::fs::create_dir_all(d).with_context(|| format!("could not create {}", d.display()))?;
    }
    let claude = session.harness == session::Harness::ClaudeCode;
    let rollout = if claude {
        // Where ovhook looks for it: Claude Code's project folder of the working directory.
        home.join(".claude/projects")
            .join(ov_engine::transcript::claude_code::project_dir_name(
                &work.display().to_string(),
            ))
            .join(format!("{session_id}.jsonl"))
    } else {
        home.join(".zcode/cli/rollout")
            .join(format!("model-io-{session_id}.jsonl"))
    };

    let base = env::base_env(&home, &state, &scratch);
    for kind in faults.repos() {
        repo::plant(kind, &work)?;
    }
    let budgets =
        binary::installed_budgets(&ovhook, &base, &work, &home, &root.join("install-state"));
    let access = args.url.as_ref().map(|url| ServerAccess {
        url: url.clone(),
        api_key: args.api_key.clone(),
        account: args.account.clone(),
        user: args.user.clone(),
    });
    let mut up_vars = env::server_vars(access.as_ref());
    if faults.has(&faults::Fault::UrlUserinfo) {
        for (k, v) in &mut up_vars {
            if *k == "OPENVIKING_URL" {
                *v = v.replacen("://", &format!("://{}@", faults::PLANTED_SECRET), 1);
            }
        }
    }
    let proxy_urls = match &access {
        Some(a) => faults
            .proxies()
            .into_iter()
            .map(|kind| proxy::start(kind, &a.url).map(|u| (kind, u)))
            .collect::<anyhow::Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    let down_url = match (&access, faults.any_server_down()) {
        (Some(_), true) => Some(env::closed_port_url()?),
        _ => None,
    };
    let env = HookEnv {
        ovhook: ovhook.clone(),
        vars: base,
        cwd: work.clone(),
        log_dir: logs.clone(),
        budgets,
        harness: session.harness.name(),
    };
    let timeout = Duration::from_secs(args.worker_timeout);
    let mut player = play::Player::new(play::Setup {
        env,
        payloads: hooks::Payloads {
            session_id: session_id.clone(),
            cwd: work.clone(),
            claude_transcript: claude.then(|| rollout.clone()),
        },
        faults: faults.clone(),
        rollout: rollout.clone(),
        state: state.clone(),
        scratch,
        up_vars: up_vars.clone(),
        down_url,
        worker_timeout: timeout,
        proxy_urls,
        journal: ov_engine::paths::journal_dir(&state, &session_id),
    })?;
    let mut harness_errors: Vec<String> = Vec::new();
    player.play(&session)?;
    let stats: HookStats = player.into_stats();
    if stats.failures > 0 {
        harness_errors.push(format!("{} hook run(s) failed", stats.failures));
    }

    // A later session start would finish everything: wait for workers, then drain once.
    workers::wait_idle(&state, timeout).context("could not wait for ovhook workers")?;
    if let Err(e) = binary::run_drain(
        &ovhook,
        &work,
        &logs,
        &env::player_env(&home, &state, &root, &up_vars),
        timeout,
    ) {
        harness_errors.push(format!("{e:#}"));
    }
    workers::wait_idle(&state, timeout).context("could not wait for ovhook workers after drain")?;

    let expected = expected::expected_turns(&session, &faults);
    let leaked = repo::files_containing(&[&state, &logs], faults::PLANTED_SECRET);
    let journal = captured::read(&state, &session_id);
    let damage = captured::damage(journal.as_ref());
    let damaging = faults.0.iter().any(|f| {
        matches!(
            f,
            faults::Fault::ForgeFrame(_) | faults::Fault::ForgeHeader(_)
        )
    });
    let damage_unreported = usize::from(damaging && damage.found == 0 && damage.recorded == 0);
    let server_session = format!("{}{session_id}", session.harness.remote_prefix());
    let counts = match &access {
        Some(access) => {
            let messages =
                server::session_messages(access, &server_session).with_context(|| {
                    format!("could not read session {server_session} from the server")
                })?;
            count(&expected, &messages)
        }
        None => {
            // Embedded default: nothing is sent. Count what the journal captured
            // the way the server's copy is counted: a complete turn whose prompt
            // and answer are both captured is pending; one that is not is lost.
            let local = journal
                .as_ref()
                .map(captured::journal_messages)
                .unwrap_or_default();
            let c = count(&expected, &local);
            Counts {
                expected: c.expected,
                delivered: 0,
                lost: c.expected - c.delivered,
                ..c
            }
        }
    };
    let pending_ids = match &access {
        Some(_) => journal.as_ref().map(captured::pending_turns),
        None => None,
    };
    let pending = match &access {
        Some(_) => pending_ids.as_ref().map(Vec::len),
        None => Some(counts.expected - counts.lost),
    };
    let why = explain::explain(&explain::Inputs {
        session: &session,
        counts: &counts,
        pending: pending_ids.as_deref(),
        journal: journal.as_ref(),
        embedded: access.is_none(),
        hooks: &stats,
        leaked: &leaked,
        damage: &damage.notes,
        damage_unreported: damage_unreported > 0,
    });
    let kept = if args.keep {
        let path = tmp.keep();
        Some(path.display().to_string())
    } else {
        None
    };
    let report = Report {
        expected: counts.expected,
        delivered: counts.delivered,
        duplicates: counts.duplicates,
        lost: counts.lost,
        pending,
        hook_violations: stats.violations,
        hook_failures: stats.failures,
        hook_over_budget: stats.over_budget,
        hook_longest_ms: stats.longest_ms.clone(),
        secrets_leaked: leaked.len(),
        journal_damage: damage.found,
        journal_damage_recorded: damage.recorded,
        damage_unreported,
        content_mismatches: counts.content_mismatches,
        unexpected_turns: counts.unexpected_turns,
        incomplete_turns: session.turns.len() - session.complete_turns(),
        why,
        session_id,
        recorded_session_id: session.recorded_id.clone(),
        server_session,
        mode: if access.is_some() {
            "server"
        } else {
            "embedded"
        },
        faults: faults.spec(),
        kept,
    };
    report::print_report(&report, args.json)?;
    if harness_errors.is_empty() {
        Ok(())
    } else {
        for e in &harness_errors {
            eprintln!("ovreplay: simulate: {e}");
        }
        Err(Failure::Silent(1).into())
    }
}
