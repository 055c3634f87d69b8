//! Agents that run a configured hook only after the user has trusted that exact hook
//! (Codex CLI): how an install asks for that consent, records it the way the agent does, and
//! how `doctor` reads it back.
//!
//! # Design
//!
//! Trust is the user's decision, never ours: `ovhook install` records it only with `--trust` or
//! a "yes" typed at its question on a terminal. Without consent the hooks are installed and the
//! install says exactly what to do; `doctor` says which of our hooks the agent will run.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

/// Whether the agent will run each hook of ours, as its own configuration says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustStatus {
    /// Our hooks the agent trusts (their agent-side names).
    pub trusted: Vec<String>,
    /// Our hooks it does not trust (never approved, or changed since).
    pub untrusted: Vec<String>,
}

/// An agent's hook-trust store.
pub trait HookTrust: Sync {
    /// The question asked before recording trust (one line, no trailing `?`).
    fn question(&self) -> String;
    /// What the user does to trust our hooks without us (one line).
    fn how_to(&self) -> String;
    /// Records trust in every hook of ours installed under `home`. Returns lines for the user.
    fn record(&self, home: &Path) -> anyhow::Result<Vec<String>>;
    /// Removes the trust records of our installed hooks (before they are uninstalled). Returns
    /// how many went.
    fn forget(&self, home: &Path) -> anyhow::Result<usize>;
    /// Which of our installed hooks the agent trusts.
    fn status(&self, home: &Path) -> anyhow::Result<TrustStatus>;
    /// The files [`record`](Self::record) and [`forget`](Self::forget) write (install and
    /// uninstall check them before writing anything).
    fn files(&self, home: &Path) -> Vec<std::path::PathBuf>;
}

/// The user's answer to "trust our hooks?", from `--trust` / `--no-trust`, else asked on the
/// terminal. Anything but an explicit yes is a no; without a terminal nothing is asked.
pub fn consent(flag: Option<bool>, question: &str) -> bool {
    if let Some(given) = flag {
        return given;
    }
    let stdin = std::io::stdin();
    if !(stdin.is_terminal() && std::io::stdout().is_terminal()) {
        return false;
    }
    print!("{question}? [y/N] ");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    if stdin.lock().take_line(&mut line).is_err() {
        return false;
    }
    is_yes(&line)
}

/// `y` or `yes`, any case, surrounding blanks ignored.
pub fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// One bounded line from a reader.
trait TakeLine {
    fn take_line(&mut self, out: &mut String) -> std::io::Result<usize>;
}

impl<R: BufRead> TakeLine for R {
    fn take_line(&mut self, out: &mut String) -> std::io::Result<usize> {
        std::io::Read::take(self, 256).read_line(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_explicit_yes_consents() {
        for yes in ["y", "Y", " yes\n", "YES"] {
            assert!(is_yes(yes), "{yes:?}");
        }
        for no in ["", "\n", "n", "no", "yess", "sure", "y es"] {
            assert!(!is_yes(no), "{no:?}");
        }
        assert!(consent(Some(true), "q"));
        assert!(!consent(Some(false), "q"));
    }
}
