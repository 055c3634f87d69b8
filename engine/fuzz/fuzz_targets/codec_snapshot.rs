//! See `ov_engine_fuzz::codec_snapshot`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ov_engine_fuzz::codec_snapshot(data));
