//! Reliability: the fault corpus (bad inputs, colliding outputs, misuse, interrupted runs, the
//! fleet's locks), hostile names and sizes, memory under hostile sizes, bad input, and the fuzz
//! targets' seeds.

// bad input: clear errors, nothing half-written (was tests/bad_input.rs)
mod bad_input;
// the fault corpus (its scenarios in `fault_corpus/`) (was tests/fault_corpus.rs)
mod fault_corpus;
// hostile names and sizes (was tests/fault_hostile.rs)
mod fault_hostile;
// the fuzz targets' seeds (was tests/fuzz_replay.rs)
mod fuzz_replay;
// memory under hostile sizes (was tests/hostile_memory.rs)
pub(crate) mod hostile_memory;
