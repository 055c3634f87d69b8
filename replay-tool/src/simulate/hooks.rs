//! Running `ovhook` the way ZCode runs a hook: payload on stdin, output checked against
//! ZCode's strict schema.
//!
//! Invariants: a hook's stdout and stderr go to files, never pipes, because the detached
//! worker it spawns may inherit them and outlive it (a pipe would then never reach EOF).
//! Every hook is bounded in time ([`HOOK_TIMEOUT`]); a hook that overruns is killed and
//! counted as a failure.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{json, Map, Value};

/// ZCode's largest hook timeout in practice (the installer's Stop budget).
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// Everything a hook process gets: program, environment, working directory.
#[derive(Debug, Clone)]
pub struct HookEnv {
    /// The ovhook binary.
    pub ovhook: PathBuf,
    /// The complete environment (inherited variables already filtered).
    pub vars: BTreeMap<OsString, OsString>,
    /// The working directory (ZCode's `cwd`).
    pub cwd: PathBuf,
    /// Folder for the hooks' stdout/stderr files.
    pub log_dir: PathBuf,
    /// Each event's budget: the `timeoutMs` `ovhook install` gives it in ZCode's config
    /// (events missing here are bounded by [`HOOK_TIMEOUT`] only).
    pub budgets: BTreeMap<String, Duration>,
    /// `--harness NAME`, as the installed hook commands name it.
    pub harness: &'static str,
}

/// What went wrong with hooks, counted over the whole run.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct HookStats {
    /// Hook processes run.
    pub runs: usize,
    /// Hooks whose stdout was neither empty nor `{"hookSpecificOutput":{…}}` for their event,
    /// or a Stop that printed anything.
    pub violations: usize,
    /// Hooks that exited non-zero, died of a signal or overran [`HOOK_TIMEOUT`].
    pub failures: usize,
    /// Hooks that ran longer than their event's installed timeout ([`HookEnv::budgets`]).
    pub over_budget: usize,
    /// The longest run of each event, in milliseconds.
    pub longest_ms: BTreeMap<String, u64>,
    /// One line per violation or failure, for the human report.
    pub notes: Vec<String>,
}

/// A hook started and not yet waited for.
pub struct Running {
    event: &'static str,
    child: Child,
    out: PathBuf,
    err: PathBuf,
    started: Instant,
    cleanup: Option<PathBuf>,
    /// `stdin-open`: the payload was written and stdin is kept open until the hook exits.
    stdin: Option<std::process::ChildStdin>,
    budget: Option<Duration>,
}

impl HookEnv {
    /// The `ovhook` subcommand of an event.
    fn subcommand(event: &str) -> &'static str {
        match event {
            "SessionStart" => "session-start",
            "UserPromptSubmit" => "user-prompt-submit",
            "PreToolUse" => "pre-tool-use",
            "SessionEnd" => "session-end",
            _ => "stop",
        }
    }

    /// Starts one hook with `payload` on stdin; `extra` variables override the environment.
    /// `cleanup` is a file removed once the hook returns (the Stop transcript). With
    /// `stdin_open` the payload is written but stdin is never closed while the hook runs.
    pub fn start(
        &self,
        seq: usize,
        event: &'static str,
        payload: &Value,
        extra: &[(&str, String)],
        cleanup: Option<PathBuf>,
        stdin_open: bool,
    ) -> anyhow::Result<Running> {
        let out = self.log_dir.join(format!("{seq:05}-{event}.out"));
        let err = self.log_dir.join(format!("{seq:05}-{event}.err"));
        let mut cmd = Command::new(&self.ovhook);
        cmd.args(["--harness", self.harness])
            .arg(Self::subcommand(event))
            .env_clear()
            .envs(&self.vars)
            .current_dir(&self.cwd)
            .stdin(Stdio::piped())
            .stdout(
                File::create(&out)
                    .with_context(|| format!("could not create {}", out.display()))?,
            )
            .stderr(
                File::create(&err)
                    .with_context(|| format!("could not create {}", err.display()))?,
            );
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .with_context(|| format!("could not run {}", self.ovhook.display()))?;
        let started = Instant::now();
        let mut kept = None;
        if let Some(mut stdin) = child.stdin.take() {
            // A hook may exit without reading stdin; that is its right, not our error. A big
            // payload is written from a thread so that a hook that stops reading cannot block us.
            let bytes = payload.to_string().into_bytes();
            if stdin_open {
                let _ = stdin.write_all(&bytes);
                kept = Some(stdin);
            } else {
                std::thread::spawn(move || {
                    let _ = stdin.write_all(&bytes);
                });
            }
        }
        Ok(Running {
            event,
            child,
            out,
            err,
            started,
            cleanup,
            stdin: kept,
            budget: self.budgets.get(event).copied(),
        })
    }

    /// Runs one hook to completion and checks it.
    pub fn run(
        &self,
        stats: &mut HookStats,
        seq: usize,
        event: &'static str,
        payload: &Value,
        extra: &[(&str, String)],
        stdin_open: bool,
    ) -> anyhow::Result<()> {
        let running = self.start(seq, event, payload, extra, None, stdin_open)?;
        running.finish(stats)
    }
}

impl Running {
    /// Waits (bounded), checks exit status and stdout, removes the cleanup file.
    pub fn finish(mut self, stats: &mut HookStats) -> anyhow::Result<()> {
        stats.runs += 1;
        let status = loop {
            if let Some(status) = self.child.try_wait().context("could not wait for a hook")? {
                break Some(status);
            }
            if self.started.elapsed() > HOOK_TIMEOUT {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let took = self.started.elapsed();
        drop(self.stdin.take());
        let longest = stats.longest_ms.entry(self.event.to_owned()).or_default();
        *longest = (*longest).max(u64::try_from(took.as_millis()).unwrap_or(u64::MAX));
        if let Some(budget) = self.budget.filter(|b| took > *b) {
            stats.over_budget += 1;
            stats.notes.push(format!(
                "{}: took {took:?}, over its installed timeout of {budget:?}",
                self.event
            ));
        }
        if let Some(file) = self.cleanup.take() {
            let _ = std::fs::remove_file(file);
        }
        let stdout = std::fs::read(&self.out)
            .with_context(|| format!("could not read {}", self.out.display()))?;
        let stderr_tail = || {
            let e = std::fs::read_to_string(&self.err).unwrap_or_default();
            let tail: String = e.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
            tail
        };
        match status {
            None => {
                stats.failures += 1;
                stats
                    .notes
                    .push(format!("{}: timed out after {HOOK_TIMEOUT:?}", self.event));
            }
            Some(s) if !s.success() => {
                stats.failures += 1;
                stats.notes.push(format!(
                    "{}: exited with {s}: {}",
                    self.event,
                    stderr_tail()
                ));
            }
            Some(_) => {}
        }
        if let Err(why) = check_output(self.event, &stdout) {
            stats.violations += 1;
            stats.notes.push(format!("{}: {why}", self.event));
        }
        Ok(())
    }
}

/// ZCode's output rules (`docs/zcode-hooks.md`): empty, or exactly
/// `{"hookSpecificOutput":{"hookEventName":EVENT,…}}`; Stop must print nothing.
pub fn check_output(event: &str, stdout: &[u8]) -> Result<(), String> {
    if stdout.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    if event == "Stop" {
        return Err("Stop printed something (ZCode would show it as a message)".into());
    }
    let v: Value = serde_json::from_slice(stdout).map_err(|e| {
        format!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(stdout)
        )
    })?;
    let Some(obj) = v.as_object() else {
        return Err("stdout is not a JSON object".into());
    };
    if obj.len() != 1 || !obj.contains_key("hookSpecificOutput") {
        let keys: Vec<&String> = obj.keys().collect();
        return Err(format!(
            "top-level keys must be exactly [hookSpecificOutput], got {keys:?}"
        ));
    }
    let Some(inner) = obj.get("hookSpecificOutput").and_then(Value::as_object) else {
        return Err("hookSpecificOutput is not an object".into());
    };
    match inner.get("hookEventName").and_then(Value::as_str) {
        Some(name) if name == event => Ok(()),
        other => Err(format!("hookEventName is {other:?}, expected {event:?}")),
    }
}

/// Builds payloads with the fields every event of the harness carries (ZCode:
/// `docs/zcode-hooks.md`).
pub struct Payloads {
    /// `sessionId`.
    pub session_id: String,
    /// `cwd`.
    pub cwd: PathBuf,
    /// Claude Code's payloads (`transcript_path` is its session transcript) instead of ZCode's.
    pub claude_transcript: Option<PathBuf>,
}

impl Payloads {
    /// The common fields (ZCode: camelCase and snake_case; Claude Code: snake_case with
    /// `prompt_id` as the turn), then `extra`.
    pub fn build(&self, event: &str, turn_id: &str, trace_id: &str, extra: Value) -> Value {
        if let Some(transcript) = &self.claude_transcript {
            let mut m = Map::new();
            m.insert("session_id".into(), json!(self.session_id));
            m.insert(
                "transcript_path".into(),
                json!(transcript.display().to_string()),
            );
            m.insert("cwd".into(), json!(self.cwd.display().to_string()));
            if event != "SessionStart" {
                m.insert("prompt_id".into(), json!(turn_id));
            }
            m.insert("hook_event_name".into(), json!(event));
            if let Value::Object(extra) = extra {
                m.extend(extra);
            }
            return Value::Object(m);
        }
        let mut m = Map::new();
        m.insert("cwd".into(), json!(self.cwd.display().to_string()));
        m.insert("hookEventName".into(), json!(event));
        m.insert("hook_event_name".into(), json!(event));
        m.insert("mode".into(), json!("yolo"));
        m.insert("sessionId".into(), json!(self.session_id));
        m.insert("session_id".into(), json!(self.session_id));
        m.insert("timestamp".into(), json!(iso_now()));
        m.insert("traceId".into(), json!(trace_id));
        m.insert("turnId".into(), json!(turn_id));
        if let Value::Object(extra) = extra {
            m.extend(extra);
        }
        Value::Object(m)
    }
}

/// Writes ZCode's ephemeral Stop transcript: only the last assistant message.
pub fn write_transcript(dir: &Path, seq: usize, text: &str) -> anyhow::Result<PathBuf> {
    let folder = dir.join(format!("zcode-claude-hook-{seq:05}"));
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("could not create {}", folder.display()))?;
    let path = folder.join("transcript.jsonl");
    let line =
        json!({"message": {"role": "assistant", "content": [{"type": "text", "text": text}]}});
    std::fs::write(&path, format!("{line}\n"))
        .with_context(|| format!("could not write {}", path.display()))?;
    Ok(path)
}

/// Now as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn iso_now() -> String {
    crate::render::time(ov_engine::store::now_ms())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_rules() {
        assert!(check_output("Stop", b"").is_ok());
        assert!(check_output("Stop", b"\n").is_ok());
        assert!(check_output("Stop", b"{}").is_err());
        let ok = br#"{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}"#;
        assert!(check_output("UserPromptSubmit", ok).is_ok());
        assert!(
            check_output("SessionStart", ok).is_err(),
            "wrong event name"
        );
        assert!(check_output("UserPromptSubmit", b"hello").is_err());
        assert!(check_output("UserPromptSubmit", b"{}").is_err());
        assert!(check_output(
            "PreToolUse",
            br#"{"hookSpecificOutput":{"hookEventName":"PreToolUse"},"decision":"approve"}"#
        )
        .is_err());
        assert!(check_output("PreToolUse", br#"{"hookSpecificOutput":"deny"}"#).is_err());
    }

    #[test]
    fn iso_now_shape() {
        let t = iso_now();
        assert_eq!(t.len(), 24, "{t}");
        assert!(
            t.starts_with("20") && t.ends_with('Z') && &t[10..11] == "T",
            "{t}"
        );
    }
}
