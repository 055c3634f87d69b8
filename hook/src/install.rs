//! The install library: how ovhook's entries are put into an agent's configuration files and
//! taken out again. It knows no harness: each gives its [`target::InstallTarget`] (through
//! `Harness::install_target`), and the commands `ovhook install` / `ovhook uninstall`
//! (`crate::cmd`) run over them.
//!
//! An install target gives the files ([`target::Place`]s) an install at
//! user or project scope edits and their formats. Install reads and validates every place first,
//! then merges our entries into each, keeping every foreign entry and key in place, checks that
//! every file it would change may be replaced ([`atomic::check_replaceable`]: no FIFO, nothing
//! read-only) and only then writes: the previous file backed up as `<file>.bak` (0600), the
//! user's bytes before ovhook's first change kept as `<file>.ovhook-orig` ([`original`]), the file
//! replaced atomically (through a symlink). A re-run that changes nothing writes nothing.
//! Uninstall decides every file's fate the same way before writing any: deleted (install created
//! it), given back byte for byte (it is the original plus our entries only), or stripped of our
//! entries (the user changed it since). Project installs are recorded in the [`manifest`] so uninstall and
//! later installs (an upgrade moving the binary) find them. Credential flags go to `ovcli.conf`
//! ([`ovcli`]), never into a project file; without them `ovcli.conf` is not touched.
//!
//! Every entry names the binaries' stable home ([`bin_home`], `~/.openviking/ovhook/bin/ovhook`),
//! never the binary install was run from: install copies itself (and `ovreplay`) there
//! atomically, after every place is validated and before any is written. Uninstall removes the
//! home's binaries last, once nothing installed (no harness, no project, no plugin) names them.

pub(crate) mod atomic;
pub mod bin_home;
pub mod flat_hooks;
pub mod hook_groups;
pub mod json_doc;
mod json_splice;
pub mod manifest;
pub mod marker;
pub mod mcp_servers;
pub mod original;
pub mod ovcli;
pub mod paths;
pub mod places;
pub mod target;
pub mod trust;
