//! The frame pipeline: one decode -> stages -> sinks loop ([`pipeline`]), sparse reading by
//! seeks ([`sparse`]), placement ([`fit`]), drawing ([`draw`], [`overlay`]), the sinks that
//! encode video ([`sinks`]) and where their frames came from ([`provenance`]).
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
