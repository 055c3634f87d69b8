//! The journal section of `ovhook doctor`: unsent and set-aside work, sessions whose turns saw
//! UserPromptSubmit but no Stop. Filled in by the integrator; returns no checks until then.

use std::path::Path;

use super::Check;

/// Checks over every session journal under `state_root`.
pub fn report(state_root: &Path) -> Vec<Check> {
    let _ = state_root;
    Vec::new()
}
