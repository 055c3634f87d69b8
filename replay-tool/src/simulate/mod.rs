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
//! runs against a shared server never collide and never touch the user's files.

mod captured;
mod claude_session;
pub mod count;
mod explain;
mod faults;
mod hooks;
mod journal_faults;
mod play;
mod proxy;
mod repo;
mod server;
mod session;
mod workers;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use serde::Serialize;

use crate::cli::SimulateArgs;
use crate::exit::{usage, user, Failure};
use count::{count, Counts, ExpectedTurn};
use faults::Faults;
use hooks::{HookEnv, HookStats};
use server::ServerAccess;
use session::Session;

/// What `simulate --json` prints. The first four keys are the contract (README, `ovreplay simulate`); the rest
/// is diagnostics.
#[derive(Debug, Serialize)]
struct Report {
    expected: usize,
    delivered: usize,
    duplicates: usize,
    lost: usize,
    /// Turns planned but not acknowledged (embedded default); `null` when unknown.
    pending: Option<usize>,
    hook_violations: usize,
    hook_failures: usize,
    /// Hooks that ran longer than the `timeoutMs` `ovhook install` gives their event.
    hook_over_budget: usize,
    /// The longest run of each hook event, in milliseconds.
    hook_longest_ms: BTreeMap<String, u64>,
    /// Files under the state folder (journals, log) holding a secret a fault planted.
    secrets_leaked: usize,
    /// Damaged ranges a read of the session's journal finds after the run.
    journal_damage: usize,
    /// Damaged ranges the engine recorded in the journal (`JournalDamaged`).
    journal_damage_recorded: usize,
    /// 1 when a fault damaged the journal (`forge-frame`, `forge-header`) and neither a read
    /// nor the engine shows any damage: damage went unreported.
    damage_unreported: usize,
    content_mismatches: usize,
    unexpected_turns: usize,
    incomplete_turns: usize,
    /// For every count above that is not as it should be: its turns and why, in a sentence.
    why: Vec<explain::Reason>,
    session_id: String,
    recorded_session_id: Option<String>,
    server_session: String,
    mode: &'static str,
    faults: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kept: Option<String>,
}

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
    let ovhook = locate_ovhook(args.ovhook.as_deref())?;
    let session_id = fresh_session_id()?;
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

    let base = base_env(&home, &state, &scratch);
    for kind in faults.repos() {
        repo::plant(kind, &work)?;
    }
    let budgets = installed_budgets(&ovhook, &base, &work, &home, &root.join("install-state"));
    let access = args.url.as_ref().map(|url| ServerAccess {
        url: url.clone(),
        api_key: args.api_key.clone(),
        account: args.account.clone(),
        user: args.user.clone(),
    });
    let mut up_vars = server_vars(access.as_ref());
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
        (Some(_), true) => Some(closed_port_url()?),
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
    if let Err(e) = run_drain(
        &ovhook,
        &work,
        &logs,
        &player_env(&home, &state, &root, &up_vars),
        timeout,
    ) {
        harness_errors.push(format!("{e:#}"));
    }
    workers::wait_idle(&state, timeout).context("could not wait for ovhook workers after drain")?;

    // A turn none of whose hooks the playback fires is never sent (the engine's consent rule).
    let expected: Vec<ExpectedTurn> = expected_turns(&session)
        .into_iter()
        .filter(|e| {
            session
                .turns
                .iter()
                .filter(|t| t.turn_id == e.turn_id)
                .any(|t| {
                    !faults.hooks_off(t.index)
                        && (t.prompt.is_some()
                            || t.tool_call_count() > 0
                            || (t.complete && !faults.drop_stop(t.index)))
                })
        })
        .collect();
    let leaked = repo::files_containing(&[&state, &logs], faults::PLANTED_SECRET);
    let (journal_damage, journal_damage_recorded) = captured::journal_damage(&state, &session_id);
    let damaging = faults.0.iter().any(|f| {
        matches!(
            f,
            faults::Fault::ForgeFrame(_) | faults::Fault::ForgeHeader(_)
        )
    });
    let damage_unreported =
        usize::from(damaging && journal_damage == 0 && journal_damage_recorded == 0);
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
            let local = captured::journal_messages(&state, &session_id).unwrap_or_default();
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
        Some(_) => captured::pending_turns(&state, &session_id),
        None => None,
    };
    let pending = match &access {
        Some(_) => pending_ids.as_ref().map(Vec::len),
        None => Some(counts.expected - counts.lost),
    };
    let journal =
        crate::view::read_journal(&ov_engine::paths::journal_dir(&state, &session_id)).ok();
    let why = explain::explain(&explain::Inputs {
        session: &session,
        counts: &counts,
        pending: pending_ids.as_deref(),
        journal: journal.as_ref(),
        embedded: access.is_none(),
        hooks: &stats,
        leaked: &leaked,
        damage: &captured::journal_damage_notes(&state, &session_id),
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
        journal_damage,
        journal_damage_recorded,
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
    print_report(&report, args.json)?;
    if harness_errors.is_empty() {
        Ok(())
    } else {
        for e in &harness_errors {
            eprintln!("ovreplay: simulate: {e}");
        }
        Err(Failure::Silent(1).into())
    }
}

fn print_report(report: &Report, json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut out, report)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{} ({}, faults: {}): expected {}, delivered {}, duplicates {}, lost {}, pending {}",
            report.session_id,
            report.mode,
            if report.faults.is_empty() {
                "none".to_owned()
            } else {
                report.faults.join(",")
            },
            report.expected,
            report.delivered,
            report.duplicates,
            report.lost,
            report
                .pending
                .map_or("unknown".to_owned(), |p| p.to_string()),
        )?;
        writeln!(
            out,
            "hook violations {}, hook failures {}, hooks over budget {}, secrets leaked {}, content mismatches {}, unexpected turns {}, incomplete turns {}",
            report.hook_violations,
            report.hook_failures,
            report.hook_over_budget,
            report.secrets_leaked,
            report.content_mismatches,
            report.unexpected_turns,
            report.incomplete_turns
        )?;
        writeln!(
            out,
            "journal damage {} (recorded {}), damage unreported {}",
            report.journal_damage, report.journal_damage_recorded, report.damage_unreported
        )?;
        write!(out, "{}", explain::render(&report.why))?;
        if let Some(k) = &report.kept {
            writeln!(out, "kept {k}")?;
        }
    }
    out.flush()?;
    if let Some(k) = report.kept.as_ref().filter(|_| json) {
        eprintln!("ovreplay: kept {k}");
    }
    Ok(())
}

/// The turns the server should hold, once each (a turn id that recurs counts once).
fn expected_turns(session: &Session) -> Vec<ExpectedTurn> {
    // A message over the engine's size limit is set aside, never sent: it is not expected.
    let sent = |text: Option<&String>| {
        text.filter(|t| ov_engine::text::oversized::fits(t))
            .cloned()
            .unwrap_or_default()
    };
    let mut out: Vec<ExpectedTurn> = Vec::new();
    for t in session.turns.iter().filter(|t| t.complete) {
        let answer = sent(t.final_text.as_ref());
        match out.iter_mut().find(|e| e.turn_id == t.turn_id) {
            Some(e) => e.answer = answer,
            None => out.push(ExpectedTurn {
                turn_id: t.turn_id.clone(),
                // Only the user's words are captured (a task notification is none), then
                // what the user typed into the running turn.
                prompt: sent(t.user_message.as_ref()),
                answer,
            }),
        }
    }
    out
}

/// Each hook event's installed timeout: `ovhook install` in the temporary HOME (with its own
/// state folder `install_state`), then the
/// `timeoutMs` of our entries in ZCode's config. Empty when the install fails (each hook is
/// then bounded by the harness's own timeout only).
fn installed_budgets(
    ovhook: &Path,
    vars: &BTreeMap<OsString, OsString>,
    cwd: &Path,
    home: &Path,
    install_state: &Path,
) -> BTreeMap<String, Duration> {
    // Its own state folder: the install's records stay out of the session's state.
    let installed = std::process::Command::new(ovhook)
        .arg("install")
        .env_clear()
        .envs(vars)
        .env("OVHOOK_STATE_DIR", install_state)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let mut out = BTreeMap::new();
    if !installed {
        return out;
    }
    let Ok(text) = std::fs::read_to_string(home.join(".zcode/cli/config.json")) else {
        return out;
    };
    let Ok(cfg) = serde_json::from_str::<serde_json::Value>(&text) else {
        return out;
    };
    let events = cfg
        .pointer("/hooks/events")
        .and_then(serde_json::Value::as_object);
    // Install names its copy of the binary in the home's stable folder.
    let installed_ovhook = ov_engine::paths::bin_dir(home).join("ovhook");
    for (event, groups) in events.into_iter().flatten() {
        let hooks = groups
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| g.get("hooks").and_then(serde_json::Value::as_array))
            .flatten();
        for h in hooks {
            let ours = h
                .get("command")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|c| Path::new(c) == ovhook || Path::new(c) == installed_ovhook);
            if let (true, Some(ms)) = (ours, h.get("timeoutMs").and_then(serde_json::Value::as_u64))
            {
                out.insert(event.clone(), Duration::from_millis(ms));
            }
        }
    }
    out
}

/// `--ovhook PATH`, else next to this executable, else `target/{debug,release}/ovhook`.
fn locate_ovhook(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = explicit {
        // Hooks run in the session's working directory: a relative path must not stay relative.
        return if p.is_file() {
            Ok(p.canonicalize().unwrap_or_else(|_| p.to_path_buf()))
        } else {
            Err(user(format!(
                "ovhook not found at {} (--ovhook)",
                p.display()
            )))
        };
    }
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        candidates.push(dir.join("ovhook"));
    }
    let mut targets = vec![PathBuf::from("target")];
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        targets.insert(0, PathBuf::from(t));
    }
    for t in targets {
        candidates.push(t.join("debug/ovhook"));
        candidates.push(t.join("release/ovhook"));
    }
    candidates.into_iter().find(|c| c.is_file()).ok_or_else(|| {
        user(
            "could not find the ovhook binary next to ovreplay or in target/{debug,release}: \
              build it (cargo build -p ovhook) or pass --ovhook PATH",
        )
    })
}

/// The inherited environment without any `OPENVIKING_*`/`OVHOOK_*` variable, in the temp HOME.
fn base_env(home: &Path, state: &Path, scratch: &Path) -> BTreeMap<OsString, OsString> {
    let mut vars: BTreeMap<OsString, OsString> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            !(k.starts_with("OPENVIKING_") || k.starts_with("OVHOOK_"))
        })
        .collect();
    vars.insert("HOME".into(), home.into());
    vars.insert("OVHOOK_STATE_DIR".into(), state.into());
    vars.insert("TMPDIR".into(), scratch.into());
    // ZCode injects its version into every hook (`docs/zcode-hooks.md`).
    vars.insert("ZCODE_APP_VERSION".into(), "0.15.0-ovreplay".into());
    vars
}

/// The server variables of every hook: without a server, `OPENVIKING_URL=off` (journal only;
/// ovhook would otherwise try OpenViking's local default, whatever runs there).
fn server_vars(access: Option<&ServerAccess>) -> Vec<(&'static str, String)> {
    let Some(a) = access else {
        return vec![("OPENVIKING_URL", "off".to_owned())];
    };
    let mut v = vec![("OPENVIKING_URL", a.url.clone())];
    for (k, val) in [
        ("OPENVIKING_API_KEY", &a.api_key),
        ("OPENVIKING_ACCOUNT", &a.account),
        ("OPENVIKING_USER", &a.user),
    ] {
        if let Some(val) = val {
            v.push((k, val.clone()));
        }
    }
    v
}

/// A loopback URL nobody listens on: a port we bound, then closed.
fn closed_port_url() -> anyhow::Result<String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .context("could not bind a loopback port for server-down")?;
    let port = listener.local_addr()?.port();
    drop(listener);
    Ok(format!("http://127.0.0.1:{port}"))
}

/// The environment `ovhook drain` runs in: the base environment with the real server.
fn player_env(
    home: &Path,
    state: &Path,
    root: &Path,
    up: &[(&'static str, String)],
) -> BTreeMap<OsString, OsString> {
    let mut vars = base_env(home, state, &root.join("tmp"));
    for (k, v) in up {
        vars.insert((*k).into(), v.into());
    }
    vars
}

/// Runs `ovhook drain` in the foreground, bounded by `timeout`; it must exit 0.
fn run_drain(
    ovhook: &Path,
    cwd: &Path,
    logs: &Path,
    vars: &BTreeMap<OsString, OsString>,
    timeout: Duration,
) -> anyhow::Result<()> {
    let out = logs.join("drain.out");
    let err = logs.join("drain.err");
    let mut child = std::process::Command::new(ovhook)
        .arg("drain")
        .env_clear()
        .envs(vars)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(
            std::fs::File::create(&out)
                .with_context(|| format!("could not create {}", out.display()))?,
        )
        .stderr(
            std::fs::File::create(&err)
                .with_context(|| format!("could not create {}", err.display()))?,
        )
        .spawn()
        .with_context(|| format!("could not run {} drain", ovhook.display()))?;
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!("ovhook drain did not finish within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !status.success() {
        let mut msg = String::new();
        if let Ok(mut f) = std::fs::File::open(&err) {
            let _ = f.read_to_string(&mut msg);
        }
        anyhow::bail!("ovhook drain exited with {status}: {}", msg.trim());
    }
    Ok(())
}

/// `sess_<uuid v4>` from the kernel's random source.
fn fresh_session_id() -> anyhow::Result<String> {
    Ok(format!("sess_{}", fresh_uuid()?))
}

/// A random RFC 4122 version 4 UUID.
pub(crate) fn fresh_uuid() -> anyhow::Result<String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .context("could not read /dev/urandom")?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The harness reads every committed session as the planner does: each complete turn is
    /// in the golden plan with the same prompt and final answer (the planner may add
    /// interrupted turns, which are not expected).
    #[test]
    fn expected_turns_agree_with_the_golden_plans() -> anyhow::Result<()> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/sessions");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let name = path.display().to_string();
            let Some(golden) = name
                .strip_suffix(".jsonl")
                .map(|s| format!("{s}.expected.json"))
            else {
                continue;
            };
            let plan: Vec<serde_json::Value> =
                serde_json::from_str(&std::fs::read_to_string(&golden)?)?;
            let find = |turn: &str, role: &str| {
                plan.iter()
                    .find(|m| m["turn_id"] == turn && m["role"] == role)
                    .and_then(|m| m["content"].as_str())
                    .map(str::to_owned)
            };
            let session = Session::load(&path, "sess_00000000-0000-4000-8000-000000000000")?;
            for t in expected_turns(&session) {
                let (prompt, answer) = (count::normalize(&t.prompt), count::normalize(&t.answer));
                // An all-private message is not planned (and not required on the server).
                let want = |s: String| (!s.is_empty()).then_some(s);
                assert_eq!(
                    find(&t.turn_id, "user"),
                    want(prompt),
                    "{name} {}",
                    t.turn_id
                );
                assert_eq!(
                    find(&t.turn_id, "assistant"),
                    want(answer),
                    "{name} {}",
                    t.turn_id
                );
            }
            checked += 1;
        }
        assert!(checked > 0);
        Ok(())
    }

    /// The budgets come from the entries install wrote, which name its copy of the binary in
    /// the home's stable folder (not the binary simulate was given).
    #[test]
    fn budgets_are_the_timeouts_install_wrote() -> anyhow::Result<()> {
        let ovhook = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/ovhook");
        if !ovhook.is_file() {
            eprintln!("skipped: build ovhook first (cargo build -p ovhook)");
            return Ok(());
        }
        let t = tempfile::tempdir()?;
        let home = t.path().join("home");
        std::fs::create_dir_all(&home)?;
        let vars = base_env(&home, &t.path().join("state"), &t.path().join("tmp"));
        let budgets = installed_budgets(&ovhook, &vars, t.path(), &home, &t.path().join("s"));
        let events: Vec<&str> = budgets.keys().map(String::as_str).collect();
        assert_eq!(
            events,
            ["PreToolUse", "SessionStart", "Stop", "UserPromptSubmit"]
        );
        assert!(budgets.values().all(|b| *b >= Duration::from_secs(1)));
        Ok(())
    }

    #[test]
    fn uuid_shape_and_uniqueness() -> anyhow::Result<()> {
        let a = fresh_uuid()?;
        let b = fresh_uuid()?;
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(fresh_session_id()?.starts_with("sess_"));
        Ok(())
    }

    #[test]
    fn base_env_drops_our_variables() {
        // SAFETY: tests in this module do not read these variables concurrently.
        unsafe {
            std::env::set_var("OPENVIKING_URL", "http://elsewhere");
            std::env::set_var("OVHOOK_FAILPOINT", "after-plan");
        }
        let v = base_env(Path::new("/h"), Path::new("/s"), Path::new("/t"));
        assert!(!v.keys().any(|k| {
            let k = k.to_string_lossy();
            k.starts_with("OPENVIKING_") || (k.starts_with("OVHOOK_") && k != "OVHOOK_STATE_DIR")
        }));
        assert_eq!(v.get(&OsString::from("HOME")), Some(&OsString::from("/h")));
        assert_eq!(
            v.get(&OsString::from("OVHOOK_STATE_DIR")),
            Some(&OsString::from("/s"))
        );
    }
}
