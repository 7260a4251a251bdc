//! `vidprep detect`: proposes event spans (shots, activity, annotation presence) of a raw
//! video and writes them as a manifest that `cut --manifest` and `run` take unchanged, with an
//! optional per-frame statistics CSV and a contact sheet per proposal.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use vidprep::detect::{
    AnnotationSpans, DetectOptions, Detector, Length, Region, Shaping, ShotOptions,
};
use vidprep::exec::OutputGroup;
use vidprep::plan::{ExportSpec, FramesExport, Strip};
use vidprep::time::Time;

fn parse_length(s: &str) -> Result<Length, String> {
    Length::parse(s)
}

fn parse_region(s: &str) -> Result<Region, String> {
    let v: Vec<f64> = s
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("bad region {s:?}; expected x1,y1,x2,y2 in pixels"))?;
    if v.len() != 4 || v.iter().any(|x| !x.is_finite()) {
        return Err(format!("bad region {s:?}; expected x1,y1,x2,y2 in pixels"));
    }
    Ok(Region {
        x1: v[0],
        y1: v[1],
        x2: v[2],
        y2: v[3],
    })
}

fn parse_fraction(s: &str) -> Result<f32, String> {
    let v: f32 = s
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("bad number {s:?}"))?;
    let v = if s.ends_with('%') { v / 100.0 } else { v };
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("{s:?} is not between 0 and 1 (or 0% and 100%)"));
    }
    Ok(v)
}

fn parse_positive(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a non-negative number")),
    }
}

#[derive(Args)]
pub struct DetectArgs {
    /// The raw video: a file, an image folder or pattern, or an http(s) URL.
    source: PathBuf,
    #[command(flatten)]
    source_fps: crate::args::SourceFpsArg,
    /// Where to write the proposals: a JSONL manifest, one item per line.
    #[arg(short, long)]
    output: PathBuf,
    /// What proposes the spans: shots (between cuts, fades and dissolves), activity (motion
    /// above a threshold) or annotations (where a track is present).
    #[arg(long, default_value = "shots")]
    by: Detector,
    /// Split the spans at shot boundaries (transition frames left out): e.g. activity per shot.
    #[arg(long)]
    split_at_shots: bool,
    /// Per-frame statistics as CSV (content change, histogram change, brightness, motion, ...).
    #[arg(long)]
    stats: Option<PathBuf>,
    /// A contact sheet per proposal: a run folder with `<id>/sheet/strip.jpg`.
    #[arg(long)]
    sheets: Option<PathBuf>,
    /// Ids are PREFIX_e001, ... [default: the source's file name].
    #[arg(long)]
    id_prefix: Option<String>,
    /// Print the boundaries and proposals as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Parallel decoders for the analysis (0: one per core).
    #[arg(long, default_value_t = 0)]
    workers: usize,

    /// Drop spans shorter than this: frames (15) or seconds (1.5s).
    #[arg(long, default_value = "1s", value_parser = parse_length, help_heading = "Spans")]
    min_length: Length,
    /// Merge spans separated by at most this: frames or seconds.
    #[arg(long, default_value = "0", value_parser = parse_length, help_heading = "Spans")]
    merge_gap: Length,
    /// Widen each span by this on both sides: frames or seconds.
    #[arg(long, default_value = "0", value_parser = parse_length, help_heading = "Spans")]
    padding: Length,

    /// Hard cut: least content change (0-255 mean difference of the shrunk frames).
    #[arg(long, default_value_t = ShotOptions::default().min_content, value_parser = parse_positive, help_heading = "Shots")]
    cut_threshold: f32,
    /// Hard cut: least ratio of the change to its neighbours' (adaptive to motion).
    #[arg(long, default_value_t = ShotOptions::default().adaptive, value_parser = parse_positive, help_heading = "Shots")]
    cut_ratio: f32,
    /// Shots shorter than this many frames are merged into the next.
    #[arg(long, default_value_t = ShotOptions::default().min_shot_frames, help_heading = "Shots")]
    min_shot_frames: usize,
    /// Brightness (0-255) at or below which a frame is black (fades).
    #[arg(long, default_value_t = ShotOptions::default().black, value_parser = parse_positive, help_heading = "Shots")]
    black: f32,
    /// Do not look for fades.
    #[arg(long, help_heading = "Shots")]
    no_fades: bool,
    /// Do not look for dissolves.
    #[arg(long, help_heading = "Shots")]
    no_dissolves: bool,

    /// Activity: least fraction of moving pixels (0.01 or 1%).
    #[arg(long, default_value = "0.01", value_parser = parse_fraction, help_heading = "Activity")]
    motion_threshold: f32,
    /// Activity: seconds of smoothing.
    #[arg(long, default_value = "0.5", help_heading = "Activity")]
    smooth: f64,
    /// Activity: measure motion only inside x1,y1,x2,y2 (displayed pixels).
    #[arg(long, value_parser = parse_region, help_heading = "Activity")]
    region: Option<Region>,

    /// Annotations: the file or GOT-10k folder (any format `overlay` reads).
    #[arg(long, help_heading = "Annotations")]
    annotations: Option<PathBuf>,
    /// Annotations: only this track id.
    #[arg(long, help_heading = "Annotations")]
    track: Option<String>,
    /// Annotations: the V-STaR item's `timestamps` span instead of its boxes.
    #[arg(long, help_heading = "Annotations")]
    temporal: bool,
    /// Annotations: the V-STaR item (vid) in a benchmark file.
    #[arg(long, help_heading = "Annotations")]
    item: Option<String>,
}

pub fn run(args: DetectArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    if args.by != Detector::Annotations
        && (args.annotations.is_some()
            || args.track.is_some()
            || args.temporal
            || args.item.is_some())
    {
        return Err(vidprep::Error::Usage(
            "--annotations, --track, --temporal and --item belong to --by annotations".to_string(),
        )
        .into());
    }
    vidprep::records::require_utf8(&args.source, "the source")?;
    vidprep::records::require_utf8(&args.output, "--output")?;
    for (flag, p) in [
        ("--stats", &args.stats),
        ("--sheets", &args.sheets),
        ("--annotations", &args.annotations),
    ] {
        if let Some(p) = p {
            vidprep::records::require_utf8(p, flag)?;
        }
    }
    if args.by == Detector::Annotations && args.annotations.is_none() {
        return Err(
            vidprep::Error::Usage("--by annotations needs --annotations FILE".to_string()).into(),
        );
    }
    if args.region.is_some() && args.by != Detector::Activity {
        return Err(vidprep::Error::Usage(
            "--region measures motion for --by activity".to_string(),
        )
        .into());
    }
    let smooth = Time::from_secs_f64(args.smooth, 1000)
        .filter(|t| !t.is_negative())
        .ok_or_else(|| {
            vidprep::Error::Usage(format!("--smooth {} is not a duration", args.smooth))
        })?;
    let options = DetectOptions {
        by: args.by,
        shots: ShotOptions {
            min_content: args.cut_threshold,
            adaptive: args.cut_ratio,
            min_shot_frames: args.min_shot_frames,
            black: args.black,
            fades: !args.no_fades,
            dissolves: !args.no_dissolves,
            ..ShotOptions::default()
        },
        activity: vidprep::detect::ActivityOptions {
            threshold: args.motion_threshold,
            smooth,
        },
        annotations: args.annotations.as_ref().map(|p| AnnotationSpans {
            track: args.track.clone(),
            temporal: args.temporal,
            item: args.item.clone(),
            ..AnnotationSpans::new(p.clone())
        }),
        split_at_shots: args.split_at_shots,
        shaping: Shaping {
            min_length: args.min_length,
            merge_gap: args.merge_gap,
            padding: args.padding,
        },
        region: args.region,
        workers: args.workers,
        id_prefix: args.id_prefix.clone(),
    };
    // Claim the outputs before decoding anything: a bad -o fails fast.
    let mut inputs = vidprep::media::input_paths(&args.source);
    inputs.extend(args.annotations.clone());
    let mut group = OutputGroup::new(&inputs, ctx);
    let manifest_temp = group.file(&args.output)?;
    let stats_temp = match &args.stats {
        Some(p) => Some(group.file(p)?),
        None => None,
    };
    if let Some(dir) = &args.sheets {
        if same_place(dir, &args.output) || args.stats.as_ref().is_some_and(|s| same_place(dir, s))
        {
            return Err(vidprep::Error::Usage(format!(
                "--sheets {} is also another output",
                dir.display()
            ))
            .into());
        }
    }
    let mut progress = crate::progress::BarProgress::new("detect");
    let source = vidprep::media::Source::new(args.source.clone(), args.source_fps.source_fps);
    let detection = vidprep::detect::detect(&source, &options, &mut progress, ctx)?;
    progress.done();
    std::fs::write(&manifest_temp, detection.manifest())
        .with_context(|| format!("writing {}", args.output.display()))?;
    if let Some(temp) = &stats_temp {
        std::fs::write(temp, detection.stats_csv())
            .with_context(|| format!("writing {}", args.stats.as_ref().unwrap().display()))?;
    }
    group.commit()?;
    let cuts = |k: vidprep::detect::BoundaryKind| {
        detection.boundaries.iter().filter(|b| b.kind == k).count()
    };
    eprintln!(
        "{}: {} frames; {} proposals ({}); boundaries: {} cuts, {} fades, {} dissolves -> {}",
        args.source.display(),
        detection.frames,
        detection.proposals.len(),
        args.by,
        cuts(vidprep::detect::BoundaryKind::Cut),
        cuts(vidprep::detect::BoundaryKind::Fade),
        cuts(vidprep::detect::BoundaryKind::Dissolve),
        args.output.display()
    );
    if !detection.too_short.is_empty() {
        // Say why a span the detector found is not a proposal.
        let n = detection.too_short.len();
        let shown: Vec<String> = detection
            .too_short
            .iter()
            .take(5)
            .map(|s| {
                format!(
                    "frames {}..{} ({:.3}s)",
                    s.start,
                    s.end,
                    s.length.as_secs_f64()
                )
            })
            .collect();
        eprintln!(
            "{}: {n} span{} shorter than --min-length {} dropped: {}{}; give a smaller --min-length to keep {}",
            args.source.display(),
            if n == 1 { "" } else { "s" },
            args.min_length,
            shown.join(", "),
            if n > shown.len() {
                format!(" and {} more", n - shown.len())
            } else {
                String::new()
            },
            if n == 1 { "it" } else { "them" }
        );
    }
    if args.json {
        crate::print_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({
                "source": args.source.display().to_string(),
                "frames": detection.frames,
                "boundaries": detection.boundaries,
                "proposals": detection.proposals,
                "too_short": detection.too_short,
            }))?
        ))?;
    }
    if let Some(dir) = &args.sheets {
        return contact_sheets(&detection, dir, ctx);
    }
    Ok(crate::EXIT_OK)
}

fn same_place(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canon(a) == canon(b)
}

/// One small item per proposal through the batch runner: 8 frames spread over the span and
/// their captioned strip.
fn contact_sheets(
    detection: &vidprep::detect::Detection,
    dir: &Path,
    ctx: &vidprep::call::CallContext,
) -> anyhow::Result<u8> {
    let (items, bad) =
        vidprep::manifest::ManifestItem::check_all(detection.plans().into_iter().enumerate().map(
            |(i, mut plan)| {
                let mut sheet = FramesExport::default();
                sheet.name = Some("sheet".into());
                sheet.count = Some(8);
                sheet.max_size = Some("320x240".parse().expect("a size"));
                sheet.strip = Strip(Some(4));
                plan.exports = vec![ExportSpec::Frames(sheet)];
                (i + 1, plan)
            },
        ));
    let mut options = vidprep::BatchOptions::new(dir);
    options.exec = vidprep::ExecOptions::default().in_context(ctx);
    let (summary, _) = vidprep::run_batch(&items, &bad, &options, &vidprep::batch::Quiet)?;
    eprintln!(
        "contact sheets: {} ok, {} failed -> {}/<id>/sheet/strip.jpg (report {})",
        summary.ok,
        summary.failed,
        dir.display(),
        summary.report.display()
    );
    Ok(if summary.failed > 0 {
        crate::EXIT_FAILED
    } else {
        crate::EXIT_OK
    })
}
