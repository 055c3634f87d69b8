//! See `ov_engine_fuzz::rollout_line`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ov_engine_fuzz::rollout_line(data));
