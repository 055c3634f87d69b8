//! What a hook may keep of its turn: capture is on, or refused (paused, off, bypassed).
//!
//! A hook that does not capture journals its receipt and an [`Event::CaptureRefused`] for its
//! turn in one batch: the engine never sends that turn, even once capture is back
//! ([`ov_engine::turnbook::TurnBook::consent`]). The pause check is one `stat` of the state
//! root's `paused` folder when nothing is paused ([`ov_engine::pause::paused`]).

use ov_engine::config::Config;
use ov_engine::event::{Event, HookKind};
use ov_engine::pause::PauseScope;

use super::Invocation;

/// Whether this hook captures its turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Capture {
    /// The turn may be captured.
    On,
    /// Capture is paused for this session: nothing is injected, nothing captured.
    Paused(PauseScope),
    /// Capture is off for this hook's turn (configuration or bypass); why.
    Off(&'static str),
}

impl Capture {
    /// The hook may capture.
    pub fn is_on(&self) -> bool {
        matches!(self, Capture::On)
    }

    /// The hook may inject context (recall, profile): not while paused.
    pub fn may_inject(&self) -> bool {
        !matches!(self, Capture::Paused(_))
    }

    /// Why the turn is refused (`None` when it is captured).
    pub fn refusal(&self) -> Option<String> {
        match self {
            Capture::On => None,
            Capture::Paused(scope) => Some(format!("paused ({})", scope.describe())),
            Capture::Off(why) => Some((*why).to_owned()),
        }
    }
}

impl Invocation {
    /// The scope pausing this session, if any; `project` gives its project slot and runs only
    /// when something is paused.
    pub fn paused(&self, project: impl FnOnce() -> String) -> Option<PauseScope> {
        ov_engine::pause::paused(&self.root, &self.session_id, project)
    }

    /// Whether this hook captures its turn under `cfg`: paused first, then memory off, a
    /// bypass, capture off.
    pub fn capture(&self, cfg: &Config) -> Capture {
        if let Some(scope) = self.paused(|| cfg.workspace.slot.clone()) {
            return Capture::Paused(scope);
        }
        if !cfg.memory_enabled {
            Capture::Off("memory off")
        } else if self.passes_through(cfg) {
            Capture::Off("bypassed")
        } else if !cfg.capture.enabled {
            Capture::Off("capture off")
        } else {
            Capture::On
        }
    }

    /// The events of this hook's receipt: its [`Invocation::received_events`] (content through
    /// `privacy`, none without) and, when `capture` refuses the turn, an
    /// [`Event::CaptureRefused`] for it.
    pub fn receipt(
        &self,
        kind: HookKind,
        privacy: Option<&ov_engine::privacy::Policy>,
        capture: &Capture,
    ) -> Vec<Event> {
        let mut events = self.received_events(kind, privacy);
        events.extend(self.refusal(capture));
        events
    }

    /// The [`Event::CaptureRefused`] of this hook's turn ([`Invocation::turn`], as the projector
    /// names hook turns) when `capture` refuses it.
    pub fn refusal(&self, capture: &Capture) -> Option<Event> {
        Some(Event::CaptureRefused {
            turn_id: self.turn().map(str::to_owned),
            reason: capture.refusal()?,
        })
    }
}
