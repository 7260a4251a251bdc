//! `vidprep export frames`: sampled frames for image-only models.

use std::path::PathBuf;

use clap::Args;
use vidprep::fit::parse_size;
use vidprep::jobs::export_frames::{export_frames, FramesRequest, ImageFormat, Payload};
use vidprep::sampling::{Order, Request, Sampler};

use super::clip::{BoxesArgs, StyleArgs};
use super::progress::BarProgress;

#[derive(Args)]
pub struct FramesArgs {
    /// The input video.
    input: PathBuf,
    /// Folder for the images, frames.json and the optional strip/payload.
    #[arg(long)]
    out_dir: PathBuf,
    /// Sample N frames (default 16 when --fps is not given).
    #[arg(long, conflicts_with = "fps")]
    count: Option<usize>,
    /// Sample F frames per second instead.
    #[arg(long)]
    fps: Option<f64>,
    /// With --fps: at most M frames (beyond that, uniform M frames: V-STaR's protocol).
    #[arg(long, requires = "fps")]
    max_frames: Option<usize>,
    /// Which toolkit's formula picks the frames.
    #[arg(long, default_value = "uniform", value_parser = |s: &str| s.parse::<Sampler>().map_err(|e| e.to_string()))]
    sampler: Sampler,
    /// Let the formula repeat frames when N is larger than the frame count (as the toolkit
    /// would); otherwise that is an error.
    #[arg(long)]
    allow_repeats: bool,
    /// Order of the output frames: ordered, shuffled, reversed, last.
    #[arg(long, default_value = "ordered", value_parser = |s: &str| s.parse::<Order>().map_err(|e| e.to_string()))]
    order: Order,
    /// Seed of the shuffled order (the permutation is recorded in frames.json).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Image format.
    #[arg(long, default_value = "jpg", value_parser = ["jpg", "png"])]
    format: String,
    /// JPEG quality (1-100).
    #[arg(long, default_value_t = 90)]
    quality: u8,
    /// Largest width x height of the images (aspect kept, never upscaled).
    #[arg(long, value_parser = parse_size)]
    max_size: Option<(u32, u32)>,
    /// Also write strip.jpg: every frame in one captioned grid.
    #[arg(long)]
    strip: bool,
    /// Columns of the strip (default: up to 4).
    #[arg(long, requires = "strip")]
    strip_columns: Option<usize>,
    /// Also write payload.json: a request-body fragment with the images as base64 for this API.
    #[arg(long, value_parser = ["openai", "anthropic", "gemini"])]
    payload: Option<String>,
    /// Also write frames.jsonl: one line per frame with its base64 data.
    #[arg(long)]
    jsonl: bool,
    /// Decoding threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Draw the --boxes on the frames.
    #[arg(long, requires = "boxes")]
    draw_boxes: bool,
    #[command(flatten)]
    boxes: BoxesArgs,
    /// Annotation format of --boxes: auto, got10k, mot, vstar, waymo, csv, json, vidprep.
    #[arg(long, default_value = "auto", value_parser = super::clip::parse_format, help_heading = "Boxes")]
    boxes_format: vidprep::annotations::Format,
    #[command(flatten)]
    style: StyleArgs,
}

pub fn run(args: FramesArgs) -> anyhow::Result<u8> {
    let mut request = FramesRequest::new(args.input.clone(), args.out_dir.clone());
    request.request = match (args.count, args.fps) {
        (_, Some(fps)) => Request::Fps {
            fps,
            max_frames: args.max_frames,
        },
        (Some(n), None) => Request::Count(n),
        (None, None) => Request::Count(16),
    };
    request.sampler = args.sampler;
    request.allow_repeats = args.allow_repeats;
    request.order = args.order;
    request.seed = args.seed;
    request.format = args
        .format
        .parse::<ImageFormat>()
        .map_err(vidprep::Error::Usage)?;
    request.quality = args.quality;
    request.max_size = args.max_size;
    request.strip = args.strip.then(|| args.strip_columns.unwrap_or(0));
    request.payload = args
        .payload
        .as_deref()
        .map(|p| p.parse::<Payload>())
        .transpose()
        .map_err(vidprep::Error::Usage)?;
    request.jsonl = args.jsonl;
    request.workers = args.workers;
    request.boxes = args.boxes.request(
        args.boxes_format,
        args.draw_boxes.then(|| args.style.style()),
    );
    let mut progress = BarProgress::new("frames");
    let out = export_frames(&request, &mut progress)?;
    progress.done();
    if let Some(note) = &out.sampled.note {
        eprintln!("note: {note}");
    }
    println!(
        "{}: {} frames ({} of {} by {}), frames.json{}{}{}",
        args.out_dir.display(),
        out.frames.len(),
        out.sampled.formula,
        out.total_frames,
        out.sampled.sampler,
        out.strip
            .as_ref()
            .map(|s| format!(", {s}"))
            .unwrap_or_default(),
        out.payload
            .as_ref()
            .map(|s| format!(", {s}"))
            .unwrap_or_default(),
        out.jsonl
            .as_ref()
            .map(|s| format!(", {s}"))
            .unwrap_or_default(),
    );
    Ok(super::EXIT_OK)
}
