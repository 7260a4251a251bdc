//! Reliability: the fault corpus (bad inputs, colliding outputs, misuse, interrupted runs, the
//! fleet's locks), hostile names and sizes, memory under hostile sizes, bad input, and the fuzz
//! targets' seeds.

mod bad_input;
mod fault_corpus;
mod fault_hostile;
mod fuzz_replay;
pub(crate) mod hostile_memory;
