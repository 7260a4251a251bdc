//! Fuzzes `vidprep::fuzzing::Target::Native` (see `vidprep::fuzzing`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vidprep_fuzz::check(vidprep::fuzzing::Target::Native, data)
});
