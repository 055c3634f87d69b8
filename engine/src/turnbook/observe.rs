//! How each hook and rollout read changes the book: prompts, Stops, rollout chunks, planned
//! turns and drains (refusals and tool uses are in `consent.rs`).

use super::{TurnBook, TurnRecord};
use crate::turn::{DedupKey, TranscriptChunk};

impl TurnBook {
    /// A UserPromptSubmit whose time is not known: [`TurnBook::observe_prompt_at`].
    pub fn observe_prompt(&mut self, turn_id: Option<&str>, prompt: &str) {
        self.observe_prompt_at(turn_id, prompt, None);
    }

    /// A UserPromptSubmit that fired at `at_ms`. The turn gets its prompt and its time (the
    /// first of each wins), and every other open turn is over: ZCode runs one turn at a time.
    pub fn observe_prompt_at(&mut self, turn_id: Option<&str>, prompt: &str, at_ms: Option<u64>) {
        self.observe_prompt_hook_at(turn_id, Some(prompt), at_ms);
    }

    /// A UserPromptSubmit whose prompt was not journaled (`None`: Copilot's, whose transcript
    /// has the prompt, or one received without content): the turn is still seen by a hook and
    /// every other open turn is over. An id-less one without a prompt is an unnamed turn (see
    /// the consent section of the module doc).
    pub fn observe_prompt_hook(&mut self, turn_id: Option<&str>, prompt: Option<&str>) {
        self.observe_prompt_hook_at(turn_id, prompt, None);
    }

    /// [`TurnBook::observe_prompt_hook`] that fired at `at_ms` (the time of a prompt with words).
    fn observe_prompt_hook_at(
        &mut self,
        turn_id: Option<&str>,
        prompt: Option<&str>,
        at_ms: Option<u64>,
    ) {
        let idx = match turn_id {
            Some(id) => {
                let i = self.find_or_insert(id);
                self.apply_refused_ids(i);
                i
            }
            None => {
                self.turns.push(TurnRecord::default());
                self.turns.len() - 1
            }
        };
        for (i, t) in self.turns.iter_mut().enumerate() {
            if i == idx {
                t.hook_seen = true;
                let Some(prompt) = prompt else { continue };
                if t.prompt_hook_ms.is_none() {
                    t.prompt_hook_ms = at_ms;
                }
                match &t.hook_prompt {
                    None => t.hook_prompt = Some(prompt.to_owned()),
                    // Another prompt for the same turn: typed into the running turn.
                    Some(p) if p != prompt && !t.hook_steering.iter().any(|s| s == prompt) => {
                        t.hook_steering.push(prompt.to_owned());
                    }
                    Some(_) => {}
                }
            } else if !t.is_complete() {
                t.superseded = true;
            }
        }
    }

    /// A Stop: the turn is complete; a non-empty `response` (`responseText`) is its final
    /// answer. An id-less Stop pairs with the latest id-less prompt.
    pub fn observe_stop(&mut self, turn_id: Option<&str>, response: Option<&str>) {
        self.observe_stop_with_preview(turn_id, response, None, None);
    }

    /// [`TurnBook::observe_stop`] with the Stop's `responsePreview`, used only when
    /// nothing better ever comes (see the assistant table of [`TurnRecord`]), and the time
    /// the Stop fired (the first Stop's time wins).
    pub fn observe_stop_with_preview(
        &mut self,
        turn_id: Option<&str>,
        response: Option<&str>,
        preview: Option<&str>,
        at_ms: Option<u64>,
    ) {
        let idx = match turn_id {
            Some(id) => {
                let named = self.find_or_name(id);
                self.stale_stop_target(named).unwrap_or(named)
            }
            // An id-less Stop ends the latest turn that has not stopped (ZCode runs one
            // turn at a time), whoever named it; a turn a later one superseded is over.
            None => match self.latest_running() {
                Some(i) => i,
                None => {
                    self.turns.push(TurnRecord::default());
                    self.turns.len() - 1
                }
            },
        };
        if let Some(t) = self.turns.get_mut(idx) {
            t.stopped = true;
            if t.stop_hook_ms.is_none() {
                t.stop_hook_ms = at_ms;
            }
            t.hook_seen = true;
            if let Some(r) = response.filter(|r| !r.trim().is_empty()) {
                t.stop_text = Some(r.to_owned());
            }
            if let Some(p) = preview.filter(|p| !p.trim().is_empty()) {
                t.stop_preview = Some(p.to_owned());
            }
        }
    }

    /// The turn a Stop naming the stopped turn `named` really ends: the latest turn a wordless
    /// prompt hook opened after it, still unnamed and running. The Stop's name came from a
    /// transcript that did not show that turn yet (Copilot CLI names its `agentStop` by the
    /// last user message of `events.jsonl`, which it writes in batches); the transcript names
    /// the turn when it shows it. `None`: the Stop ends `named` (a repeated Stop).
    fn stale_stop_target(&self, named: usize) -> Option<usize> {
        if !self.turns.get(named)?.stopped {
            return None;
        }
        // The same turn an unknown Stop id would name (`find_or_name`), if it is after `named`.
        self.latest_running().filter(|&j| {
            j > named && self.is_unnamed_at(j) && self.turns.get(j).is_some_and(|t| t.hook_seen)
        })
    }

    /// A subagent's whole turn, reported when it finished (at `at_ms`): complete as it
    /// arrives, final (no transcript will show it), seen by a hook. Every other turn stays
    /// as it is: the parent's turn that spawned the subagent is still running.
    pub fn observe_subagent_turn(
        &mut self,
        turn_id: &str,
        prompt: Option<&str>,
        answer: Option<&str>,
        at_ms: u64,
    ) {
        let idx = self.find_or_insert(turn_id);
        self.apply_refused_ids(idx);
        if let Some(t) = self.turns.get_mut(idx) {
            t.hook_seen = true;
            t.stopped = true;
            t.drained = true;
            if let Some(p) = prompt.filter(|p| !p.trim().is_empty()) {
                if t.hook_prompt.is_none() {
                    t.hook_prompt = Some(p.to_owned());
                    t.prompt_hook_ms = Some(at_ms);
                }
            }
            if let Some(a) = answer.filter(|a| !a.trim().is_empty()) {
                t.stop_text = Some(a.to_owned());
            }
            if t.stop_hook_ms.is_none() {
                t.stop_hook_ms = Some(at_ms);
            }
        }
    }

    /// A rollout read, with nothing planned yet: [`TurnBook::observe_chunk_given`].
    pub fn observe_chunk(&mut self, chunk: &TranscriptChunk) {
        self.observe_chunk_given(chunk, |_| false);
    }

    /// A rollout read. Fragments merge into their turns
    /// ([`TurnFragment::merge`](crate::turn::TurnFragment::merge)). When the chunk continues
    /// the previous one (read from a saved offset, not rescanned) and starts with another turn
    /// than the last open rollout turn, that turn is over.
    ///
    /// A turn a hook named by its `traceId` or by nothing takes the rollout's `turnId` as
    /// its identity when none of its messages was planned yet (`is_planned` of their
    /// keys): the server then holds the turn under ZCode's own id. Once a message is
    /// planned the identity stays, so a turn never gets a second set of keys.
    pub fn observe_chunk_given(
        &mut self,
        chunk: &TranscriptChunk,
        is_planned: impl Fn(&DedupKey) -> bool,
    ) {
        let continues = !chunk.rescanned && chunk.start > 0;
        if continues {
            if let (Some(last), Some(first)) = (&self.last_rollout_turn, chunk.fragments.first()) {
                if first.turn_id != *last {
                    if let Some(i) = self.find_rollout(last) {
                        if let Some(t) = self.turns.get_mut(i) {
                            if !t.is_complete() {
                                t.superseded = true;
                            }
                        }
                    }
                }
            }
        }
        for frag in &chunk.fragments {
            let i = match self.find_for_fragment(frag) {
                Some(i) => i,
                None => {
                    self.turns.push(TurnRecord {
                        turn_id: Some(frag.turn_id.clone()),
                        ..TurnRecord::default()
                    });
                    self.turns.len() - 1
                }
            };
            if let Some(t) = self.turns.get_mut(i) {
                if t.is_unnamed() {
                    // Nothing of an unnamed turn was planned (it had no text): the rollout
                    // names it.
                    t.turn_id = Some(frag.turn_id.clone());
                }
                if t.turn_id.as_deref() != Some(frag.turn_id.as_str()) {
                    let named_by_trace = t.turn_id.is_some() && t.turn_id == frag.trace_id;
                    if named_by_trace && t.rollout.is_none() && !t.any_planned(&is_planned) {
                        t.turn_id = Some(frag.turn_id.clone());
                        t.rollout_id = None;
                    } else {
                        t.rollout_id = Some(frag.turn_id.clone());
                    }
                }
                match &mut t.rollout {
                    Some(r) => r.merge(frag),
                    None => t.rollout = Some(frag.clone()),
                }
                if frag.superseded && !t.is_complete() {
                    t.superseded = true;
                }
            }
            self.apply_refused_ids(i);
        }
        if let Some(last) = chunk
            .fragments
            .iter()
            .find(|f| !f.superseded)
            .or(chunk.fragments.last())
        {
            self.last_rollout_turn = Some(last.turn_id.clone());
        }
    }

    /// Messages of turn `turn_id` were planned: that is the turn's identity from now on.
    /// A turn that took its rollout `turnId` while the messages were planned under the
    /// hook's `traceId` (journaled by a build that kept the first name) goes back to the
    /// `traceId`, so a replay never gives it a second set of keys.
    pub fn observe_planned(&mut self, turn_id: &str) {
        let Some(t) = self.turns.iter_mut().rev().find(|t| {
            t.turn_id.as_deref() != Some(turn_id)
                && t.rollout
                    .as_ref()
                    .and_then(|r| r.trace_id.as_deref())
                    .is_some_and(|tr| tr == turn_id)
        }) else {
            return;
        };
        if t.rollout_id.is_none() {
            t.rollout_id = t.turn_id.take();
            t.turn_id = Some(turn_id.to_owned());
        }
    }

    /// Drain: every open turn counts as complete. A turn without a final answer then
    /// yields only its user message.
    pub fn force_complete(&mut self) {
        for t in &mut self.turns {
            if !t.is_complete() {
                t.forced = true;
            }
            t.drained = true;
        }
    }
}
