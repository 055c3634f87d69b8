//! Arbitrary segment files through `Reader::open` and `Journal::open`; see
//! `ov_journal_fuzz::journal_open`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ov_journal_fuzz::journal_open(data));
