//! Fuzzes `vidprep::fuzzing::Target::H264` (see `vidprep::fuzzing`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vidprep_fuzz::check(vidprep::fuzzing::Target::H264, data)
});
