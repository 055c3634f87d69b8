//! Errors that choose their exit code. Everything else is an internal error (255).

use std::fmt;

/// An error with a chosen exit code (jj's `CommandError` kinds, reduced to what we use).
#[derive(Debug)]
pub enum Failure {
    /// A user error or a failed check: exit 1, message printed.
    User(String),
    /// Bad usage (an unknown fault, a command not available yet): exit 2, message printed.
    Usage(String),
    /// The command already printed its result; exit with `code`, print nothing more.
    Silent(u8),
}

impl Failure {
    /// The process exit code.
    pub fn code(&self) -> u8 {
        match self {
            Failure::User(_) => 1,
            Failure::Usage(_) => 2,
            Failure::Silent(code) => *code,
        }
    }

    /// True when nothing should be printed.
    pub fn is_silent(&self) -> bool {
        matches!(self, Failure::Silent(_))
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::User(m) | Failure::Usage(m) => f.write_str(m),
            Failure::Silent(code) => write!(f, "exit {code}"),
        }
    }
}

impl std::error::Error for Failure {}

/// A user error (exit 1).
pub fn user(msg: impl Into<String>) -> anyhow::Error {
    Failure::User(msg.into()).into()
}

/// A usage error (exit 2).
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    Failure::Usage(msg.into()).into()
}
