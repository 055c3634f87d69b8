//! See `ov_engine_fuzz::rollout_chunk`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ov_engine_fuzz::rollout_chunk(data));
