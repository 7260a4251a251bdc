//! The frame pipeline: what a plan does to the source's stream ([`stages`]), the one decode
//! -> stages -> sinks loop ([`pipeline`]) and sparse reading by seeks ([`sparse`]), and what
//! frames go through on the way (placement, drawing, OpenCV's trackers, the video sinks).
//!
//! Files: [`fit`] places, [`draw`] and [`overlay`] draw, [`tracking`] fills box gaps
//! (`tracking` feature), [`sinks`] encode video, [`provenance`] says where frames came from.
//
// Two of each, told apart: `fit` here places pixels and boxes (`Placement`); `vocab/fit.rs` is
// only the plan's word for it (`Fit`, the `WxH` syntax). `sinks` here encodes video
// (`VideoSink`, `StagedSink`); the image files of a frames export are `exports/frames/sink.rs`.

pub(crate) mod draw;
pub(crate) mod fit;
pub(crate) mod overlay;
pub(crate) mod pipeline;
pub(crate) mod provenance;
pub(crate) mod sinks;
pub(crate) mod sparse;
pub(crate) mod stages;
pub(crate) mod tracking;
