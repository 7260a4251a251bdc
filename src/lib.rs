//! vidprep: frame-accurate video preparation for multimodal-LLM video benchmarks.
//!
//! Everything vidprep makes comes from a [`Plan`]: one source, an optional span and decision
//! point, boxes to carry and draw, a needle to insert, and the exports to write (a clip, a
//! capped video for video models, sampled frames for image models). A manifest line is a
//! plan in JSON; [`execute`] runs one plan, [`run_batch`] runs many (parallel, resumable,
//! sharded). [`probe`] describes a video and [`FrameReader`] reads its frames exactly;
//! [`Destination::Memory`] returns sampled frames as RGB arrays (the Python package's
//! `vidprep.sample`).
//!
//! ```no_run
//! use vidprep::plan::{ExportSpec, FramesExport, Plan};
//! use vidprep::time::TimeSpec;
//! use vidprep::{execute, Destination, ExecOptions, NoProgress};
//!
//! let mut plan = Plan::new("event-1", "raw.mp4", vec![
//!     ExportSpec::Clip(Default::default()),
//!     ExportSpec::Frames(FramesExport { count: Some(16), ..Default::default() }),
//! ]);
//! plan.start = Some(TimeSpec::parse("5s")?);
//! plan.end = Some(TimeSpec::parse("250")?);
//! plan.decision = Some(TimeSpec::parse("75%")?);
//! let outcome = execute(&plan, &Destination::Folder("out/event-1".into()),
//!                       &ExecOptions::default(), &mut NoProgress)?;
//! for export in &outcome.exports {
//!     println!("{}", export.summary);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

// Everything below the facade is crate-private: a library user sees the plan types (`plan`,
// `time`) and the items re-exported here. `tests/architecture.rs` checks the layers. The
// modules marked `allow(dead_code, unused_imports)` were public before the facade and keep
// items (readers, writers, formulas) that only their unit tests use now: to prune one by one.
#[allow(dead_code, unused_imports)]
pub(crate) mod annotations;
pub(crate) mod batch;
pub(crate) mod cancel;
#[cfg(feature = "cli")]
mod cli;
#[allow(dead_code, unused_imports)]
pub(crate) mod detect;
#[allow(dead_code, unused_imports)]
pub(crate) mod draw;
mod error;
pub(crate) mod exec;
pub(crate) mod exports;
pub(crate) mod fit;
pub(crate) mod hash;
pub(crate) mod host;
#[allow(dead_code, unused_imports)]
pub(crate) mod media;
pub(crate) mod output;
pub(crate) mod overlay;
pub(crate) mod pipeline;
pub mod plan;
#[allow(dead_code)]
pub(crate) mod profiles;
#[allow(dead_code, unused_imports)]
pub(crate) mod review;
#[allow(dead_code, unused_imports)]
pub(crate) mod sampling;
pub(crate) mod sidecar;
pub(crate) mod sinks;
pub(crate) mod sparse;
pub(crate) mod stages;
pub(crate) mod tally;
mod textual;
pub mod time;

pub use batch::{
    parse_shard, run_batch, shard_of, BatchOptions, ItemReport, Observer, Quiet, Status, Summary,
};
pub use cancel::CancelToken;
#[cfg(feature = "cli")]
pub(crate) use error::require_utf8;
pub use error::{Error, ErrorKind, FfmpegError, Result};
pub use exec::{execute, Destination, ExecOptions, MemoryFrames, Outcome, DEFAULT_MEMORY_BUDGET};
pub use exports::{ExportReport, ExportTarget};
pub use media::encode::EncodeSettings;
pub use media::probe::{probe, probe_source, AudioInfo, MediaInfo, VideoInfo};
pub use media::{DecodeOptions, Frame, FrameReader, FrameTable, Source, TableCache};
pub use pipeline::{NoProgress, Progress};
pub use plan::manifest::read_manifest;
pub use plan::Plan;
#[cfg(feature = "cli")]
pub(crate) use stages::insert::{list_hosts, list_sequences, plan_batch as plan_insertions};
pub use tally::{Counts, Tally};

/// Reading the boxes vidprep writes: the native annotation format (`docs/annotations.md`) of
/// boxes files and of the `annotations` a sidecar carries.
pub mod boxes {
    pub use crate::annotations::{
        from_native_str, read_native, Annotations, BBox, Entry, Key, Meta, Track,
    };
}

/// The command line's entry point (`src/main.rs` calls it; not part of the library's API).
#[cfg(feature = "cli")]
#[doc(hidden)]
pub fn cli_main() -> std::process::ExitCode {
    cli::main()
}

/// The README's examples, compiled by `cargo test` so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
