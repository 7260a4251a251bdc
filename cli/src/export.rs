//! `vidprep export video` (a capped video for video-native models) and `vidprep export
//! frames` (sampled frames for image-only models): each builds a plan with one export.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use vidprep::exec::ExportTarget;
use vidprep::plan::{ExportSpec, FramesExport, Size, Strip, VideoExport};
use vidprep::plan::{Order, Sampler};

use crate::args::{
    source_plan, BoxesArgs, BoxesFormatArg, EncodeArgs, FormatArg, SourceFpsArg, SpanArgs,
};

#[derive(Args)]
pub struct ExportArgs {
    #[command(subcommand)]
    what: ExportCommand,
}

#[derive(Subcommand)]
enum ExportCommand {
    /// Re-encode within a resolution box and a Base64 size budget (video-native models).
    Video(VideoArgs),
    /// Sample frames as images, a strip, or API payloads (image-only models).
    Frames(FramesArgs),
}

fn parse_size(s: &str) -> Result<Size, String> {
    s.parse()
}

#[derive(Args)]
pub struct VideoArgs {
    /// The source: a video file, an image folder or pattern, or an http(s) URL.
    input: PathBuf,
    #[command(flatten)]
    source_fps: SourceFpsArg,
    /// Output video: .mp4, .mov or .mkv (a sidecar JSON is written beside it).
    #[arg(short, long)]
    output: PathBuf,
    /// Largest width x height; the picture is fitted inside, aspect kept, never upscaled.
    #[arg(long, default_value = "1920x1280", value_parser = parse_size)]
    max_size: Size,
    /// Largest size of the Base64-encoded output, in bytes (default: the --limits preset's;
    /// vistr: 10000000).
    #[arg(long)]
    max_base64_bytes: Option<u64>,
    /// The provider's limits the output must meet: vistr (the paper's 10 MB of Base64, the
    /// default), gemini (whole request under 100 MB), vllm, seed (512 MB) or mimo.
    #[arg(long, value_parser = |s: &str| s.parse::<vidprep::plan::Limits>())]
    limits: Option<vidprep::plan::Limits>,
    /// Also write NAME.payload.json, a request body holding the clip: gemini-video (Gemini's
    /// inlineData and videoMetadata) or openai-video (a video_url data URL); its whole size is
    /// held within the preset's request limit.
    #[arg(long, value_parser = |s: &str| s.parse::<vidprep::plan::VideoPayload>())]
    payload: Option<vidprep::plan::VideoPayload>,
    /// Also write the Base64 text of the output here.
    #[arg(long)]
    base64: Option<PathBuf>,
    /// Re-encode even when the input already is a standard model input within both caps
    /// (otherwise it is copied as is).
    #[arg(long)]
    reencode: bool,
    /// Treat damaged input (packets that do not decode) as an error.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    span: SpanArgs,
    #[command(flatten)]
    boxes: BoxesArgs,
    #[command(flatten)]
    format: FormatArg,
    #[command(flatten)]
    encode: EncodeArgs,
}

#[derive(Args)]
pub struct FramesArgs {
    /// The source: a video file, an image folder or pattern, or an http(s) URL.
    input: PathBuf,
    #[command(flatten)]
    source_fps: SourceFpsArg,
    /// Folder for the images, frames.json and the optional strip/payload (replaced as a
    /// whole).
    #[arg(long)]
    out_dir: PathBuf,
    /// Sample N frames (default 16 when neither --fps nor --frames is given).
    #[arg(long, conflicts_with = "fps")]
    count: Option<usize>,
    /// Sample F frames per second instead (the source's own rate, for an image sequence, is
    /// --source-fps).
    #[arg(long)]
    fps: Option<f64>,
    /// With --fps: at most M frames (beyond that, uniform M frames: V-STaR's protocol).
    #[arg(long, requires = "fps")]
    max_frames: Option<usize>,
    /// These source frames instead, by 0-based index, in this order: 0,5,17 (the explicit
    /// sampler; a repeat needs --allow-repeats). With --profile, its size and token rules apply
    /// to these frames.
    #[arg(long, value_name = "INDEX,...", value_delimiter = ',', num_args = 1.., conflicts_with_all = ["count", "fps", "max_frames"])]
    frames: Option<Vec<usize>>,
    /// With --profile: a `vidprep parity --out` record of this source, profile and options;
    /// each position then shows the frame the package really showed there (the record's
    /// package_shows), even where its reader showed another frame than the index it names.
    #[arg(
        long,
        value_name = "PARITY.json",
        requires = "profile",
        conflicts_with = "frames"
    )]
    follow_package: Option<PathBuf>,
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
    /// Image format: jpg or png (the annotation format is --boxes-format).
    #[arg(long, visible_alias = "image-format", default_value = "jpg", value_parser = |s: &str| s.parse::<vidprep::plan::ImageFormat>())]
    format: vidprep::plan::ImageFormat,
    /// JPEG quality (1-100).
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u8).range(1..=100))]
    quality: u8,
    /// Largest width x height of the images (aspect kept, never upscaled).
    #[arg(long, value_parser = parse_size)]
    max_size: Option<Size>,
    /// Also write strip.jpg: every frame in one captioned grid.
    #[arg(long)]
    strip: bool,
    /// Columns of the strip (default: up to 4).
    #[arg(long, requires = "strip", value_parser = clap::value_parser!(u32).range(1..=64))]
    strip_columns: Option<u32>,
    /// Also write payload.json: a request-body fragment with the images as base64 for this API.
    #[arg(long, value_parser = |s: &str| s.parse::<vidprep::plan::Payload>())]
    payload: Option<vidprep::plan::Payload>,
    /// Leave out the text part with each frame's time that the openai, anthropic and gemini
    /// payloads put before its image (`<1.5 seconds>`, or the profile's markers).
    #[arg(long)]
    no_time_markers: bool,
    /// Also write frames.jsonl: one line per frame with its base64 data.
    #[arg(long)]
    jsonl: bool,
    /// A model profile (qwen2.5-vl, qwen3-vl, qwen3-vl-hf, qwen3.5, glm-4.6v, lmms-eval,
    /// llava-onevision, internvl, vlmevalkit; docs/profiles.md): the frames, sizes and pixels that model's
    /// preprocessing gives it (replaces --sampler, --max-size); vlmevalkit writes VLMEvalKit's
    /// frame cache (its file names, Pillow's JPEG bytes).
    #[arg(long)]
    profile: Option<String>,
    /// One of the profile's options, by the package's name: KEY=NUMBER (min_pixels,
    /// max_pixels, total_pixels, video_start, video_end, ...); repeatable.
    #[arg(long = "profile-option", value_name = "KEY=NUMBER", requires = "profile", value_parser = parse_profile_option)]
    profile_options: Vec<(String, f64)>,
    /// Draw each frame's number (frame) or time in seconds (time) on it, as NumPro does:
    /// red, 40 px, bottom right, before any resize.
    #[arg(long, value_parser = |s: &str| s.parse::<vidprep::plan::FrameLabel>())]
    label: Option<vidprep::plan::FrameLabel>,
    /// An SRT or WebVTT file: each frame's subtitle text (VLMEvalKit's Video-MME rule) in
    /// frames.json and the payload.
    #[arg(long, value_name = "FILE")]
    subtitles: Option<PathBuf>,
    /// Also write audio.wav: the span's audio as 16 kHz mono 16-bit PCM.
    #[arg(long)]
    audio: bool,
    /// Decoding threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Treat damaged input (packets that do not decode) as an error.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    span: SpanArgs,
    #[command(flatten)]
    boxes: BoxesArgs,
    #[command(flatten)]
    boxes_format: BoxesFormatArg,
    #[command(flatten)]
    encode: EncodeArgs,
}

pub fn run(args: ExportArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    match args.what {
        ExportCommand::Video(v) => run_video(v, ctx),
        ExportCommand::Frames(f) => run_frames(f, ctx),
    }
}

fn run_video(args: VideoArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    args.boxes.refuse_options_without_boxes()?;
    let spec = VideoExport {
        max_size: args.max_size,
        max_base64_bytes: args.max_base64_bytes,
        limits: args.limits,
        payload: args.payload,
        base64: args.base64.is_some(),
        reencode: args.reencode,
        boxes_out: args.boxes.boxes_out,
        ..VideoExport::default()
    };
    let mut plan = source_plan(
        &args.output,
        &args.input,
        ExportSpec::Video(spec),
        &args.source_fps,
        args.boxes.spec(args.format.format),
        args.strict,
    );
    args.span.apply(&mut plan);
    let target = ExportTarget {
        base64: args.base64.clone(),
        ..ExportTarget::at(args.output.clone())
    };
    crate::clip::run_plan(&plan, vec![target], args.encode.exec(ctx), "export")
}

fn run_frames(args: FramesArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    args.boxes.refuse_options_without_boxes()?;
    if args.boxes.boxes_out.is_some() {
        return Err(vidprep::Error::Usage(
            "--boxes-out writes a file beside a video; frames.json already lists each image's boxes".into(),
        )
        .into());
    }
    // The export's fields are set one by one: `FramesExport` is `#[non_exhaustive]` (a new
    // field is not a breaking change of the library), so only the library builds it whole.
    let mut spec = FramesExport::default();
    spec.count = args.count;
    spec.fps = args.fps;
    spec.max_frames = args.max_frames;
    spec.frames = args.frames;
    spec.follow_package = args.follow_package;
    spec.sampler = args.sampler;
    spec.allow_repeats = args.allow_repeats;
    spec.order = args.order;
    spec.seed = args.seed;
    spec.format = args.format;
    spec.quality = args.quality;
    spec.max_size = args.max_size;
    spec.strip = Strip(
        args.strip
            .then(|| args.strip_columns.map_or(0, |c| c as usize)),
    );
    spec.payload = args.payload;
    spec.time_markers = !args.no_time_markers;
    spec.jsonl = args.jsonl;
    spec.profile = args.profile;
    spec.profile_options = args.profile_options.into_iter().collect();
    spec.label = args.label;
    spec.subtitles = args.subtitles;
    spec.audio = args.audio;
    let mut plan = source_plan(
        &args.out_dir,
        &args.input,
        ExportSpec::Frames(spec),
        &args.source_fps,
        args.boxes.spec(args.boxes_format.boxes_format),
        args.strict,
    );
    args.span.apply(&mut plan);
    // Workers are an execution resource, not part of the plan.
    let mut exec = args.encode.exec(ctx);
    exec.workers = args.workers;
    crate::clip::run_plan(
        &plan,
        vec![ExportTarget::at(args.out_dir.clone())],
        exec,
        "frames",
    )
}

/// `KEY=NUMBER` of `--profile-option`.
pub(super) fn parse_profile_option(s: &str) -> Result<(String, f64), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=NUMBER (e.g. min_pixels=50176), found {s:?}"))?;
    let v: f64 = v
        .trim()
        .parse()
        .map_err(|_| format!("the value of {k:?} must be a number, found {v:?}"))?;
    Ok((k.trim().to_string(), v))
}
