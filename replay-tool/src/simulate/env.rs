//! The sandbox a playback runs in: the hooks' environment (a temporary HOME and state root,
//! none of the caller's `OPENVIKING_*`/`OVHOOK_*` variables), the server variables, and fresh
//! session ids.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::Path;

use anyhow::Context;

use super::server::ServerAccess;

/// The inherited environment without any `OPENVIKING_*`/`OVHOOK_*` variable, in the temp HOME.
pub fn base_env(home: &Path, state: &Path, scratch: &Path) -> BTreeMap<OsString, OsString> {
    let mut vars: BTreeMap<OsString, OsString> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            !(k.starts_with("OPENVIKING_") || k.starts_with("OVHOOK_"))
        })
        .collect();
    vars.insert("HOME".into(), home.into());
    vars.insert("OVHOOK_STATE_DIR".into(), state.into());
    vars.insert("TMPDIR".into(), scratch.into());
    // ZCode injects its version into every hook (`docs/zcode-hooks.md`).
    vars.insert("ZCODE_APP_VERSION".into(), "0.15.0-ovreplay".into());
    vars
}

/// The server variables of every hook: without a server, `OPENVIKING_URL=off` (journal only;
/// ovhook would otherwise try OpenViking's local default, whatever runs there).
pub fn server_vars(access: Option<&ServerAccess>) -> Vec<(&'static str, String)> {
    let Some(a) = access else {
        return vec![("OPENVIKING_URL", "off".to_owned())];
    };
    let mut v = vec![("OPENVIKING_URL", a.url.clone())];
    for (k, val) in [
        ("OPENVIKING_API_KEY", &a.api_key),
        ("OPENVIKING_ACCOUNT", &a.account),
        ("OPENVIKING_USER", &a.user),
    ] {
        if let Some(val) = val {
            v.push((k, val.clone()));
        }
    }
    v
}

/// A loopback URL nobody listens on: a port we bound, then closed.
pub fn closed_port_url() -> anyhow::Result<String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .context("could not bind a loopback port for server-down")?;
    let port = listener.local_addr()?.port();
    drop(listener);
    Ok(format!("http://127.0.0.1:{port}"))
}

/// The environment `ovhook drain` runs in: the base environment with the real server.
pub fn player_env(
    home: &Path,
    state: &Path,
    root: &Path,
    up: &[(&'static str, String)],
) -> BTreeMap<OsString, OsString> {
    let mut vars = base_env(home, state, &root.join("tmp"));
    for (k, v) in up {
        vars.insert((*k).into(), v.into());
    }
    vars
}

/// `sess_<uuid v4>` from the kernel's random source.
pub fn fresh_session_id() -> anyhow::Result<String> {
    Ok(format!("sess_{}", fresh_uuid()?))
}

/// A random RFC 4122 version 4 UUID.
pub fn fresh_uuid() -> anyhow::Result<String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .context("could not read /dev/urandom")?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_shape_and_uniqueness() -> anyhow::Result<()> {
        let a = fresh_uuid()?;
        let b = fresh_uuid()?;
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(fresh_session_id()?.starts_with("sess_"));
        Ok(())
    }

    #[test]
    fn base_env_drops_our_variables() {
        // SAFETY: tests in this module do not read these variables concurrently.
        unsafe {
            std::env::set_var("OPENVIKING_URL", "http://elsewhere");
            std::env::set_var("OVHOOK_FAILPOINT", "after-plan");
        }
        let v = base_env(Path::new("/h"), Path::new("/s"), Path::new("/t"));
        assert!(!v.keys().any(|k| {
            let k = k.to_string_lossy();
            k.starts_with("OPENVIKING_") || (k.starts_with("OVHOOK_") && k != "OVHOOK_STATE_DIR")
        }));
        assert_eq!(v.get(&OsString::from("HOME")), Some(&OsString::from("/h")));
        assert_eq!(
            v.get(&OsString::from("OVHOOK_STATE_DIR")),
            Some(&OsString::from("/s"))
        );
    }
}
