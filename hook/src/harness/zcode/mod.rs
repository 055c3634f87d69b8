//! ZCode: hook payloads, hook output, `~/.zcode/cli/config.json`.
pub mod config_file;
pub mod output;
pub mod rollout_source;
pub mod wire;
