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
//!     Stop (complete turns only):  drop-stop → none; late-stop → after turn N+1's Stop;
//!         dup-stop → twice in a row; race-stop → 8 concurrent processes;
//!         kill:POINT → with OVHOOK_FAILPOINT=POINT
//!     late Stops of earlier turns
//! [pending newline], remaining late Stops
//! ```
//! The server URL a hook sees is chosen by the turn being played when it fires: a closed
//! loopback port inside a server-down window, the real URL otherwise.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use serde_json::json;

use super::faults::Faults;
use super::hooks::{write_transcript, HookEnv, HookStats, Payloads};
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
}

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
        if let (true, Some(url)) = (self.down(), &self.s.down_url) {
            for (k, val) in &mut v {
                if *k == "OPENVIKING_URL" {
                    *val = url.clone();
                }
            }
        }
        v
    }

    /// Plays the whole session (see the module doc).
    pub fn play(&mut self, session: &Session) -> anyhow::Result<()> {
        let start_turn = super::fresh_uuid()?;
        let payload = self.s.payloads.build(
            "SessionStart",
            &format!("turn_{start_turn}"),
            &super::fresh_uuid()?,
            json!({"source": "startup"}),
        );
        self.hook("SessionStart", &payload, &[])?;
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
            self.play_turn(turn)?;
            let due: Vec<usize> = self
                .late
                .iter()
                .copied()
                .filter(|n| *n < turn.index)
                .collect();
            self.late.retain(|n| *n >= turn.index);
            for n in due {
                self.stop(&session.turns[n])?;
            }
        }
        self.pay_newline()?;
        for n in std::mem::take(&mut self.late) {
            self.stop(&session.turns[n])?;
        }
        if self.claude() {
            // `claude -p` ends every run with SessionEnd.
            let last = session.turns.last().map_or("", |t| t.turn_id.as_str());
            let p = self
                .s
                .payloads
                .build("SessionEnd", last, last, json!({"reason": "other"}));
            self.hook("SessionEnd", &p, &[])?;
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
        if let Some(prompt) = &turn.prompt {
            let p = self.s.payloads.build(
                "UserPromptSubmit",
                &turn.turn_id,
                &trace,
                json!({"prompt": prompt}),
            );
            self.hook("UserPromptSubmit", &p, &[])?;
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
            for call in &line.tool_calls {
                let p = self.s.payloads.build(
                    "PreToolUse",
                    &turn.turn_id,
                    &trace,
                    json!({
                        "toolName": call.name, "tool_name": call.name,
                        "toolInput": call.input, "tool_input": call.input,
                        "toolCallId": call.id, "tool_use_id": call.id,
                        "riskLevel": "high", "sideEffectScope": "system",
                    }),
                );
                self.hook("PreToolUse", &p, &[])?;
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
                    running.push(self.s.env.start(self.seq, "Stop", &p, &vars, None)?);
                    continue;
                }
                let transcript = write_transcript(&self.s.scratch, self.seq, &text)?;
                let path = transcript.display().to_string();
                let preview: String = text.chars().take(200).collect();
                let p = self.s.payloads.build(
                    "Stop",
                    &turn.turn_id,
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
                running.push(
                    self.s
                        .env
                        .start(self.seq, "Stop", &p, &vars, Some(transcript))?,
                );
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
        Ok(())
    }

    fn hook(
        &mut self,
        event: &'static str,
        payload: &serde_json::Value,
        extra: &[(&str, String)],
    ) -> anyhow::Result<()> {
        self.seq += 1;
        let mut vars = self.vars();
        vars.extend(extra.iter().map(|(k, v)| (*k, v.clone())));
        self.s
            .env
            .run(&mut self.stats, self.seq, event, payload, &vars, None)
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
