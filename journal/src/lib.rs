//! Append-only checksummed journal (in progress)
