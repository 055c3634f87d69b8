//! The playback order, as ZCode does it, and how each fault bends it.
//!
//! ```text
//! SessionStart(source:"startup")
//! prelude lines (before the first main_turn line)
//! for each turn N:
//!     [server-down window ended → wait for in-flight workers]
//!     [partial-line@N-1 pending → append its newline]
//!     [rotate@N → copy the rollout to a new file, rename it over the old one]
//!     UserPromptSubmit(prompt)                       (when the turn has any user text)
//!     for each line: append it (+ "\n"), then PreToolUse per response.toolCalls
//!         (partial-line@N: the last line without "\n"; a recorded partial line as-is)
//!     (hooks-off@N: no hook of the turn runs; its lines are written)
//!     Stop (complete turns only):  drop-stop → none; late-stop → after turn N+1's Stop;
//!         dup-stop → twice in a row; race-stop → 8 concurrent processes;
//!         kill:POINT → with OVHOOK_FAILPOINT=POINT
//!     late Stops of earlier turns
//! [pending newline], remaining late Stops
//! ```
//! The server URL a hook sees is chosen by the turn being played when it fires: a closed
//! loopback port inside a server-down window, a proxy inside a server-slow, server-html or
//! server-redirect window, the real URL otherwise.
//!
//! Journal and rollout faults: `truncate@N` empties the rollout in place before turn N;
//! `compact-race@N` compacts the journal over and over during turn N; `lock-held@N` holds
//! the journal lock during turn N's UserPromptSubmit; `fifo-rollout@N` puts a FIFO at the
//! rollout path during turn N's Stop; after turn N (workers idle) `flip-first`, `flip-mid`,
//! `compact` and `flip-snapshot` act on the journal.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use serde_json::json;

use super::faults::{Fault, Faults, Proxy};
use super::hooks::{write_transcript, HookEnv, HookStats, Payloads};
use super::journal_faults;
use super::session::{Session, Turn};
use super::workers;

/// Concurrent Stops of `race-stop`.
const RACERS: usize = 8;

/// Everything the player needs.
pub struct Setup {
    /// How to run hooks.
    pub env: HookEnv,
    /// Payload builder.
    pub payloads: Payloads,
    /// The faults.
    pub faults: Faults,
    /// The rollout file ZCode writes.
    pub rollout: PathBuf,
    /// ovhook's state root (to wait for workers).
    pub state: PathBuf,
    /// Where Stop transcripts go.
    pub scratch: PathBuf,
    /// Server variables when the server is up (empty on the embedded default).
    pub up_vars: Vec<(&'static str, String)>,
    /// The closed-port URL for server-down windows.
    pub down_url: Option<String>,
    /// Bound on waiting for workers.
    pub worker_timeout: Duration,
    /// The URL of each server proxy the faults use.
    pub proxy_urls: Vec<(Proxy, String)>,
    /// The session's journal directory.
    pub journal: PathBuf,
}

/// How long `lock-held` holds the journal lock.
const LOCK_HELD: Duration = Duration::from_millis(2500);

/// Plays one session.
pub struct Player {
    s: Setup,
    stats: HookStats,
    seq: usize,
    /// The turn whose slot hooks are fired in (chooses the URL).
    slot: usize,
    /// partial-line: the newline still owed to the rollout.
    owed_newline: bool,
    /// late-stop: turns whose Stop waits for the next turn's.
    late: Vec<usize>,
    /// Transcript folders to remove once their Stop returned.
    cleanup_dirs: Vec<PathBuf>,
}

impl Player {
    /// A player for `setup`; creates the rollout folder.
    pub fn new(setup: Setup) -> anyhow::Result<Player> {
        if let Some(dir) = setup.rollout.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("could not create {}", dir.display()))?;
        }
        Ok(Player {
            s: setup,
            stats: HookStats::default(),
            seq: 0,
            slot: 0,
            owed_newline: false,
            late: Vec::new(),
            cleanup_dirs: Vec::new(),
        })
    }

    /// The hook statistics of the run.
    pub fn into_stats(self) -> HookStats {
        self.stats
    }

    fn down(&self) -> bool {
        self.s.down_url.is_some() && self.s.faults.server_down(self.slot)
    }

    /// Variables for a hook fired now.
    fn vars(&self) -> Vec<(&'static str, String)> {
        let mut v = self.s.up_vars.clone();
        let proxied = self.s.faults.proxy(self.slot).and_then(|kind| {
            self.s
                .proxy_urls
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|(_, u)| u.clone())
        });
        let url = match (self.down(), &self.s.down_url) {
            (true, Some(url)) => Some(url.clone()),
            _ => proxied,
        };
        if let Some(url) = url {
            for (k, val) in &mut v {
                if *k == "OPENVIKING_URL" {
                    *val = url.clone();
                }
            }
        }
        v
    }

    /// A payload of turn `turn` (without its turn id under `no-turn-id`).
    fn payload(
        &self,
        event: &str,
        turn: &Turn,
        trace: &str,
        extra: serde_json::Value,
    ) -> serde_json::Value {
        let mut p = self.s.payloads.build(event, &turn.turn_id, trace, extra);
        if self.s.faults.has(&Fault::NoTurnId(turn.index)) {
            if let Some(m) = p.as_object_mut() {
                m.remove("turnId");
            }
        }
        p
    }

    /// Plays the whole session (see the module doc).
    pub fn play(&mut self, session: &Session) -> anyhow::Result<()> {
        let start_turn = super::env::fresh_uuid()?;
        let payload = self.s.payloads.build(
            "SessionStart",
            &format!("turn_{start_turn}"),
            &super::env::fresh_uuid()?,
            json!({"source": "startup"}),
        );
        self.hook("SessionStart", &payload, false)?;
        for line in &session.prelude {
            self.append(&line.raw, line.complete)?;
        }
        for turn in &session.turns {
            let was_down = self.down();
            self.slot = turn.index;
            if was_down && !self.down() {
                // Workers started in the window must not see the server come back.
                workers::wait_idle(&self.s.state, self.s.worker_timeout)?;
            }
            self.pay_newline()?;
            if self.s.faults.rotate(turn.index) {
                self.rotate()?;
            }
            if self.s.faults.has(&Fault::Truncate(turn.index)) {
                self.truncate()?;
            }
            let racing = self
                .s
                .faults
                .has(&Fault::CompactRace(turn.index))
                .then(|| journal_faults::compact_loop(self.s.journal.clone()));
            let played = self.play_turn(turn);
            if let Some((stop, handle)) = racing {
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
                let _ = handle.join();
            }
            played?;
            self.after_turn(turn.index)?;
            let due: Vec<usize> = self
                .late
                .iter()
                .copied()
                .filter(|n| *n < turn.index)
                .collect();
            self.late.retain(|n| *n >= turn.index);
            for t in due.into_iter().filter_map(|n| session.turns.get(n)) {
                self.stop(t)?;
            }
        }
        self.pay_newline()?;
        for n in std::mem::take(&mut self.late) {
            if let Some(t) = session.turns.get(n) {
                self.stop(t)?;
            }
        }
        if self.claude() {
            // `claude -p` ends every run with SessionEnd.
            let last = session.turns.last().map_or("", |t| t.turn_id.as_str());
            let p = self
                .s
                .payloads
                .build("SessionEnd", last, last, json!({"reason": "other"}));
            self.hook("SessionEnd", &p, false)?;
        }
        Ok(())
    }

    fn claude(&self) -> bool {
        self.s.payloads.claude_transcript.is_some()
    }

    fn play_turn(&mut self, turn: &Turn) -> anyhow::Result<()> {
        let trace = turn
            .trace_id
            .clone()
            .unwrap_or_else(|| turn.turn_id.clone());
        // hooks-off: ovhook is disabled for this turn; the agent writes its lines all the same.
        let off = self.s.faults.hooks_off(turn.index);
        if let Some(prompt) = turn.prompt.as_ref().filter(|_| !off) {
            let p = self.payload("UserPromptSubmit", turn, &trace, json!({"prompt": prompt}));
            let holder = if self.s.faults.has(&Fault::LockHeld(turn.index)) {
                Some(journal_faults::hold_lock(&self.s.journal, LOCK_HELD)?)
            } else {
                None
            };
            let open = self.s.faults.has(&Fault::StdinOpen(turn.index));
            self.hook("UserPromptSubmit", &p, open)?;
            if let Some(h) = holder {
                let _ = h.join();
            }
        }
        let partial = self.s.faults.partial_line(turn.index);
        let last = turn.lines.len().saturating_sub(1);
        for (i, line) in turn.lines.iter().enumerate() {
            if line.complete && partial && i == last {
                self.append(&line.raw, false)?;
                self.owed_newline = true;
            } else {
                self.append(&line.raw, line.complete)?;
            }
            for call in line.tool_calls.iter().filter(|_| !off) {
                let p = self.payload(
                    "PreToolUse",
                    turn,
                    &trace,
                    json!({
                        "toolName": call.name, "tool_name": call.name,
                        "toolInput": call.input, "tool_input": call.input,
                        "toolCallId": call.id, "tool_use_id": call.id,
                        "riskLevel": "high", "sideEffectScope": "system",
                    }),
                );
                self.hook("PreToolUse", &p, false)?;
            }
        }
        if !turn.complete || self.s.faults.drop_stop(turn.index) {
            return Ok(());
        }
        if self.s.faults.late_stop(turn.index) {
            self.late.push(turn.index);
            return Ok(());
        }
        self.stop(turn)
    }

    /// Delivers turn `turn`'s Stop, with its dup/race/kill faults.
    fn stop(&mut self, turn: &Turn) -> anyhow::Result<()> {
        let text = turn.final_text.clone().unwrap_or_default();
        let trace = turn
            .trace_id
            .clone()
            .unwrap_or_else(|| turn.turn_id.clone());
        let extra: Vec<(&str, String)> = self
            .s
            .faults
            .failpoint(turn.index)
            .map(|p| vec![("OVHOOK_FAILPOINT", p)])
            .unwrap_or_default();
        let repeats = self.s.faults.stop_repeats(turn.index);
        let open = self.s.faults.has(&Fault::StdinOpen(turn.index));
        let fifo = self.s.faults.has(&Fault::FifoRollout(turn.index));
        let held = self.s.rollout.with_extension("jsonl.held");
        if fifo {
            std::fs::rename(&self.s.rollout, &held)
                .with_context(|| format!("could not move {}", self.s.rollout.display()))?;
            make_fifo(&self.s.rollout)?;
        }
        for r in 0..repeats {
            let racers = if r == 0 && self.s.faults.race_stop(turn.index) {
                RACERS
            } else {
                1
            };
            let mut running = Vec::with_capacity(racers);
            for _ in 0..racers {
                self.seq += 1;
                if self.claude() {
                    // Claude Code's Stop names the session transcript the player writes.
                    let last = turn.stop_text.clone().unwrap_or_else(|| text.clone());
                    let p = self.s.payloads.build(
                        "Stop",
                        &turn.turn_id,
                        &trace,
                        json!({"stop_hook_active": false, "last_assistant_message": last}),
                    );
                    let mut vars = self.vars();
                    vars.extend(extra.iter().map(|(k, v)| (*k, v.clone())));
                    running.push(self.s.env.start(self.seq, "Stop", &p, &vars, None, open)?);
                    continue;
                }
                let transcript = write_transcript(&self.s.scratch, self.seq, &text)?;
                let path = transcript.display().to_string();
                let mut preview: String = text.chars().take(200).collect();
                if self.s.faults.has(&Fault::ForgeFrame(turn.index)) {
                    preview.push_str(&journal_faults::forged_frame_text()?);
                }
                if self.s.faults.has(&Fault::ForgeHeader(turn.index)) {
                    preview.push_str(&journal_faults::forged_header_text()?);
                }
                let p = self.payload(
                    "Stop",
                    turn,
                    &trace,
                    json!({
                        "responseText": text, "responsePreview": preview,
                        "toolCallCount": turn.tool_call_count(),
                        "transcript_path": path, "transcriptPath": path,
                    }),
                );
                let mut vars = self.vars();
                vars.extend(extra.iter().map(|(k, v)| (*k, v.clone())));
                let folder = transcript.parent().map(PathBuf::from);
                running.push(self.s.env.start(
                    self.seq,
                    "Stop",
                    &p,
                    &vars,
                    Some(transcript),
                    open,
                )?);
                // The transcript's folder goes too, as ZCode's temp dir does.
                if let Some(folder) = folder {
                    self.cleanup_dirs.push(folder);
                }
            }
            for r in running {
                r.finish(&mut self.stats)?;
            }
            for d in self.cleanup_dirs.drain(..) {
                let _ = std::fs::remove_dir(d);
            }
        }
        if fifo {
            // The Stop's worker meets the FIFO; then the file comes back for later turns.
            std::thread::sleep(Duration::from_millis(1500));
            std::fs::rename(&held, &self.s.rollout)
                .with_context(|| format!("could not put back {}", self.s.rollout.display()))?;
        }
        Ok(())
    }

    /// The journal faults due once turn `n` is over (workers idle first).
    fn after_turn(&mut self, n: usize) -> anyhow::Result<()> {
        let due: Vec<fn(&std::path::Path) -> anyhow::Result<()>> = [
            (
                Fault::FlipFirst(n),
                journal_faults::flip_first as fn(&_) -> _,
            ),
            (Fault::FlipMid(n), journal_faults::flip_mid),
            (Fault::Compact(n), journal_faults::compact),
            (Fault::FlipSnapshot(n), journal_faults::flip_snapshot),
            (Fault::ForgeFrame(n), journal_faults::flip_forged_holder),
            (Fault::ForgeHeader(n), journal_faults::flip_forged_holder),
        ]
        .into_iter()
        .filter(|(f, _)| self.s.faults.has(f))
        .map(|(_, act)| act)
        .collect();
        if due.is_empty() {
            return Ok(());
        }
        workers::wait_idle(&self.s.state, self.s.worker_timeout)?;
        for act in due {
            act(&self.s.journal).with_context(|| format!("journal fault after turn {n}"))?;
        }
        Ok(())
    }

    /// Runs one hook to completion (`stdin_open`: its stdin never closes).
    fn hook(
        &mut self,
        event: &'static str,
        payload: &serde_json::Value,
        stdin_open: bool,
    ) -> anyhow::Result<()> {
        self.seq += 1;
        let vars = self.vars();
        self.s
            .env
            .run(&mut self.stats, self.seq, event, payload, &vars, stdin_open)
    }

    /// Empties the rollout in place (same inode), as a copy-and-truncate rotation does.
    fn truncate(&self) -> anyhow::Result<()> {
        match OpenOptions::new().write(true).open(&self.s.rollout) {
            Ok(f) => f
                .set_len(0)
                .with_context(|| format!("could not truncate {}", self.s.rollout.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => {
                Err(e).with_context(|| format!("could not open {}", self.s.rollout.display()))
            }
        }
    }

    /// Appends one line (with its newline when `newline`), as ZCode does: one write.
    fn append(&self, raw: &str, newline: bool) -> anyhow::Result<()> {
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.s.rollout)
            .with_context(|| format!("could not open {}", self.s.rollout.display()))?;
        let mut buf = Vec::with_capacity(raw.len() + 1);
        buf.extend_from_slice(raw.as_bytes());
        if newline {
            buf.push(b'\n');
        }
        f.write_all(&buf)
            .with_context(|| format!("could not write {}", self.s.rollout.display()))
    }

    fn pay_newline(&mut self) -> anyhow::Result<()> {
        if std::mem::take(&mut self.owed_newline) {
            self.append("", true)?;
        }
        Ok(())
    }

    /// Replaces the rollout by a fresh copy of itself: same bytes, new inode.
    fn rotate(&self) -> anyhow::Result<()> {
        let path = &self.s.rollout;
        let content = match std::fs::read(path) {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
        };
        let tmp = path.with_extension("jsonl.rotate");
        let mut f = std::fs::File::create(&tmp)
            .with_context(|| format!("could not create {}", tmp.display()))?;
        f.write_all(&content)
            .and_then(|()| f.sync_all())
            .with_context(|| format!("could not write {}", tmp.display()))?;
        drop(f);
        std::fs::rename(&tmp, path)
            .with_context(|| format!("could not rename {} over {}", tmp.display(), path.display()))
    }
}

/// Creates a FIFO at `path`.
fn make_fifo(path: &std::path::Path) -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .with_context(|| format!("bad path {}", path.display()))?;
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    anyhow::ensure!(
        rc == 0,
        "could not create a FIFO at {}: {}",
        path.display(),
        std::io::Error::last_os_error()
    );
    Ok(())
}
