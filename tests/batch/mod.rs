//! Batches and the fleet: `vidprep run` (reports, resumes, kills, shards), drivers sharing an
//! output folder, the same bytes through every door, memory of big manifests, and work done once
//! per item (one open of the source).

// the same bytes through every door (was tests/door_parity.rs)
mod door_parity;
// memory of the fleet's big inputs (was tests/fleet_memory.rs)
mod fleet_memory;
// one open of the source per item (strace) (was tests/opens_once.rs)
mod opens_once;
// two drivers merging reports into one folder (was tests/report_drivers.rs)
mod report_drivers;
// `vidprep run`: reports, kills and resumes, shards (was tests/run.rs)
mod run;
// work and threads once per item (was tests/work_once.rs)
mod work_once;
