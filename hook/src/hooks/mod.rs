//! The hook events.
//!
//! Every invocation: read stdin (bounded), parse it (never fails), append its
//! event to the session's journal, then do only what the event needs. Output is
//! one canonical JSON line or nothing, and the process exits 0 on every path,
//! panics included (they are caught and logged, never printed).

pub mod budget;
pub mod consent;
mod deprecation;
mod guard;
mod post_tool;
mod pre_compact;
mod prompt;
mod session_end;
mod session_start;
mod signals;
mod stop;
mod subagent;

use std::io::Write;
use std::path::{Path, PathBuf};

use ov_engine::event::{Event, HookKind, HookReceived};
use ov_engine::store::SessionStore;
use ov_engine::turn::Role;
use ov_journal::Durability;

use crate::harness::{self, Harness, HarnessCap, HookEvent, HookInput};
use budget::Budget;
use ov_engine::subagent::{Route, Subagent};

/// What every hook knows about its invocation.
#[derive(Clone)]
pub struct Invocation {
    /// The harness that fired the hook.
    pub harness: &'static dyn Harness,
    /// The parsed payload.
    pub input: HookInput,
    /// The native session id (payload, else the anchor's fallbacks).
    pub session_id: String,
    /// The working directory.
    pub cwd: String,
    /// The state root.
    pub root: PathBuf,
    /// The deadline of this whole invocation.
    pub budget: Budget,
    /// The subagent whose own session fired this hook, and where `capture.subagents` sends
    /// it ([`Invocation::route_subagent`]); `None` for any other session.
    pub subagent: Option<(Subagent, Route)>,
}

impl Invocation {
    fn read(harness: &'static dyn Harness, budget: Budget) -> Invocation {
        let got = harness::input::read_stdin(budget.stdin_deadline());
        let mut input = harness.parse(&got.bytes, got.truncated);
        if got.open_at_deadline {
            let note = "stdin still open at the read deadline";
            input.malformed = Some(match input.malformed.take() {
                Some(m) => format!("{m}; {note}"),
                None => note.to_owned(),
            });
        }
        let cwd = input.cwd.clone().unwrap_or_else(|| {
            std::env::current_dir()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        });
        let (session_id, _) = ov_engine::ids::resolve_session_id(
            input.session_id.as_deref(),
            input.transcript_path.as_deref(),
            &cwd,
        );
        Invocation {
            harness,
            input,
            session_id,
            cwd,
            root: ov_engine::paths::state_root(),
            budget,
            subagent: None,
        }
    }

    /// Applies the one subagent rule ([`ov_engine::subagent::route`]) when a subagent's own
    /// session fired this hook: a session of its own is where the hook goes (`separate`), and
    /// the route is kept for [`Invocation::passes_through`] and the Stop of an `inline` one.
    /// Loads the configuration only for such a session.
    fn route_subagent(&mut self) {
        let Some(sub) = self.harness.subagent(&self.input, &self.session_id) else {
            return;
        };
        let cfg = load_config(&self.cwd);
        let route = ov_engine::subagent::route(cfg.capture.subagents, &sub);
        if let Route::Own(id) = &route {
            self.session_id.clone_from(id);
        }
        self.subagent = Some((sub, route));
    }

    /// This invocation, journaling into the session `session_id` instead.
    pub fn for_session(&self, session_id: &str) -> Invocation {
        Invocation {
            session_id: session_id.to_owned(),
            subagent: None,
            ..self.clone()
        }
    }

    /// The client for this invocation's network work, bounded by its budget. `None` on the
    /// embedded default, and while the server is backing off: this session's window or the
    /// one every session shares ([`ov_engine::backoff`]).
    pub fn client(
        &self,
        cfg: &ov_engine::config::Config,
        state: &ov_engine::projector::State,
    ) -> Option<ov_engine::client::Client> {
        let url = &cfg.server.as_ref()?.url;
        let now = ov_engine::store::now_ms();
        if state.backing_off(now) || ov_engine::backoff::active(&self.root, url, now) {
            return None;
        }
        let deadline = self.budget.network_deadline();
        ov_engine::client::client_until(cfg, Some(deadline))?.ok()
    }

    /// The server answered: the shared back-off, if any, is over.
    pub fn server_answered(&self, cfg: &ov_engine::config::Config) {
        if let Some(s) = &cfg.server {
            ov_engine::backoff::clear(&self.root, &s.url);
        }
    }

    /// Notes that the server could not be reached, or did not answer within the hook's budget
    /// (an HTTP error means it answered), starting the window every session's hooks share.
    ///
    /// The session's journal gets `ServerUnreachable`; for a server that accepted the connection
    /// but was too slow, with `retry_after_ms` 0: the hooks' shared window keeps them fast, while
    /// the session's own worker (detached, nobody waits on it) still sends to a slow server.
    pub fn note_unreachable(
        &self,
        store: &SessionStore,
        e: &ov_engine::client::ClientError,
        cfg: &ov_engine::config::Config,
    ) {
        if !(e.is_unreachable() || e.status() == 0) {
            self.server_answered(cfg);
            return;
        }
        journal(
            store,
            Event::ServerUnreachable {
                error: e.to_string(),
                retry_after_ms: if e.is_unreachable() {
                    cfg.network.backoff_ms
                } else {
                    0
                },
            },
            Durability::Buffered,
        );
        if let Some(s) = &cfg.server {
            ov_engine::backoff::start(
                &self.root,
                &s.url,
                ov_engine::store::now_ms(),
                cfg.network.backoff_ms,
                &e.to_string(),
            );
        }
    }

    /// The output cap of every hook: ours (`hooks.max_output_bytes`) on the line, lowered to
    /// the harness's own in the unit it counts (a line's bytes, or the context's characters).
    pub fn output_cap(&self, cfg: &ov_engine::config::Config) -> OutputCap {
        let ours = OutputCap {
            bytes: cfg.hooks.max_output_bytes,
            chars: usize::MAX,
        };
        match self.harness.output_cap(&ov_engine::paths::home_dir()) {
            Some(HarnessCap::LineBytes(b)) => OutputCap {
                bytes: ours.bytes.min(b),
                ..ours
            },
            Some(HarnessCap::ContextChars(c)) => OutputCap { chars: c, ..ours },
            None => ours,
        }
    }

    /// The id the payload names its turn by ([`ov_engine::event::hook_turn`]).
    pub fn turn(&self) -> Option<&str> {
        ov_engine::event::hook_turn(
            self.input.turn_id.as_deref(),
            self.input.trace_id.as_deref(),
        )
    }

    /// The session's journal directory.
    pub fn journal_dir(&self) -> PathBuf {
        ov_engine::paths::journal_dir(&self.root, &self.session_id)
    }

    /// [`Event::TranscriptNamed`] when this `event`'s payload names the session's transcript
    /// file by an absolute path and the harness reads that file
    /// ([`Harness::names_transcript`]): workers then read it instead of searching for it.
    pub fn transcript_named(&self, event: HookEvent) -> Option<Event> {
        let path = self.input.transcript_path.as_deref()?;
        (self.harness.names_transcript(event) && Path::new(path).is_absolute()).then(|| {
            Event::TranscriptNamed {
                path: path.to_owned(),
            }
        })
    }

    /// The event for this invocation, without the conversation's text (prompt and answer
    /// left out).
    pub fn received(&self, kind: HookKind) -> HookReceived {
        let i = &self.input;
        HookReceived {
            kind: Some(kind),
            harness: self.harness.name().into(),
            session_id: Some(self.session_id.clone()),
            turn_id: i.turn_id.clone(),
            trace_id: i.trace_id.clone(),
            cwd: Some(self.cwd.clone()),
            prompt: None,
            response_text: None,
            response_preview: None,
            source: i.source.clone().or_else(|| {
                // PreCompact's trigger (`manual`, `auto`, an agent's own word for it): one short
                // word is journaled, never free payload text.
                i.trigger
                    .as_deref()
                    .filter(|t| {
                        (1..=32).contains(&t.len())
                            && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    })
                    .map(str::to_owned)
            }),
            tool_name: i.tool_name.clone(),
            denied_uri: None,
            tool_call_count: i.tool_call_count,
            raw_len: i.raw_len,
            malformed: i.malformed.clone(),
        }
    }

    /// The events for this invocation: its [`HookReceived`] with the conversation's text
    /// (prompt, answer, preview) passed through `privacy` before anything holds it, then,
    /// when the rule removed something, [`Event::Redacted`] with the counts. `None` leaves
    /// the text out (bypassed or disabled sessions keep no conversation).
    pub fn received_events(
        &self,
        kind: HookKind,
        privacy: Option<&ov_engine::privacy::Policy>,
    ) -> Vec<Event> {
        let mut received = self.received(kind);
        let Some(policy) = privacy else {
            return vec![Event::HookReceived(received)];
        };
        let i = &self.input;
        let mut counts = ov_engine::privacy::Redactions::default();
        let mut clean = |text: &Option<String>, role: Role| {
            text.as_deref()
                .map(|t| policy.capture(t, role, &mut counts).into_owned())
        };
        if self.harness.payload_prompt_captured() {
            received.prompt = clean(&i.prompt, Role::User);
        }
        received.response_text = clean(&i.response_text, Role::Assistant);
        received.response_preview = clean(&i.response_preview, Role::Assistant);
        let mut events = vec![Event::HookReceived(received)];
        if !counts.is_empty() {
            events.push(Event::Redacted {
                turn_id: self.turn().map(str::to_owned),
                origin: "hook".into(),
                counts,
            });
        }
        events
    }

    /// Memory is off for this session: bypassed by configuration, or a subagent's own
    /// session whose hooks `capture.subagents` does not keep (`skip`; `inline`, whose turn
    /// goes whole into the parent's session at its Stop): its prompts are the agent's, not the
    /// user's.
    pub fn passes_through(&self, cfg: &ov_engine::config::Config) -> bool {
        cfg.bypass.matches(&self.session_id, &self.cwd)
            || matches!(
                self.subagent,
                Some((_, Route::PassThrough | Route::Parent(_)))
            )
    }

    /// The payload's event name when it names another event than `event`.
    fn contradicted(&self, event: HookEvent) -> Option<&str> {
        self.input
            .event_name
            .as_deref()
            .filter(|n| *n != event.wire_name())
    }

    /// Opens the session's journal within the budget's lock wait and journals `event` durably.
    /// When the lock cannot be had in time, the event goes to a spill file that the next writer
    /// ingests ([`ov_engine::spill`]); only a failure of both loses it (logged).
    pub fn open_journaling(&self, event: Event) -> Journaled {
        self.open_journaling_all(vec![event])
    }

    /// [`Invocation::open_journaling`] of several events, in one batch (all or none).
    pub fn open_journaling_all(&self, events: Vec<Event>) -> Journaled {
        self.open_journaling_within(events, self.budget.lock_wait(), Durability::Sync)
    }

    /// [`Invocation::open_journaling_all`] with the caller's lock wait and durability.
    pub fn open_journaling_within(
        &self,
        events: Vec<Event>,
        lock_wait: std::time::Duration,
        durability: Durability,
    ) -> Journaled {
        let dir = self.journal_dir();
        let store = match SessionStore::open_with(&dir, lock_wait) {
            Ok(store) => store,
            Err(e) if SessionStore::is_lock_timeout(&e) => return self.spill(&dir, events, &e),
            Err(e) => {
                log::error!("session {}: {e}", self.session_id);
                return Journaled::Lost;
            }
        };
        let appended = match events.as_slice() {
            [one] => store.append(one.clone(), durability).map(|_| ()),
            _ => store.append_all(events.clone(), durability).map(|_| ()),
        };
        match appended {
            Ok(()) => Journaled::Store(store),
            Err(e) if SessionStore::is_lock_timeout(&e) => self.spill(&dir, events, &e),
            Err(e) => {
                log::error!("could not journal: {e}");
                Journaled::Lost
            }
        }
    }

    fn spill(
        &self,
        dir: &Path,
        events: Vec<Event>,
        why: &ov_engine::store::StoreError,
    ) -> Journaled {
        match SessionStore::spill(dir, events) {
            Ok(path) => {
                log::warn!(
                    "session {}: {why}; spilled to {}",
                    self.session_id,
                    path.display()
                );
                Journaled::Spilled
            }
            Err(e) => {
                log::error!(
                    "session {}: {why}; and could not spill: {e}",
                    self.session_id
                );
                Journaled::Lost
            }
        }
    }
}

/// Starts the session's worker for `reason` once the hook's event is `journaled`: detached, or
/// in process under `OVHOOK_NO_DETACH=1` (not when the event was spilled: the journal's lock
/// is held, and an inline worker would wait for it past the hook's budget).
fn start_worker(inv: &Invocation, journaled: Journaled, reason: ov_engine::event::WorkerReason) {
    let dir = ov_engine::ids::safe_part(&inv.session_id);
    if std::env::var_os("OVHOOK_NO_DETACH").is_some_and(|v| v == "1") {
        let Journaled::Store(store) = journaled else {
            return;
        };
        drop(store);
        let _ = crate::worker::run_session(&inv.root, &dir, reason);
        return;
    }
    crate::detach::spawn_self(&["worker", "--session", &dir, "--reason", reason.as_str()]);
}

/// What one hook may print: a line shorter than `bytes` (newline included), injecting at most
/// `chars` characters of context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputCap {
    /// The output line's bytes.
    pub bytes: usize,
    /// The injected context's characters.
    pub chars: usize,
}

/// Where [`Invocation::open_journaling`] put its events.
#[expect(
    clippy::large_enum_variant,
    reason = "one value per hook invocation, moved once: boxing the store buys nothing"
)]
pub enum Journaled {
    /// In the journal, whose store is open.
    Store(SessionStore),
    /// In a spill file: the journal's lock was held too long.
    Spilled,
    /// Nowhere (logged).
    Lost,
}

/// Appends one event, logging (not failing) on error.
pub fn journal(store: &SessionStore, event: Event, durability: Durability) -> bool {
    match store.append(event, durability) {
        Ok(_) => true,
        Err(e) => {
            log::error!("could not journal: {e}");
            false
        }
    }
}

pub use crate::config::load_config;

/// Runs one hook event; never panics out, never exits non-zero, prints at most one line.
pub fn run_guarded(event: HookEvent, harness: &'static dyn Harness) {
    signals::exit_zero_when_stopped();
    // Before anything can fail: every hook's errors and panics reach the log, including
    // the hooks that never load the configuration (PreToolUse).
    crate::logfile::init(false);
    std::panic::set_hook(Box::new(|info| {
        log::error!("panic in hook: {info}");
    }));
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(event, harness)))
        .unwrap_or(None)
        .or_else(|| harness.pass_output(event));
    if let Some(line) = out {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(line.as_bytes());
        let _ = stdout.write_all(b"\n");
        let _ = stdout.flush();
    }
}

/// A hook command installed for a harness this build does not know: logged,
/// stdin drained, nothing printed.
pub fn unknown_harness(name: &str) {
    signals::exit_zero_when_stopped();
    crate::logfile::init(false);
    let _ = harness::input::read_stdin(
        std::time::Instant::now() + std::time::Duration::from_millis(500),
    );
    log::error!("hook for unknown harness '{name}': passed through");
}

fn run(event: HookEvent, harness: &'static dyn Harness) -> Option<String> {
    let mut inv = Invocation::read(harness, Budget::start(event));
    if let Some(name) = inv.contradicted(event) {
        // A misconfigured hook (another event's payload piped into this subcommand):
        // journaled as malformed, not acted on.
        let mut received = inv.received(HookKind::Stop);
        received.kind = None;
        received.malformed = Some(format!(
            "payload says hookEventName {name:?}, but the hook is {:?}; not acted on",
            event.wire_name()
        ));
        inv.open_journaling(Event::HookReceived(received));
        return None;
    }
    inv.route_subagent();
    if event == HookEvent::Stop {
        if let Some((sub, Route::Parent(parent))) = &inv.subagent {
            subagent::inline_session_stop(&inv, sub, parent);
            return None;
        }
    }
    match event {
        HookEvent::PreToolUse => guard::handle(&inv),
        HookEvent::PostToolUse => {
            post_tool::handle(&inv);
            None
        }
        HookEvent::SessionStart => session_start::handle(&inv),
        HookEvent::UserPromptSubmit => prompt::handle(&inv),
        HookEvent::Stop => {
            stop::handle(&inv);
            None
        }
        HookEvent::SessionEnd => {
            session_end::handle(&inv);
            None
        }
        HookEvent::PreCompact => {
            pre_compact::handle(&inv);
            None
        }
        HookEvent::SubagentStop => {
            subagent::handle_stop(&inv);
            None
        }
    }
}
