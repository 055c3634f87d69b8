//! The doctor library: one line per check, `ok|warn|FAIL <what>: <detail>` ([`Check`]). It
//! knows no harness: each gives its own lines (`Harness::doctor_checks`; the default is
//! [`agents::report`], the generic checks of its install target), and the command
//! `ovhook doctor` (`crate::cmd::doctor`) puts them together with the sections here: the
//! configuration sources and their warnings ([`config`]), the privacy rule ([`privacy`]:
//! built-in redaction, the user's filter rules and their errors), the server ([`server`]:
//! reachable and authorised, or the embedded default), the journals ([`journals`]).

pub mod agents;
pub mod config;
pub mod journals;
pub mod presence;
pub mod privacy;
pub mod server;

use std::fmt;
use std::path::{Path, PathBuf};

/// Severity of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Fine.
    Ok,
    /// Works, but worth a look.
    Warn,
    /// Broken: memory does not work as installed.
    Fail,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Severity.
    pub level: Level,
    /// What was checked.
    pub what: String,
    /// What was found.
    pub detail: String,
}

impl Check {
    /// A check line.
    pub fn new(level: Level, what: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            level,
            what: what.into(),
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Ok => "ok",
            Level::Warn => "warn",
            Level::Fail => "FAIL",
        };
        write!(f, "{level} {}: {}", self.what, self.detail)
    }
}

/// What a harness's doctor checks may look at.
#[derive(Debug, Clone, Copy)]
pub struct DoctorContext<'a> {
    /// The home folder checked.
    pub home: &'a Path,
    /// The folder the doctor runs in (where a project's configuration applies).
    pub cwd: &'a Path,
    /// ovhook's state root.
    pub state: &'a Path,
    /// `PATH`, where agents' executables are looked for.
    pub path_var: Option<&'a std::ffi::OsStr>,
    /// The harnesses that run ovhook for this user ([`crate::harness::Harness::installed`]).
    pub installed: &'a [&'static str],
}

/// The binary our entries should name, canonical: the stable home's once install placed it
/// there, else this one.
pub fn expected_binary(home: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(crate::install::bin_home::ovhook(home))
        .ok()
        .or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|e| std::fs::canonicalize(e).ok())
        })
}
