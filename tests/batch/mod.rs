//! Batches and the fleet: `vidprep run` (reports, resumes, kills, shards), drivers sharing an
//! output folder, the same bytes through every door, memory of big manifests, and work done
//! once per item (one open of the source).

mod door_parity;
mod fleet_memory;
mod opens_once;
mod report_drivers;
mod run;
mod work_once;
