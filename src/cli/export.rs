//! `vidprep export video` (capped re-encode for video-native models) and `vidprep export
//! frames` (sampled frames for image-only models).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use vidprep::fit::parse_size;
use vidprep::jobs::clip::ClipSpec;
use vidprep::jobs::export_video::{export_video, VideoExportRequest};
use vidprep::time::TimeSpec;

use super::clip::{BoxesArgs, EncodeArgs, FormatArg, StyleArgs};
use super::progress::BarProgress;

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
    Frames(super::frames::FramesArgs),
}

#[derive(Args)]
pub struct VideoArgs {
    /// The input video.
    input: PathBuf,
    /// Output MP4.
    #[arg(short, long)]
    output: PathBuf,
    /// Largest width x height; the picture is fitted inside, aspect kept, never upscaled.
    #[arg(long, default_value = "1920x1280", value_parser = parse_size)]
    max_size: (u32, u32),
    /// Largest size of the Base64-encoded output, in bytes.
    #[arg(long, default_value_t = 10_000_000)]
    max_base64_bytes: u64,
    /// Also write the Base64 text of the output here.
    #[arg(long)]
    base64: Option<PathBuf>,
    /// Re-encode even when the input already fits both caps (otherwise it is copied as is).
    #[arg(long)]
    reencode: bool,
    /// Only this span of the input (same syntax as `cut`).
    #[arg(long, value_parser = TimeSpec::parse)]
    start: Option<TimeSpec>,
    #[arg(long, value_parser = TimeSpec::parse)]
    end: Option<TimeSpec>,
    /// Decision point relative to the span.
    #[arg(long, value_parser = TimeSpec::parse)]
    decision: Option<TimeSpec>,
    /// Draw the --boxes (otherwise they are only carried into the sidecar).
    #[arg(long)]
    draw_boxes: bool,
    #[command(flatten)]
    boxes: BoxesArgs,
    #[command(flatten)]
    format: FormatArg,
    #[command(flatten)]
    style: StyleArgs,
    #[command(flatten)]
    encode: EncodeArgs,
}

pub fn run(args: ExportArgs) -> anyhow::Result<u8> {
    match args.what {
        ExportCommand::Video(v) => run_video(v),
        ExportCommand::Frames(f) => super::frames::run(f),
    }
}

fn run_video(args: VideoArgs) -> anyhow::Result<u8> {
    let mut request = VideoExportRequest::new(args.input.clone(), args.output.clone());
    request.max_size = args.max_size;
    request.max_base64_bytes = args.max_base64_bytes;
    request.base64 = args.base64.clone();
    request.reencode = args.reencode;
    request.spec = ClipSpec {
        start: args.start,
        end: args.end,
        decision: args.decision,
    };
    request.boxes = args.boxes.request(
        args.format.format,
        args.draw_boxes.then(|| args.style.style()),
    );
    request.encode = args.encode.settings();
    let mut progress = BarProgress::new("export");
    let out = export_video(&request, &mut progress)?;
    progress.done();
    for w in &out.warnings {
        eprintln!("warning: {w}");
    }
    if out.passthrough {
        println!(
            "{}: copied unchanged ({}x{}, {} bytes, Base64 {} bytes = {:.1}% of the budget), sidecar {}",
            out.output.display(),
            out.width,
            out.height,
            out.bytes,
            out.base64_bytes,
            out.budget_used * 100.0,
            out.sidecar.display()
        );
    } else {
        println!(
            "{}: {}x{}, {} bytes, Base64 {} bytes = {:.1}% of the budget, after {} encode(s), sidecar {}",
            out.output.display(),
            out.width,
            out.height,
            out.bytes,
            out.base64_bytes,
            out.budget_used * 100.0,
            out.attempts.len(),
            out.sidecar.display()
        );
    }
    Ok(super::EXIT_OK)
}
