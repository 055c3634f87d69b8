//! The configuration as a hook, the worker or a command loads it for a working directory:
//! read, the log opened at its debug level, its warnings logged.

use std::path::Path;

/// Loads the configuration for a working directory (cheap: a few small files).
pub fn load_config(cwd: &str) -> ov_engine::config::Config {
    let ctx = ov_engine::config::LoadContext::from_process(Some(Path::new(cwd)));
    let loaded = ov_engine::config::Config::load(&ctx);
    crate::logfile::init(loaded.config.debug);
    for w in &loaded.warnings {
        log::warn!("config: {w}");
    }
    loaded.config
}
