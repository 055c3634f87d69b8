//! Which agents are on this machine, and one summary line for each: found (its executable on
//! `PATH`, or its configuration folder), whether ovhook is installed there, and whether our
//! hooks will run (none of the harness's own checks FAILs).
//!
//! What to look for is each harness's data ([`Presence`]); an agent neither found nor
//! installed gets no line.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Check, Level};

/// How to tell an agent is on this machine.
#[derive(Debug, Clone, Copy)]
pub struct Presence {
    /// Its executables' names, looked up on `PATH`.
    pub binaries: &'static [&'static str],
    /// Its configuration folder for a home folder.
    pub config_dir: fn(&Path) -> PathBuf,
}

/// Where an agent was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Its executable, on `PATH`.
    OnPath(PathBuf),
    /// Its configuration folder (no executable on `PATH`).
    ConfigDir(PathBuf),
}

impl Presence {
    /// Where the agent is: an executable of its name in a folder of `path_var` (`PATH`), else
    /// its configuration folder under `home`; `None` when neither is there.
    pub fn find(&self, home: &Path, path_var: Option<&OsStr>) -> Option<Found> {
        let on_path = path_var
            .into_iter()
            .flat_map(std::env::split_paths)
            .filter(|dir| dir.is_absolute())
            .flat_map(|dir| self.binaries.iter().map(move |b| dir.join(b)))
            .find(|p| is_executable(p));
        if let Some(bin) = on_path {
            return Some(Found::OnPath(bin));
        }
        let dir = (self.config_dir)(home);
        dir.is_dir().then_some(Found::ConfigDir(dir))
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The line about one agent (`title`, installed as `name`): where it was found, whether ovhook
/// is installed for it, and, when it is, whether our hooks will run by the harness's own
/// `checks` (the first FAIL says why not). `None` for an agent neither found nor installed.
pub fn agent_line(
    title: &str,
    name: &str,
    found: Option<&Found>,
    installed: bool,
    checks: &[Check],
) -> Option<Check> {
    let what = format!("agent {title}");
    let place = match found {
        Some(Found::OnPath(bin)) => format!("found: {}", bin.display()),
        Some(Found::ConfigDir(dir)) => format!("found: {} (not on PATH)", dir.display()),
        None if installed => "not found on PATH".to_owned(),
        None => return None,
    };
    if !installed {
        return Some(Check::new(
            Level::Ok,
            what,
            format!("{place}; ovhook is not installed for it (ovhook install --harness {name})"),
        ));
    }
    Some(match checks.iter().find(|c| c.level == Level::Fail) {
        None => Check::new(
            Level::Ok,
            what,
            format!("{place}; ovhook is installed and its hooks will run"),
        ),
        Some(fail) => Check::new(
            Level::Fail,
            what,
            format!(
                "{place}; ovhook is installed but its hooks will not run: {}: {}",
                fail.what, fail.detail
            ),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn presence() -> Presence {
        Presence {
            binaries: &["agent-x", "agentx"],
            config_dir: |home| home.join(".agent-x"),
        }
    }

    fn executable(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        std::fs::write(path, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }

    #[test]
    fn found_on_path_else_by_its_folder_else_not() {
        let tmp = tempfile::tempdir().expect("tmp");
        let (home, bin) = (tmp.path().join("home"), tmp.path().join("bin"));
        let path = format!("relative:{}", bin.display());
        assert_eq!(presence().find(&home, Some(OsStr::new(&path))), None);
        std::fs::create_dir_all(home.join(".agent-x")).expect("mkdir");
        assert_eq!(
            presence().find(&home, Some(OsStr::new(&path))),
            Some(Found::ConfigDir(home.join(".agent-x")))
        );
        executable(&bin.join("agentx"), 0o644);
        assert!(
            matches!(
                presence().find(&home, Some(OsStr::new(&path))),
                Some(Found::ConfigDir(_))
            ),
            "a file that does not execute is no agent"
        );
        executable(&bin.join("agentx"), 0o755);
        assert_eq!(
            presence().find(&home, Some(OsStr::new(&path))),
            Some(Found::OnPath(bin.join("agentx")))
        );
        assert!(matches!(
            presence().find(&home, None),
            Some(Found::ConfigDir(_))
        ));
    }

    #[test]
    fn the_line_says_installed_and_whether_hooks_run() {
        let found = Found::OnPath(PathBuf::from("/b/x"));
        assert_eq!(agent_line("X", "x", None, false, &[]), None);
        let line = agent_line("X", "x", Some(&found), false, &[]).expect("a line");
        assert_eq!(line.level, Level::Ok);
        assert!(line.detail.contains("ovhook install --harness x"), "{line}");
        let fine = [Check::new(Level::Ok, "x", "fine")];
        let line = agent_line("X", "x", Some(&found), true, &fine).expect("a line");
        assert!(line.detail.ends_with("its hooks will run"), "{line}");
        let broken = [
            Check::new(Level::Warn, "x", "meh"),
            Check::new(Level::Fail, "x trust", "untrusted"),
        ];
        let line = agent_line("X", "x", Some(&found), true, &broken).expect("a line");
        assert_eq!(line.level, Level::Fail);
        assert!(
            line.detail.ends_with("will not run: x trust: untrusted"),
            "{line}"
        );
        let line = agent_line("X", "x", None, true, &fine).expect("installed, not found");
        assert!(line.detail.starts_with("not found on PATH"), "{line}");
    }
}
