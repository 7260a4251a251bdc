//! Fuzzes `vidprep::fuzzing::Target::Time` (see `vidprep::fuzzing`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vidprep_fuzz::check(vidprep::fuzzing::Target::Time, data)
});
