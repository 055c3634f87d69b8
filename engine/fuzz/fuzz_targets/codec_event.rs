//! See `ov_engine_fuzz::codec_event`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ov_engine_fuzz::codec_event(data));
