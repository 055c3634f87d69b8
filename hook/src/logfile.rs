//! ovhook's log: a file under the state root, opened only when something is
//! logged (the hot path never touches it). Hooks never log to stdout or stderr.
//! Credentials never reach it: nothing logs a `Secret`'s contents.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// Rotate when the log grows past this.
const MAX_LOG_BYTES: u64 = 8 << 20;

struct FileLogger {
    path: PathBuf,
    file: Mutex<Option<File>>,
}

impl FileLogger {
    fn open(&self) -> Option<File> {
        if let Some(parent) = self.path.parent() {
            ov_engine::paths::create_private_dir(parent).ok()?;
        }
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
            let _ = std::fs::rename(&self.path, self.path.with_extension("log.1"));
        }
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)
            .ok()
    }
}

impl log::Log for FileLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let Ok(mut guard) = self.file.lock() else {
            return;
        };
        if guard.is_none() {
            *guard = self.open();
        }
        if let Some(f) = guard.as_mut() {
            let line = format!(
                "{} {} pid={} {}: {}\n",
                ov_engine::store::now_ms(),
                record.level(),
                std::process::id(),
                record.target(),
                record.args()
            );
            let _ = f.write_all(line.as_bytes());
        }
    }

    fn flush(&self) {}
}

static LOGGER: OnceLock<FileLogger> = OnceLock::new();

/// Installs the file logger (once per process, at level info); `debug` raises the level (a
/// later call may raise it once the configuration is known).
pub fn init(debug: bool) {
    let logger = LOGGER.get_or_init(|| FileLogger {
        path: ov_engine::paths::log_file(&ov_engine::paths::state_root()),
        file: Mutex::new(None),
    });
    if log::set_logger(logger).is_ok() {
        log::set_max_level(log::LevelFilter::Info);
    }
    if debug {
        log::set_max_level(log::LevelFilter::Debug);
    }
}
