//! Argument groups shared by several commands (encoding, span, boxes and drawing), each
//! turned into its part of a plan. Defaults are left to the plan and the run (so a command and
//! the same manifest line make the same plan).

use std::path::PathBuf;

use clap::Args;
use vidprep::plan::EncodeSettings;
use vidprep::plan::Rgb;
use vidprep::plan::{BoxOptions, BoxesOut, BoxesSpec, FrameRate, Plan};
use vidprep::plan::{Fill, Format, Grid, KeyKind, Units};
use vidprep::time::TimeSpec;

pub fn parse_time(s: &str) -> Result<TimeSpec, String> {
    TimeSpec::parse(s)
}

pub fn parse_text<T: std::str::FromStr>(s: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    s.parse::<T>().map_err(|e| e.to_string())
}

/// Encoding options shared by every command that writes video.
#[derive(Args, Clone)]
#[command(next_help_heading = "Encoding")]
pub struct EncodeArgs {
    /// x264 constant rate factor (0-51, lower is better) [default: 18].
    #[arg(long)]
    pub crf: Option<f32>,
    /// x264 preset [default: medium].
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(vidprep::plan::X264_PRESETS))]
    pub preset: Option<String>,
    /// Drop the audio instead of re-encoding it to AAC.
    #[arg(long)]
    pub no_audio: bool,
}

impl EncodeArgs {
    /// The run's defaults for exports that do not set their own.
    pub fn defaults(&self) -> EncodeSettings {
        let base = EncodeSettings::default();
        EncodeSettings {
            crf: self.crf.unwrap_or(base.crf),
            preset: self.preset.clone().unwrap_or(base.preset),
            audio: !self.no_audio,
            ..base
        }
    }

    /// Execution options with these defaults, for the command's call `ctx`.
    pub fn exec(&self, ctx: &vidprep::call::CallContext) -> vidprep::ExecOptions {
        let mut exec = vidprep::ExecOptions::default();
        exec.defaults = self.defaults();
        exec.in_context(ctx)
    }
}

/// The source's frame rate, for an image sequence that has none of its own (the plan's
/// `source_fps`). Named `--source-fps` everywhere: `export frames --fps` is the sampling rate.
#[derive(Args, Clone, Default)]
pub struct SourceFpsArg {
    /// Frame rate of an image folder or pattern (DIR/%06d.jpg) that has none of its own:
    /// 25, 29.97 or 30000/1001. MOT and GOT-10k sequences bring theirs; video files and URLs
    /// refuse it.
    #[arg(long, value_name = "RATE", value_parser = parse_text::<FrameRate>)]
    pub source_fps: Option<FrameRate>,
}

impl SourceFpsArg {
    pub fn apply(&self, plan: &mut Plan) {
        plan.source_fps = self.source_fps;
    }
}

/// The span of the source and the decision point.
#[derive(Args, Clone, Default)]
pub struct SpanArgs {
    /// First kept frame: 150 (frame), 5s / 5.0 (seconds), 00:01:05.250 (timecode).
    #[arg(long, visible_alias = "begin", value_parser = parse_time)]
    pub start: Option<TimeSpec>,
    /// End of the span, exclusive (same syntax as --start).
    #[arg(long, value_parser = parse_time)]
    pub end: Option<TimeSpec>,
    /// Decision point relative to the clip: drop frames at or after it (also 75%).
    #[arg(long, value_parser = parse_time)]
    pub decision: Option<TimeSpec>,
}

impl SpanArgs {
    pub fn apply(&self, plan: &mut Plan) {
        plan.start = self.start;
        plan.end = self.end;
        plan.decision = self.decision;
    }
}

/// Annotation options: which boxes, read how, drawn how.
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Boxes")]
pub struct BoxesArgs {
    /// Annotation file (or GOT-10k sequence folder) of the source: its boxes are drawn and
    /// remapped into every output's sidecar.
    #[arg(long)]
    pub boxes: Option<PathBuf>,
    /// Frames between keys: linear (interpolate), cubic (monotone PCHIP), hold, none, track
    /// (CSRT, `tracking` feature) or track-kcf.
    #[arg(long, value_parser = parse_text::<Fill>)]
    pub fill: Option<Fill>,
    /// MOT: drop boxes whose confidence is below this.
    #[arg(long)]
    pub min_confidence: Option<f64>,
    /// V-STaR: the item (vid) to read from a benchmark file.
    #[arg(long)]
    pub item: Option<String>,
    /// Use time or frame keys when a file has both.
    #[arg(long, value_parser = parse_text::<KeyKind>)]
    pub keys: Option<KeyKind>,
    /// Plain/Waymo coordinates: auto, pixels, normalized.
    #[arg(long, value_parser = parse_text::<Units>)]
    pub units: Option<Units>,
    /// Waymo: the camera to read when the file has several.
    #[arg(long)]
    pub camera: Option<String>,
    /// The pixel grid of the boxes: stored (the upright stored pictures, as `ffmpeg -i SRC
    /// f%d.png` writes them) or display (square pixels, as players show non-square-pixel
    /// video) [default: stored].
    #[arg(long, value_parser = parse_text::<Grid>)]
    pub grid: Option<Grid>,
    /// Carry the boxes into the sidecars without drawing them.
    #[arg(long)]
    pub no_draw: bool,
    /// Line width in pixels (default: scaled to the frame, 2 px at 360p, 6 px at 1080p).
    #[arg(long, help_heading = "Drawing")]
    pub thickness: Option<u32>,
    /// One colour for all boxes (RRGGBB or a name) instead of a colour per track.
    #[arg(long, value_parser = Rgb::parse, help_heading = "Drawing")]
    pub color: Option<Rgb>,
    /// Draw boxes without label tabs.
    #[arg(long, help_heading = "Drawing")]
    pub no_labels: bool,
    /// Also write each output's remapped boxes beside it: vidprep (X.boxes.json) or vstar
    /// (X.vstar.json).
    #[arg(long, value_parser = parse_text::<BoxesOut>)]
    pub boxes_out: Option<BoxesOut>,
}

impl BoxesArgs {
    /// The plan's boxes (options only when one differs from the defaults, so the plan reads
    /// as the same manifest line would).
    pub fn spec(&self, format: Option<Format>) -> Option<BoxesSpec> {
        let path = self.boxes.clone()?;
        let d = BoxOptions::default();
        let options = BoxOptions {
            format: format.unwrap_or(d.format),
            fill: self.fill.unwrap_or(d.fill),
            draw: !self.no_draw,
            labels: !self.no_labels,
            thickness: self.thickness,
            color: self.color,
            min_confidence: self.min_confidence,
            item: self.item.clone(),
            keys: self.keys.unwrap_or(d.keys),
            units: self.units.unwrap_or(d.units),
            camera: self.camera.clone(),
            grid: self.grid.unwrap_or(d.grid),
        };
        Some(BoxesSpec {
            path,
            options: (options != d).then_some(options),
        })
    }

    /// Refuses drawing or reading options given without --boxes (a usage error).
    pub fn refuse_options_without_boxes(&self) -> Result<(), vidprep::Error> {
        if self.options_without_boxes() {
            return Err(vidprep::Error::Usage(
                "box and drawing options need --boxes FILE (the annotations)".into(),
            ));
        }
        Ok(())
    }

    /// True when drawing or reading options were given without --boxes.
    pub fn options_without_boxes(&self) -> bool {
        self.boxes.is_none()
            && (self.fill.is_some()
                || self.min_confidence.is_some()
                || self.item.is_some()
                || self.grid.is_some()
                || self.thickness.is_some()
                || self.color.is_some()
                || self.no_labels
                || self.no_draw
                || self.boxes_out.is_some())
    }
}

/// The annotation format option (`--format`, also `--boxes-format`: the name `export
/// frames` gives it, where `--format` is the image format, works on every command).
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Boxes")]
pub struct FormatArg {
    /// Annotation format of --boxes: auto, got10k, mot, vstar, waymo, csv, json, vidprep.
    #[arg(long, visible_alias = "boxes-format", value_parser = parse_text::<Format>)]
    pub format: Option<Format>,
}

/// The annotation format option where `--format` names the image format (`--boxes-format`).
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Boxes")]
pub struct BoxesFormatArg {
    /// Annotation format of --boxes: auto, got10k, mot, vstar, waymo, csv, json, vidprep.
    #[arg(long, value_parser = parse_text::<Format>)]
    pub boxes_format: Option<Format>,
}

/// The plan a one-source command builds: `export` of `input`, its id the output's file stem
/// ([`id_for`]), with the source's frame rate, the boxes and the strictness its flags give.
/// (The span and decision point are the caller's: commands set them differently.)
pub fn source_plan(
    output: &std::path::Path,
    input: &std::path::Path,
    export: vidprep::plan::ExportSpec,
    source_fps: &SourceFpsArg,
    boxes: Option<BoxesSpec>,
    strict: bool,
) -> Plan {
    let mut plan = Plan::new(id_for(output), input, vec![export]);
    source_fps.apply(&mut plan);
    plan.boxes = boxes;
    plan.strict = strict;
    plan
}

/// The id a single command gives its plan: the output's file stem.
pub fn id_for(output: &std::path::Path) -> String {
    let stem = output
        .file_stem()
        .or(output.file_name())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let stem = stem.trim_start_matches('.');
    if stem.is_empty() {
        "output".into()
    } else {
        stem.chars().take(100).collect()
    }
}

/// Smart encoding of a clip (`--smart`, `--verify`).
#[derive(Args, Clone, Copy, Default)]
pub struct SmartArgs {
    /// Copy every whole GOP of an H.264 source untouched and re-encode only the partial GOPs
    /// at the edges (and an inserted needle): the same frames as a full encode, at near copy
    /// speed. Falls back to a full encode (the sidecar says why) where it cannot apply.
    #[arg(long)]
    pub smart: bool,
    /// With --smart: decode the output and check every frame against the source (copied
    /// frames bit-identical, re-encoded ones at least 40 dB PSNR pooled over Y, U and V; the sidecar gives the worst frame's luma PSNR too).
    #[arg(long, requires = "smart")]
    pub verify: bool,
}

/// Options of every batch door (`run`, `cut --manifest`, `insert --hosts`).
#[derive(Args, Clone)]
#[command(next_help_heading = "Batch")]
pub struct BatchArgs {
    /// Items at a time (default: one per core; codec threads are divided between them).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: Option<u32>,
    /// Run only shard I of N (0-based), e.g. 3/8: items are split by a hash of their id.
    #[arg(long, value_parser = vidprep::batch::parse_shard)]
    pub shard: Option<(usize, usize)>,
    /// Skip items already complete whose plan, inputs and outputs are unchanged.
    #[arg(long)]
    pub resume: bool,
    /// Start no new item after the first failure.
    #[arg(long)]
    pub fail_fast: bool,
    /// Decoder threads per item (default: the cores divided among the jobs). The encoder's
    /// threads are fixed, so that the output does not depend on the machine or on --jobs.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub codec_threads: Option<u32>,
    /// Print a JSON summary on stdout when done.
    #[arg(long)]
    pub json: bool,
}
