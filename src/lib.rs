//! vidprep: frame-accurate video preparation for multimodal-LLM video benchmarks.
//!
//! The library owns one decode -> transform -> encode pipeline ([`pipeline`]) over the media
//! core ([`media`]); each job ([`jobs`]) is a small plan on top of it. The `vidprep` binary is a
//! thin command-line layer over these functions.

pub mod annotations;
pub mod draw;
pub mod error;
pub mod media;
pub mod time;

pub use error::{Error, Result};
/// The ffmpeg bindings vidprep is built on (for callers that handle its frames).
pub use ffmpeg_next;
pub mod fit;
pub mod jobs;
pub mod output;
pub mod overlay;
pub mod pipeline;
pub mod sampling;
pub mod sidecar;
pub mod sinks;
pub mod sparse;
pub mod stages;
