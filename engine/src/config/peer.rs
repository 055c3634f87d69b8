//! The workspace peer: which repository the agent works in, read from git metadata without
//! spawning git.
//!
//! `.git` may be a directory, or a file `gitdir: <path>` (worktrees, submodules); the git
//! directory may hold a `commondir` file pointing at the shared directory whose `config` holds
//! the remotes. Only `[remote "origin"] url` is read (no `include`, no `insteadOf`).

use std::fs;
use std::path::{Path, PathBuf};

use crate::regular_file;

/// How much of a git config is read: `[remote "origin"]` sits near the top of any real one; a
/// larger file is read only this far (a cloned repository controls its size).
pub const GIT_CONFIG_READ_BYTES: u64 = 1 << 20;

/// `.git` and `commondir` files hold one path.
const POINTER_FILE_BYTES: u64 = 64 << 10;

/// A small file as text; `None` when absent, irregular (FIFO, device) or too large.
fn small_text(path: &Path, max: u64) -> Option<String> {
    regular_file::read_text(path, max).ok().flatten()
}

/// A repository found above the cwd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoInfo {
    /// The directory holding `.git` (the worktree root).
    pub root: PathBuf,
    /// The shared git directory (after `gitdir:` and `commondir`).
    pub common_dir: PathBuf,
    /// The normalised `origin` remote, e.g. `github.com-volcengine-openviking`.
    pub remote_id: Option<String>,
    /// The repository's name when there is no remote: the main worktree's folder name,
    /// normalised like a remote path segment (shared by every worktree).
    pub name: String,
}

impl RepoInfo {
    /// Finds the repository holding `cwd`: the nearest ancestor with a `.git` entry.
    pub fn discover(cwd: &Path) -> Option<RepoInfo> {
        let mut dir = Some(cwd);
        while let Some(d) = dir {
            let dot_git = d.join(".git");
            if let Ok(meta) = fs::symlink_metadata(&dot_git) {
                let git_dir = if meta.is_file() {
                    read_gitdir_file(&dot_git, d)?
                } else {
                    dot_git
                };
                return Some(RepoInfo::from_git_dir(d, &git_dir));
            }
            dir = d.parent();
        }
        None
    }

    fn from_git_dir(root: &Path, git_dir: &Path) -> RepoInfo {
        let common_dir = match small_text(&git_dir.join("commondir"), POINTER_FILE_BYTES) {
            Some(text) => {
                let p = PathBuf::from(text.trim());
                if p.is_absolute() {
                    p
                } else {
                    git_dir.join(p)
                }
            }
            None => git_dir.to_path_buf(),
        };
        let common_dir = fs::canonicalize(&common_dir).unwrap_or(common_dir);
        let remote_id =
            regular_file::read_prefix(&common_dir.join("config"), GIT_CONFIG_READ_BYTES)
                .ok()
                .flatten()
                .and_then(|bytes| origin_url(&String::from_utf8_lossy(&bytes)))
                .and_then(|url| normalize_remote_url(&url));
        let main_root = if common_dir.file_name().is_some_and(|n| n == ".git") {
            common_dir.parent().map(Path::to_path_buf)
        } else {
            Some(common_dir.clone())
        };
        let raw_name = main_root
            .as_deref()
            .or(Some(root))
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = segment(raw_name.strip_suffix(".git").unwrap_or(&raw_name));
        RepoInfo {
            root: root.to_path_buf(),
            common_dir,
            remote_id,
            name,
        }
    }

    /// The peer `peer.source = git` gives: the remote id, else the repository name.
    pub fn peer(&self) -> Option<String> {
        self.remote_id
            .clone()
            .or_else(|| (!self.name.is_empty()).then(|| self.name.clone()))
    }
}

fn read_gitdir_file(dot_git: &Path, root: &Path) -> Option<PathBuf> {
    let text = small_text(dot_git, POINTER_FILE_BYTES)?;
    let target = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("gitdir:"))?
        .trim();
    if target.is_empty() {
        return None;
    }
    let p = PathBuf::from(target);
    Some(if p.is_absolute() { p } else { root.join(p) })
}

/// The `url` of `[remote "origin"]` in a git config file's text.
pub fn origin_url(config: &str) -> Option<String> {
    let mut in_origin = false;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header.split(']').next().unwrap_or_default().trim();
            let (section, sub) = match header.split_once(char::is_whitespace) {
                Some((s, rest)) => (s, rest.trim().trim_matches('"')),
                None => (header, ""),
            };
            in_origin = section.eq_ignore_ascii_case("remote") && sub == "origin"
                || header.eq_ignore_ascii_case("remote.origin");
            continue;
        }
        if !in_origin {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            if k.trim().eq_ignore_ascii_case("url") {
                let v = v.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|x| x.strip_suffix('"'))
                    .unwrap_or(v);
                if !v.is_empty() {
                    return Some(v.to_owned());
                }
            }
        }
    }
    None
}

/// Normalises a git remote URL to a peer id: `host-owner-repo`, lowercase, without scheme,
/// credentials, port, `.git` suffix or trailing slash. Characters outside `[a-z0-9._]` become
/// `-`. `git@github.com:volcengine/OpenViking.git` and
/// `https://user:token@github.com/volcengine/OpenViking.git/` both give
/// `github.com-volcengine-openviking`.
pub fn normalize_remote_url(url: &str) -> Option<String> {
    let url = strip_userinfo(url.trim());
    let url = url.as_str();
    let (host, path) = if let Some((_, rest)) = url.split_once("://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = super::server_url::split_userinfo(authority).1;
        (strip_port(host), path)
    } else if let Some((authority, path)) = scp_like(url) {
        let host = super::server_url::split_userinfo(authority).1;
        (host, path)
    } else {
        ("", url)
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let path = path.trim_end_matches('/').to_ascii_lowercase();
    let path = path.strip_suffix(".git").unwrap_or(&path);
    let mut parts: Vec<String> = Vec::new();
    let host = segment(host);
    if !host.is_empty() {
        parts.push(host);
    }
    parts.extend(path.split('/').map(segment).filter(|s| !s.is_empty()));
    let id = parts.join("-");
    (!id.is_empty()).then_some(id)
}

/// The remote without its userinfo, split by the server URL's rule
/// ([`super::server_url::split_userinfo`]: everything up to the last `@`) but over the whole
/// remote, not only its authority: a remote is not a server URL (scp-like `user@host:path` has
/// no `://`), a malformed one may hold a token with a `/` in it (`https://user:to/ken@host/p`),
/// and a peer id is only a name, so dropping more never loses anything but a credential.
/// The scheme is kept.
fn strip_userinfo(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (Some(s), r),
        None => (None, url),
    };
    let rest = match super::server_url::split_userinfo(rest) {
        (Some(_), host_and_path) if !host_and_path.is_empty() => host_and_path,
        _ => rest,
    };
    match scheme {
        Some(s) => format!("{s}://{rest}"),
        None => rest.to_owned(),
    }
}

/// `[user@]host:path` with no `/` before the `:` (git's scp-like syntax).
fn scp_like(url: &str) -> Option<(&str, &str)> {
    let (authority, path) = url.split_once(':')?;
    if authority.is_empty() || authority.contains('/') || authority.len() == 1 {
        return None; // a local path, or a Windows drive letter
    }
    Some((authority, path))
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host
            .split(']')
            .next()
            .unwrap_or(host)
            .trim_start_matches('[');
    }
    match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    }
}

/// One path segment of a peer id: lowercase, `[a-z0-9._]` kept, runs of anything else → one `-`,
/// no leading or trailing `-` or `.`.
fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches(|c| c == '-' || c == '.').to_owned()
}

/// The anchor's `deriveWorkspacePeerId(cwd)`: every character outside `[A-Za-z0-9]` becomes `-`,
/// nothing else changes (`/Users/x/Dev/OpenViking` → `-Users-x-Dev-OpenViking`).
pub fn workspace_peer_from_cwd(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The project a working directory belongs to, as the configuration names it: its registry slot
/// (the repository's peer from its origin, else its root folder's name; outside a repository,
/// the folder). Every clone, subfolder and worktree of a repository has the same one.
pub fn project_slot(cwd: &Path) -> String {
    slot_for(RepoInfo::discover(cwd).as_ref(), cwd)
}

/// A file-name-safe registry slot (at most 128 bytes).
pub(crate) fn slot_for(repo: Option<&RepoInfo>, cwd: &Path) -> String {
    let raw = match repo {
        Some(RepoInfo {
            remote_id: Some(id),
            ..
        }) => id.clone(),
        Some(r) => workspace_peer_from_cwd(&r.root.to_string_lossy()),
        None => workspace_peer_from_cwd(&cwd.to_string_lossy()),
    };
    let mut slot: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if slot.len() > 128 {
        let mut cut = 128;
        while !slot.is_char_boundary(cut) {
            cut -= 1;
        }
        slot.truncate(cut);
    }
    if slot.is_empty() || slot.chars().all(|c| c == '.') {
        slot = "-".into();
    }
    slot
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_url_reads_only_origin() {
        let cfg = "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://x/y\n[remote \"origin\"]\n\turl = git@github.com:a/b.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n";
        assert_eq!(origin_url(cfg).as_deref(), Some("git@github.com:a/b.git"));
        assert_eq!(origin_url("[remote \"upstream\"]\nurl = x\n"), None);
    }

    #[test]
    fn scp_and_local_paths() {
        assert_eq!(
            normalize_remote_url("/srv/git/Proj.git").as_deref(),
            Some("srv-git-proj")
        );
        assert_eq!(
            normalize_remote_url("ssh://git@gitlab.example.com:2222/grp/sub/Repo.git").as_deref(),
            Some("gitlab.example.com-grp-sub-repo")
        );
        assert_eq!(normalize_remote_url(""), None);
    }

    #[rstest::rstest]
    #[case::scp("git@github.com:volcengine/OpenViking.git")]
    #[case::https("https://user:SECRETTOKEN@github.com/volcengine/OpenViking.git")]
    #[case::no_scheme("user:SECRETTOKEN@github.com/volcengine/OpenViking")]
    #[case::slash_in_token("https://user:SECRET/TOKEN@github.com/volcengine/OpenViking")]
    #[case::two_ats("https://a@SECRETTOKEN@github.com/volcengine/openviking.git")]
    #[case::ssh_port("ssh://SECRETTOKEN@github.com:22/volcengine/openviking")]
    fn userinfo_never_reaches_the_peer(#[case] url: &str) {
        let id = normalize_remote_url(url).expect("an id");
        assert_eq!(id, "github.com-volcengine-openviking", "{url}");
        assert!(!id.to_ascii_lowercase().contains("secret"), "{id}");
    }

    #[test]
    fn a_huge_git_config_is_read_only_so_far() {
        let dir = tempfile::tempdir().expect("tmp");
        let git = dir.path().join(".git");
        fs::create_dir(&git).expect("mkdir");
        let mut text = String::from("[core]\n");
        let filler = "\t# padding padding padding padding padding padding padding padding\n";
        while (text.len() as u64) < GIT_CONFIG_READ_BYTES + 4096 {
            text.push_str(filler);
        }
        text.push_str("[remote \"origin\"]\n\turl = git@github.com:a/b.git\n");
        fs::write(git.join("config"), &text).expect("write");
        let info = RepoInfo::discover(dir.path()).expect("repo");
        assert_eq!(
            info.remote_id, None,
            "the origin past the read bound was read"
        );
        fs::write(
            git.join("config"),
            "[remote \"origin\"]\n\turl = git@github.com:a/b.git\n",
        )
        .expect("write");
        let info = RepoInfo::discover(dir.path()).expect("repo");
        assert_eq!(info.remote_id.as_deref(), Some("github.com-a-b"));
    }

    #[test]
    fn a_fifo_git_config_does_not_block() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().expect("tmp");
        let git = dir.path().join(".git");
        fs::create_dir(&git).expect("mkdir");
        let cfg = git.join("config");
        let c = std::ffi::CString::new(cfg.as_os_str().as_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let info = RepoInfo::discover(dir.path()).expect("repo");
        assert_eq!(info.remote_id, None);
    }
}
