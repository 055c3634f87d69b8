//! The four hook events (in progress).
pub mod pre_tool_use;
use crate::harness::HookEvent;
/// Runs one hook event; never panics out, never exits non-zero.
pub fn run_guarded(_event: HookEvent) {}
