//! ZCode's rollout file as a session's transcript source.

use std::path::PathBuf;

use ov_engine::delivery::TranscriptSource;
use ov_engine::turn::{FileIdentity, TranscriptChunk};

/// `~/.zcode/cli/rollout/model-io-<sessionId>.jsonl`.
pub struct ZcodeRollout {
    path: PathBuf,
}

impl ZcodeRollout {
    /// The rollout at `path`.
    pub fn new(path: PathBuf) -> ZcodeRollout {
        ZcodeRollout { path }
    }
}

impl TranscriptSource for ZcodeRollout {
    fn read(
        &self,
        resume: Option<(FileIdentity, u64)>,
    ) -> std::io::Result<Option<TranscriptChunk>> {
        ov_engine::transcript::zcode::read_chunk(&self.path, resume)
    }

    fn path(&self) -> String {
        self.path.display().to_string()
    }

    fn peek(&self, resume: Option<(FileIdentity, u64)>) -> Option<bool> {
        let meta = match std::fs::metadata(&self.path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(false),
            Err(_) => return None,
        };
        Some(match resume {
            None => meta.len() > 0,
            Some((id, offset)) => {
                ov_engine::transcript::tail::identity_of(&meta) != id || meta.len() != offset
            }
        })
    }
}
