//! vidprep: frame-accurate video preparation for multimodal-LLM video benchmarks.
//!
//! Everything vidprep makes comes from a [`Plan`]: one source, an optional span and decision
//! point, boxes to carry and draw, a needle to insert, and the exports to write (a clip, a
//! capped video for video models, sampled frames for image models). A manifest line is a
//! plan in JSON; [`execute`] runs one plan, [`run_batch`] runs many (parallel, resumable,
//! sharded). [`probe`] describes a video and [`media::FrameReader`] reads its frames exactly.
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

pub mod annotations;
pub mod batch;
pub mod cancel;
pub mod detect;
pub mod draw;
mod error;
pub mod exec;
pub(crate) mod exports;
pub(crate) mod fit;
pub(crate) mod hash;
pub(crate) mod host;
pub mod media;
pub(crate) mod output;
pub(crate) mod overlay;
pub(crate) mod pipeline;
pub mod plan;
pub mod review;
pub mod sampling;
pub(crate) mod sidecar;
pub(crate) mod sinks;
pub(crate) mod sparse;
pub(crate) mod stages;
mod textual;
pub mod time;

pub use batch::{run_batch, BatchOptions, ItemReport, Observer, Status, Summary};
pub use cancel::CancelToken;
pub use error::{require_utf8, Error, ErrorKind, Result};
pub use exec::{execute, Destination, ExecOptions, MemoryFrames, Outcome};
pub use exports::{ExportReport, ExportTarget};
pub use media::encode::EncodeSettings;
pub use media::probe::{probe, probe_source, MediaInfo};
pub use pipeline::{NoProgress, Progress};
pub use plan::manifest::read_manifest;
pub use plan::Plan;
pub use stages::insert::{list_hosts, list_sequences, plan_batch as plan_insertions};

/// The README's examples, compiled by `cargo test` so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
