//! Benchmarks of the rollout reader and the capture plan (filled in below).
fn main() {}
