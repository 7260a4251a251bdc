//! vidprep: frame-accurate video preparation for multimodal-LLM video benchmarks.
//!
//! Everything vidprep makes comes from a [`Plan`]: one source, an optional span and decision
//! point, boxes to carry and draw, a needle to insert, and the exports to write (a clip, a
//! capped video for video models, sampled frames for image models). A manifest line is a
//! plan in JSON; [`execute`] runs one plan, [`run_batch`] runs many (parallel, resumable,
//! sharded). [`probe`] describes a video and [`FrameReader`] reads its frames exactly;
//! [`Destination::Memory`] returns sampled frames as RGB arrays (the Python package's
//! `vidprep.sample`). [`sample`] picks frame indices with any toolkit's formula from a frame
//! count and rate alone, with no video at all.
//!
//! ```no_run
//! use vidprep::plan::{ExportSpec, FramesExport, Plan};
//! use vidprep::time::TimeSpec;
//! use vidprep::{execute, Destination, ExecOptions, NoProgress};
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
//! Which frames a toolkit's sampler would take, without decoding anything: [`sample`] over a
//! [`FrameTimes`] (a [`ConstantRate`], or a [`FrameList`] of presentation times for a
//! variable frame rate), for a [`Request`] of a count or an fps. These are the formulas the
//! frames export uses, and what its `frames.json` records as `indices`.
//!
//! ```
//! use vidprep::plan::Sampler;
//! use vidprep::{sample, ConstantRate, Request};
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
//! # Ok::<(), vidprep::SampleError>(())
//! ```

#![warn(missing_docs)]

// Everything below the facade is crate-private: a library user sees the plan types (`plan`,
// `time`), the event proposals (`detect`), the review page (`review`), the typed records
// (`records`, whose own files are crate-private) and the items re-exported here. The command
// line (`cli/`, package `vidprep-cli`) is a client of this facade like any other, so the
// compiler holds it. `tests/architecture.rs` checks the layers.
// Items that only unit tests use are `#[cfg(test)]`, so the compiler's dead-code check covers
// every module.
pub(crate) mod annotations;
pub mod batch;
pub(crate) mod bitstream;
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
pub mod manifest;
pub mod media;
pub(crate) mod net;
pub(crate) mod output;
pub mod plan;
pub(crate) mod profiles;
pub mod records;
pub mod review;
pub mod sampling;
pub mod schemas;
pub(crate) mod stages;
mod textual;
pub mod time;
pub(crate) mod tracking;
pub(crate) mod vocab;

pub use batch::{
    bad_reports, clean_item, merge_report, parse_shard, run_batch, run_item, run_manifest,
    shard_of, write_report, BatchOptions, ItemReport, Observer, Quiet, Status, Summary,
};
pub use call::cancel::CancelToken;
pub use call::context::CallContext;
pub use call::settings::{
    FfmpegLog, NetworkSettings, Settings, DEFAULT_DOWNLOAD_LIMIT, DEFAULT_LEASE,
    DEFAULT_NETWORK_DEADLINE, DEFAULT_NETWORK_TIMEOUT,
};
pub use call::tally::{Counts, Tally};
pub use check::{
    check_sources, manifest_sources, CheckOptions, CheckReport, Compared, DamageFacts, Difference,
    ReferenceFrame, SizeChange, SourceCheck, TableFacts, Verdict, DEFAULT_CHECK_TIME_LIMIT,
};
pub use error::{require_utf8, Error, ErrorKind, FfmpegError, Result};
pub use exec::{
    execute, execute_checked, Destination, ExecOptions, MemoryFrames, Outcome,
    DEFAULT_MEMORY_BUDGET,
};
pub use exports::{ExportReport, ExportTarget};
pub use frames::pipeline::{NoProgress, Progress};
pub use manifest::{read_manifest, read_manifest_in, read_manifest_shard_in};
pub use media::init::set_ffmpeg_log;
pub use media::probe::{probe, probe_source, probe_source_in, AudioInfo, MediaInfo, VideoInfo};
pub use media::reference::rgb_frames_at as reference_rgb_frames;
pub use media::source::input_paths;
pub use media::{build_facts, BuildFacts};
pub use media::{DecodeOptions, Frame, FrameReader, FrameTable, Source, TableCache};
pub use output::group::{Committed, OutputGroup};
pub use plan::Plan;
pub use profiles::mirrored_package;
pub use records::sidecar::VERSION;
pub use sampling::{sample, ConstantRate, FrameList, FrameTimes, Request, SampleError, Sampled};
pub use schemas::{json_schema, json_schema_text, SchemaKind};
pub use stages::insert::{list_hosts, list_sequences, plan_batch as plan_insertions};
pub use vocab::{EncodeSettings, X264_PRESETS};

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
        times: Vec<crate::time::Time>,
        end: crate::time::Time,
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
    pub use crate::tracking::{GapRecord, TrackTiming, DEFAULT_MIN_DRIFT_IOU};
}

/// Inserting GOT-10k tracking sequences into host videos in batches (`vidprep insert
/// --hosts`): the host videos of a folder, the sequences of a dataset root, and the plans that
/// pair them reproducibly from a seed.
pub mod insert {
    pub use crate::stages::insert::{list_hosts, list_sequences, plan_batch as plan_insertions};
}

/// The README's examples, compiled by `cargo test` so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
