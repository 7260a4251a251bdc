//! vidprep: frame-accurate video preparation for multimodal-LLM video benchmarks.
//!
//! Everything vidprep makes comes from a [`Plan`]: one source, an optional span and decision
//! point, boxes to carry and draw, a needle to insert, and the exports to write (a clip, a
//! capped video for video models, sampled frames for image models). A manifest line is a
//! plan in JSON. The crate root holds that main job and the error:
//!
//! - [`Plan`]: what to make from one source;
//! - [`execute`] runs one plan to a [`Destination`] with [`ExecOptions`], telling a
//!   [`Progress`] ([`NoProgress`]: nobody) how it goes, and returns its [`Outcome`];
//!   [`Destination::Memory`] returns sampled frames as RGB arrays (the Python package's
//!   `vidprep.sample`);
//! - [`run_batch`] runs many plans with [`BatchOptions`] (parallel, resumable, sharded);
//! - [`Error`], its [`ErrorKind`], and [`Result`].
//!
//! Everything else is in a module named by its job:
//!
//! - [`plan`]: the plan's types (exports, boxes, insertion, sizes, samplers, encoding);
//! - [`time`]: exact times, the time syntax (`5s`, frame `250`, `75%`) and spans;
//! - [`exec`]: running one plan: [`execute`] and its options, outcome and export reports;
//! - [`batch`]: running many: [`run_batch`], one item, a manifest, reports, shards;
//! - [`manifest`]: manifest files read and checked line by line;
//! - [`call`]: what one call carries: cancel token, settings, work tally;
//! - [`media`]: sources, probing, frame tables, exact frame reading;
//! - [`sampling`]: which frames each toolkit's sampler takes, from a frame count and rate;
//! - [`check`]: proving that vidprep reads sources as a plain FFmpeg decode does;
//! - [`records`]: the records vidprep reads and writes (`frames.json`, reports, the parity
//!   record, the version) and the JSON Schemas of plans, records and reports;
//! - [`insert`]: batches of GOT-10k sequences inserted into host videos;
//! - [`boxes`]: annotation boxes read and written;
//! - [`track`]: boxes tracked through a source;
//! - [`detect`]: event proposals as a manifest;
//! - [`review`]: the review page of a run and applying its decisions.
//!
//! ```no_run
//! use vidprep::plan::{ExportSpec, FramesExport};
//! use vidprep::time::TimeSpec;
//! use vidprep::{execute, Destination, ExecOptions, NoProgress, Plan};
//!
//! let mut frames = FramesExport::default();
//! frames.count = Some(16);
//! let mut plan = Plan::new("event-1", "raw.mp4", vec![
//!     ExportSpec::Clip(Default::default()),
//!     ExportSpec::Frames(frames),
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
//!
//! Which frames a toolkit's sampler would take, without decoding anything:
//! [`sampling::sample`] over a [`FrameTimes`](sampling::FrameTimes) (a
//! [`ConstantRate`](sampling::ConstantRate), or a [`FrameList`](sampling::FrameList) of
//! presentation times for a variable frame rate), for a [`Request`](sampling::Request) of a
//! count or an fps. These are the formulas the frames export uses, and what its `frames.json`
//! records as `indices`.
//!
//! ```
//! use vidprep::sampling::{sample, ConstantRate, Request, Sampler};
//!
//! let video = ConstantRate::new(300, 30, 1); // 300 frames at 30 fps: 10 s
//! // numpy.round(numpy.linspace(0, 299, 4)) gives [0, 100, 199, 299].
//! let four = sample(&video, Sampler::default(), Request::Count(4), false)?;
//! assert_eq!(four.indices, [0, 100, 199, 299]);
//! // One frame a second: the frame shown at 0 s, 1 s, ... 9 s.
//! let fps = Request::Fps { fps: 1.0, max_frames: None };
//! let each_second = sample(&video, Sampler::default(), fps, false)?;
//! assert_eq!(each_second.indices, [0, 30, 60, 90, 120, 150, 180, 210, 240, 270]);
//! // More frames than the video has are refused unless repeats are allowed.
//! assert!(sample(&ConstantRate::new(3, 30, 1), Sampler::default(), Request::Count(8), false).is_err());
//! # Ok::<(), vidprep::sampling::SampleError>(())
//! ```

#![warn(missing_docs)]

// The facade: the root re-exports the main job's names and the error (below); every other
// public name is in one public module named by its job. A public module's own files are
// private or `pub(crate)`, and it `pub use`s what it shows (`plan`, `records` and `media` are
// the pattern), so everything not re-exported stays crate-private, as do the `pub(crate)`
// modules but for what a public module re-exports from them. The command line (`cli/`, package
// `vidprep-cli`) is a client of this facade like any other, so the compiler holds it.
// `tests/architecture.rs` checks the layers.
// Items that only unit tests use are `#[cfg(test)]`, so the compiler's dead-code check covers
// every module.
pub(crate) mod annotations;
pub mod batch;
pub mod call;
pub mod check;
pub mod detect;
mod error;
pub mod exec;
pub(crate) mod exports;
pub(crate) mod frames;
// One entry per parser of untrusted input, for `fuzz/` and `tests/reliability/fuzz_replay.rs`.
#[doc(hidden)]
pub mod fuzzing;
pub mod media;
pub mod plan;
pub(crate) mod profiles;
pub mod records;
pub mod review;
pub(crate) mod vocab;

pub use batch::manifest;
pub use profiles::sampling;
pub use vocab::time;

pub use batch::{run_batch, BatchOptions};
pub use error::{Error, ErrorKind, Result};
pub use exec::{execute, Destination, ExecOptions, NoProgress, Outcome, Progress};
pub use plan::Plan;

/// The boxes vidprep reads and writes: the native annotation format (`docs/annotations.md`) of
/// boxes files and of the `annotations` a sidecar carries, any dataset format read with the
/// default options, and boxes written as native or V-STaR JSON.
pub mod boxes {
    use std::path::Path;

    use crate::annotations::{self, Format};
    pub use crate::annotations::{
        from_native_str, read_native, Annotations, BBox, Entry, Key, Meta, Track,
    };

    /// Reads an annotation file (or GOT-10k folder) in `format` (detected when `Auto`) with the
    /// default options: every track, every frame, with its extras (`vidprep track` reads
    /// its keys so).
    pub fn read_with_defaults(path: &Path, format: Format) -> crate::Result<Annotations> {
        Ok(annotations::read(
            path,
            format,
            &annotations::ReadOptions::default(),
        )?)
    }

    /// The native JSON text of `boxes` (`docs/annotations.md`), as [`read_native`] reads it.
    pub fn to_native_text(boxes: &Annotations) -> crate::Result<String> {
        Ok(annotations::to_native_string(boxes)?)
    }

    /// The V-STaR JSON text of `boxes` (a list with one item per track, named by its id;
    /// pretty-printed, with a final newline), whose frame keys are frames of a video shown at
    /// `times` and ending at `end` (the source's frame table).
    pub fn to_vstar_text(
        boxes: &Annotations,
        times: Vec<crate::vocab::time::Time>,
        end: crate::vocab::time::Time,
    ) -> crate::Result<String> {
        let (w, h) = boxes.meta.frame_size.unwrap_or((0, 0));
        let clock = annotations::TimestampClock::new(times, end, w, h)?;
        let items: Vec<annotations::VstarItem> = (0..boxes.tracks.len())
            .map(|i| {
                annotations::vstar_item(
                    boxes,
                    i,
                    &clock,
                    annotations::Fill::None,
                    &boxes.tracks[i].id,
                )
            })
            .collect::<Result<_, _>>()?;
        let text = serde_json::to_string_pretty(&items)
            .map_err(|e| crate::Error::Internal(format!("cannot write JSON: {e}")))?;
        Ok(text + "\n")
    }
}

/// Tracking hand-drawn boxes through a source with OpenCV's CSRT or KCF (`vidprep track`), or
/// filling between them without a tracker. The trackers need the `tracking` feature: without
/// it, a tracking fill is a usage error that says how to build with it.
pub mod track {
    pub use crate::exec::track::{track_source, track_source_in};
    pub use crate::frames::tracking::{GapRecord, TrackTiming, DEFAULT_MIN_DRIFT_IOU};
}

/// Inserting GOT-10k tracking sequences into host videos in batches (`vidprep insert
/// --hosts`): the host videos of a folder, the sequences of a dataset root, and the plans that
/// pair them reproducibly from a seed.
pub mod insert {
    pub use crate::frames::stages::insert::{
        list_hosts, list_sequences, plan_batch as plan_insertions,
    };
}

/// The README's examples, compiled by `cargo test` so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
