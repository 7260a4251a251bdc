//! `vidprep cut`, `vidprep truncate` and `vidprep overlay`: argument parsing and printing
//! around `jobs::clip` (and `jobs::copy`, `jobs::cut_manifest`).

use std::path::{Path, PathBuf};

use clap::Args;
use vidprep::annotations::{Fill, Format, KeyKind, ReadOptions, Units};
use vidprep::draw::Rgb;
use vidprep::jobs::clip::{
    make_clip, make_clips, ratio_output_path, ClipJob, ClipOptions, ClipOutput, ClipSpec,
};
use vidprep::media::EncodeSettings;
use vidprep::overlay::{BoxesOutFormat, BoxesRequest, Style};
use vidprep::time::TimeSpec;

use super::progress::BarProgress;

/// Encoding options shared by every command that writes video.
#[derive(Args, Clone)]
#[command(next_help_heading = "Encoding")]
pub struct EncodeArgs {
    /// x264 constant rate factor (0-51, lower is better).
    #[arg(long, default_value_t = 18.0)]
    crf: f32,
    /// x264 preset.
    #[arg(long, default_value = "medium", value_parser = clap::builder::PossibleValuesParser::new(vidprep::media::encode::X264_PRESETS))]
    preset: String,
    /// Drop the audio instead of re-encoding it to AAC.
    #[arg(long)]
    no_audio: bool,
}

impl EncodeArgs {
    pub fn settings(&self) -> EncodeSettings {
        EncodeSettings {
            crf: self.crf,
            preset: self.preset.clone(),
            audio: !self.no_audio,
            ..EncodeSettings::default()
        }
    }
}

/// Annotation options: which boxes, read how.
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Boxes")]
pub struct BoxesArgs {
    /// Annotation file (or GOT-10k sequence folder) of the source; its boxes are remapped into
    /// every output's sidecar.
    #[arg(long)]
    boxes: Option<PathBuf>,
    /// Frames between keys: linear (interpolate), hold, none.
    #[arg(long, default_value = "linear", value_parser = parse_fill)]
    fill: Fill,
    /// MOT: drop boxes whose confidence is below this.
    #[arg(long)]
    min_confidence: Option<f64>,
    /// V-STaR: the item (vid) to read from a benchmark file.
    #[arg(long)]
    item: Option<String>,
    /// Use time or frame keys when a file has both.
    #[arg(long, default_value = "time", value_parser = ["time", "frame"])]
    keys: String,
    /// Plain/Waymo coordinates: auto, pixels, normalized.
    #[arg(long, default_value = "auto", value_parser = ["auto", "pixels", "normalized"])]
    units: String,
    /// Waymo: the camera to read when the file has several.
    #[arg(long)]
    camera: Option<String>,
    /// Also write each output's remapped boxes beside it: vidprep (X.boxes.json) or vstar
    /// (X.vstar.json).
    #[arg(long, value_parser = parse_boxes_out)]
    boxes_out: Option<BoxesOutFormat>,
}

pub fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

fn parse_fill(s: &str) -> Result<Fill, String> {
    s.parse()
}

fn parse_boxes_out(s: &str) -> Result<BoxesOutFormat, String> {
    s.parse()
}

/// The annotation format option (`--format` on most commands).
#[derive(Args, Clone)]
#[command(next_help_heading = "Boxes")]
pub struct FormatArg {
    /// Annotation format of --boxes: auto, got10k, mot, vstar, waymo, csv, json, vidprep.
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    pub format: Format,
}

impl BoxesArgs {
    pub fn request(&self, format: Format, draw: Option<Style>) -> Option<BoxesRequest> {
        let path = self.boxes.clone()?;
        Some(BoxesRequest {
            path,
            format,
            read: ReadOptions {
                min_confidence: self.min_confidence,
                item: self.item.clone(),
                prefer_keys: if self.keys == "frame" {
                    KeyKind::Frame
                } else {
                    KeyKind::Time
                },
                units: match self.units.as_str() {
                    "pixels" => Units::Pixels,
                    "normalized" => Units::Normalized,
                    _ => Units::Auto,
                },
                camera: self.camera.clone(),
            },
            fill: self.fill,
            draw,
        })
    }
}

/// How boxes look.
#[derive(Args, Clone)]
#[command(next_help_heading = "Drawing")]
pub struct StyleArgs {
    /// Line width in pixels (default: scaled to the frame, 2 px at 360p, 6 px at 1080p).
    #[arg(long)]
    thickness: Option<u32>,
    /// One colour for all boxes (RRGGBB or a name) instead of a colour per track.
    #[arg(long, value_parser = Rgb::parse)]
    color: Option<Rgb>,
    /// Draw label tabs (track label and id) above boxes (the default).
    #[arg(long, overrides_with = "no_labels")]
    labels: bool,
    /// Draw boxes without labels.
    #[arg(long)]
    no_labels: bool,
}

impl StyleArgs {
    pub fn style(&self) -> Style {
        Style {
            thickness: self.thickness,
            color: self.color.map(|c| (c.0, c.1, c.2)),
            labels: !self.no_labels,
        }
    }
}

fn parse_time(s: &str) -> Result<TimeSpec, String> {
    TimeSpec::parse(s)
}

#[derive(Args)]
pub struct CutArgs {
    /// The source video (not with --manifest).
    #[arg(required_unless_present = "manifest")]
    input: Option<PathBuf>,
    /// First kept frame: 150 (frame), 5s / 5.0 (seconds), 00:01:05.250 (timecode).
    #[arg(long, value_parser = parse_time)]
    start: Option<TimeSpec>,
    /// End of the span, exclusive (same syntax as --start).
    #[arg(long, value_parser = parse_time)]
    end: Option<TimeSpec>,
    /// Decision point relative to the clip: drop frames at or after it.
    #[arg(long, value_parser = parse_time)]
    decision: Option<TimeSpec>,
    /// Output MP4 (a sidecar JSON is written beside it).
    #[arg(short, long, required_unless_present = "manifest")]
    output: Option<PathBuf>,
    /// Stream-copy whole GOPs instead of re-encoding (fast; snaps to keyframes).
    #[arg(long)]
    copy: bool,
    /// JSONL manifest: one {"id", "source", "start", "end", "decision", "boxes", ...} per line.
    #[arg(long, conflicts_with_all = ["input", "output", "start", "end", "decision", "copy", "boxes"])]
    manifest: Option<PathBuf>,
    /// Output folder for --manifest.
    #[arg(long, requires = "manifest")]
    out_dir: Option<PathBuf>,
    /// Parallel items for --manifest (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
    #[command(flatten)]
    encode: EncodeArgs,
    #[command(flatten)]
    boxes: BoxesArgs,
    #[command(flatten)]
    format: FormatArg,
    #[command(flatten)]
    style: StyleArgs,
}

fn print_outputs(outs: &[ClipOutput]) {
    for out in outs {
        let mut line = format!(
            "{}: {} frames (source frames {}..{})",
            out.output.display(),
            out.frames,
            out.resolved.kept.start,
            out.resolved.kept.end
        );
        if let Some(d) = &out.resolved.decision {
            line.push_str(&format!(
                ", ends at the decision point {}s",
                d.clip_time.exact
            ));
        }
        line.push_str(&format!(", sidecar {}", out.sidecar.display()));
        if let Some(b) = &out.boxes_file {
            line.push_str(&format!(", boxes {}", b.display()));
        }
        println!("{line}");
    }
}

fn print_warnings(sidecar: &Path) {
    let Ok(text) = std::fs::read_to_string(sidecar) else {
        return;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return;
    };
    for w in v["warnings"].as_array().into_iter().flatten() {
        if let Some(w) = w.as_str() {
            eprintln!("warning: {w}");
        }
    }
}

pub fn run_cut(args: CutArgs) -> anyhow::Result<u8> {
    if let Some(manifest) = &args.manifest {
        return run_cut_manifest_cli(manifest, &args);
    }
    let input = args.input.clone().expect("clap requires input");
    let output = args.output.clone().expect("clap requires output");
    let spec = ClipSpec {
        start: args.start,
        end: args.end,
        decision: args.decision,
    };
    if args.copy {
        if args.boxes.boxes.is_some() {
            anyhow::bail!("--copy cannot carry --boxes (it does not decode); drop one of them");
        }
        let out = vidprep::jobs::copy::copy_clip(&input, &spec, &output)?;
        for w in &out.warnings {
            eprintln!("warning: {w}");
        }
        let r = &out.resolution;
        println!(
            "{}: {} frames copied (source frames {}..{}; asked for {}..{}), sidecar {}",
            out.output.display(),
            out.frames,
            r.copied.start,
            r.copied.end,
            r.requested.kept.start,
            r.requested.kept.end,
            out.sidecar.display()
        );
        return Ok(super::EXIT_OK);
    }
    let options = ClipOptions {
        encode: args.encode.settings(),
        boxes: args.boxes.request(args.format.format, None),
        boxes_out: args.boxes.boxes_out,
        ..ClipOptions::default()
    };
    let mut progress = BarProgress::new("cut");
    let out = make_clip(&input, &spec, &output, &options, &mut progress)?;
    progress.done();
    print_warnings(&out.sidecar);
    print_outputs(&[out]);
    Ok(super::EXIT_OK)
}

#[derive(Args)]
pub struct TruncateArgs {
    /// The clip to truncate.
    input: PathBuf,
    /// Decision point: frames at or after it are dropped (frame, seconds, timecode or %).
    #[arg(long, value_parser = parse_time, required_unless_present = "ratios", conflicts_with = "ratios")]
    at: Option<TimeSpec>,
    /// Several truncations at once, e.g. 50%,75%,100%: writes OUT_50.mp4, OUT_75.mp4, ...
    #[arg(long, value_delimiter = ',', value_parser = parse_time)]
    ratios: Vec<TimeSpec>,
    /// Output MP4 (with --ratios, the base name).
    #[arg(short, long)]
    output: PathBuf,
    #[command(flatten)]
    encode: EncodeArgs,
    #[command(flatten)]
    boxes: BoxesArgs,
    #[command(flatten)]
    format: FormatArg,
}

pub fn run_truncate(args: TruncateArgs) -> anyhow::Result<u8> {
    let jobs: Vec<ClipJob> = match args.at {
        Some(at) => vec![ClipJob {
            spec: ClipSpec {
                decision: Some(at),
                ..Default::default()
            },
            output: args.output.clone(),
        }],
        None => args
            .ratios
            .iter()
            .map(|r| ClipJob {
                spec: ClipSpec {
                    decision: Some(*r),
                    ..Default::default()
                },
                output: ratio_output_path(&args.output, r),
            })
            .collect(),
    };
    let options = ClipOptions {
        encode: args.encode.settings(),
        boxes: args.boxes.request(args.format.format, None),
        boxes_out: args.boxes.boxes_out,
        ..ClipOptions::default()
    };
    let mut progress = BarProgress::new("truncate");
    let outs = make_clips(&args.input, &jobs, &options, &mut progress)?;
    progress.done();
    if let Some(first) = outs.first() {
        print_warnings(&first.sidecar);
    }
    print_outputs(&outs);
    Ok(super::EXIT_OK)
}

#[derive(Args)]
pub struct OverlayArgs {
    /// The source video.
    input: PathBuf,
    /// Output MP4 (a sidecar JSON with the boxes in output frames and pixels is written beside).
    #[arg(short, long)]
    output: PathBuf,
    /// Only this span of the source (same syntax as `cut`).
    #[arg(long, value_parser = parse_time)]
    start: Option<TimeSpec>,
    #[arg(long, value_parser = parse_time)]
    end: Option<TimeSpec>,
    /// Decision point relative to the clip.
    #[arg(long, value_parser = parse_time)]
    decision: Option<TimeSpec>,
    #[command(flatten)]
    boxes: BoxesArgs,
    #[command(flatten)]
    format: FormatArg,
    #[command(flatten)]
    style: StyleArgs,
    #[command(flatten)]
    encode: EncodeArgs,
}

pub fn run_overlay(args: OverlayArgs) -> anyhow::Result<u8> {
    let Some(boxes) = args
        .boxes
        .request(args.format.format, Some(args.style.style()))
    else {
        return Err(vidprep::Error::Usage(
            "overlay needs --boxes FILE (the annotations to draw)".into(),
        )
        .into());
    };
    let options = ClipOptions {
        encode: args.encode.settings(),
        boxes: Some(boxes),
        boxes_out: args.boxes.boxes_out,
        ..ClipOptions::default()
    };
    let spec = ClipSpec {
        start: args.start,
        end: args.end,
        decision: args.decision,
    };
    let mut progress = BarProgress::new("overlay");
    let out = make_clip(&args.input, &spec, &args.output, &options, &mut progress)?;
    progress.done();
    print_warnings(&out.sidecar);
    print_outputs(&[out]);
    Ok(super::EXIT_OK)
}

fn run_cut_manifest_cli(manifest: &std::path::Path, args: &CutArgs) -> anyhow::Result<u8> {
    let out_dir = args.out_dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let print = |o: &vidprep::jobs::cut_manifest::ItemOutcome| {
        let id = o.id.as_deref().unwrap_or("?");
        match (&o.error, &o.output) {
            (None, Some(out)) => eprintln!(
                "ok     {id}: {} ({} frames, {:.1}s)",
                out.display(),
                o.frames.unwrap_or(0),
                o.seconds
            ),
            (Some(e), _) => eprintln!("FAILED {id}: {e}"),
            _ => {}
        }
    };
    let options = ClipOptions {
        encode: args.encode.settings(),
        boxes: None,
        boxes_out: args.boxes.boxes_out,
        ..ClipOptions::default()
    };
    let outcomes = vidprep::jobs::cut_manifest::run_cut_manifest(
        manifest,
        &out_dir,
        &options,
        &args.style.style(),
        jobs,
        &print,
    )?;
    let failed = outcomes.iter().filter(|o| !o.ok).count();
    eprintln!(
        "{} items: {} ok, {failed} failed; report in {}",
        outcomes.len(),
        outcomes.len() - failed,
        out_dir.join("report.jsonl").display()
    );
    Ok(if failed > 0 {
        super::EXIT_FAILED
    } else {
        super::EXIT_OK
    })
}
