//! `decode_frame` / `decode_segment_header` on arbitrary bytes; see `ov_journal_fuzz::journal_frame`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ov_journal_fuzz::journal_frame(data));
