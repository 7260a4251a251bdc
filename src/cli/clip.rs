//! `vidprep cut` and `vidprep truncate`: argument parsing and printing around `jobs::clip`.

use std::path::PathBuf;

use clap::Args;
use vidprep::jobs::clip::{make_clip, make_clips, ratio_output_path, ClipJob, ClipSpec};
use vidprep::media::EncodeSettings;
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
    /// JSONL manifest: one {"id", "source", "start", "end", "decision"} per line.
    #[arg(long, conflicts_with_all = ["input", "output", "start", "end", "decision"])]
    manifest: Option<PathBuf>,
    /// Output folder for --manifest.
    #[arg(long, requires = "manifest")]
    out_dir: Option<PathBuf>,
    /// Parallel items for --manifest (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
    #[command(flatten)]
    encode: EncodeArgs,
}

pub fn run_cut(args: CutArgs) -> anyhow::Result<u8> {
    if let Some(manifest) = &args.manifest {
        return run_cut_manifest_cli(manifest, &args);
    }
    let input = args.input.expect("clap requires input");
    let output = args.output.expect("clap requires output");
    let spec = ClipSpec {
        start: args.start,
        end: args.end,
        decision: args.decision,
    };
    if args.copy {
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
    let mut progress = BarProgress::new("cut");
    let out = make_clip(
        &input,
        &spec,
        &output,
        &args.encode.settings(),
        &mut progress,
    )?;
    progress.done();
    println!(
        "{}: {} frames (source frames {}..{}), sidecar {}",
        out.output.display(),
        out.frames,
        out.resolved.kept.start,
        out.resolved.kept.end,
        out.sidecar.display()
    );
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
    let mut progress = BarProgress::new("truncate");
    let outs = make_clips(&args.input, &jobs, &args.encode.settings(), &mut progress)?;
    progress.done();
    for out in outs {
        let d = out
            .resolved
            .decision
            .as_ref()
            .expect("truncation has a decision");
        println!(
            "{}: {} frames, ends at {}s (last kept source frame {}), sidecar {}",
            out.output.display(),
            out.frames,
            d.clip_time.exact,
            d.last_kept_frame,
            out.sidecar.display()
        );
    }
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
    let outcomes = vidprep::jobs::cut_manifest::run_cut_manifest(
        manifest,
        &out_dir,
        &args.encode.settings(),
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
