//! Jobs: small plans over the pipeline. Each resolves what the user asked against the real
//! video, picks a source, stages and sinks, runs the pipeline and writes sidecars.

pub mod clip;
pub mod copy;
pub mod cut_manifest;
pub mod export_frames;
pub mod export_video;
pub mod insert;
pub mod manifest;
pub mod run;
