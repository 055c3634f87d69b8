//! Generators of ZCode rollout sessions (in progress).
