//! Fuzzes `vidprep::fuzzing::Target::Decisions` (see `vidprep::fuzzing`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vidprep_fuzz::check(vidprep::fuzzing::Target::Decisions, data)
});
