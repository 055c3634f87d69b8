//! PreToolUse guard (in progress)
