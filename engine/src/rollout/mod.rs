//! ZCode rollout reader (in progress)
