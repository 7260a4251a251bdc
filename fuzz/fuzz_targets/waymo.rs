//! Fuzzes `vidprep::fuzzing::Target::Waymo` (see `vidprep::fuzzing`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vidprep_fuzz::check(vidprep::fuzzing::Target::Waymo, data)
});
