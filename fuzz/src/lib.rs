//! What every fuzz target does: feed the input to one of `vidprep::fuzzing`'s entries and
//! panic (a finding, for libFuzzer) when the property breaks.

use vidprep::fuzzing::{run, Scratch, Target};

thread_local! {
    static SCRATCH: Scratch = Scratch::new().expect("a temporary folder for the inputs");
}

/// Runs `target` on `data`; panics with what broke.
pub fn check(target: Target, data: &[u8]) {
    SCRATCH.with(|scratch| {
        if let Err(broke) = run(target, data, scratch) {
            panic!("{}: {broke}", target.name());
        }
    });
}
