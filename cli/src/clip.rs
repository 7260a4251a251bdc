//! `vidprep cut`, `vidprep truncate` and `vidprep overlay`: each builds a plan with one clip
//! export (one plan per ratio for `cut --ratios` and `truncate --ratios`) and runs it; `cut --manifest` runs a manifest as a
//! batch whose items default to one clip.

use std::path::{Path, PathBuf};

use clap::Args;
use vidprep::exec::ExportTarget;
use vidprep::plan::{ClipExport, ExportSpec, Plan};
use vidprep::time::TimeSpec;
use vidprep::{execute, Destination};

use crate::args::{
    parse_time, source_plan, BatchArgs, BoxesArgs, EncodeArgs, FormatArg, SmartArgs, SourceFpsArg,
    SpanArgs,
};
use crate::progress::BarProgress;

#[derive(Args)]
pub struct CutArgs {
    /// The source: a video file, an image folder or pattern, or an http(s) URL (not with
    /// --manifest).
    #[arg(required_unless_present = "manifest")]
    input: Option<PathBuf>,
    #[command(flatten)]
    source_fps: SourceFpsArg,
    #[command(flatten)]
    span: SpanArgs,
    /// Output video: .mp4, .mov or .mkv (a sidecar JSON is written beside it; with --ratios,
    /// the base name).
    #[arg(short, long, required_unless_present = "manifest")]
    output: Option<PathBuf>,
    /// Several decision points at once, each cut from the source (no second encode), e.g.
    /// 50%,75%,100%: writes OUT_50.mp4, OUT_75.mp4, ... (as `truncate --ratios`).
    #[arg(long, value_delimiter = ',', value_parser = parse_time, conflicts_with_all = ["decision", "copy"])]
    ratios: Vec<TimeSpec>,
    /// Stream-copy whole GOPs instead of re-encoding (fast; snaps to keyframes).
    #[arg(long, conflicts_with = "smart")]
    copy: bool,
    #[command(flatten)]
    smart: SmartArgs,
    /// Treat damaged input (packets that do not decode) as an error.
    #[arg(long)]
    strict: bool,
    /// A manifest (JSONL or JSON array; see docs/manifest.md): every item is cut (items
    /// without "exports" make one clip) into --out-dir/<id>/.
    #[arg(long, conflicts_with_all = ["input", "output", "start", "end", "decision", "ratios", "copy", "smart", "boxes", "source_fps"])]
    manifest: Option<PathBuf>,
    /// Output folder for --manifest.
    #[arg(long, requires = "manifest")]
    out_dir: Option<PathBuf>,
    #[command(flatten)]
    batch: BatchArgs,
    #[command(flatten)]
    encode: EncodeArgs,
    #[command(flatten)]
    boxes: BoxesArgs,
    #[command(flatten)]
    format: FormatArg,
}

/// Runs a one-item plan with explicit output targets; prints what was made.
pub fn run_plan(
    plan: &Plan,
    targets: Vec<ExportTarget>,
    exec: vidprep::ExecOptions,
    label: &str,
) -> anyhow::Result<u8> {
    let mut progress = BarProgress::new(label);
    let outcome = execute(plan, &Destination::Targets(targets), &exec, &mut progress)?;
    progress.done();
    crate::print_warnings(&outcome.warnings);
    for export in &outcome.exports {
        let sidecar = export
            .files
            .iter()
            .skip(1)
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>();
        if sidecar.is_empty() {
            crate::print_out(&format!("{}\n", export.summary))?;
        } else {
            crate::print_out(&format!(
                "{}; wrote {}\n",
                export.summary,
                sidecar.join(", ")
            ))?;
        }
    }
    Ok(crate::EXIT_OK)
}

fn refuse_box_options(boxes: &BoxesArgs, format: &FormatArg) -> anyhow::Result<()> {
    boxes.refuse_options_without_boxes()?;
    if boxes.boxes.is_none() && format.format.is_some() {
        return Err(vidprep::Error::Usage(
            "box and drawing options need --boxes FILE (the annotations)".into(),
        )
        .into());
    }
    Ok(())
}

fn clip_export(copy: bool, smart: SmartArgs, boxes: &BoxesArgs, output: &Path) -> ExportSpec {
    let container = output
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .filter(|e| e == "mov" || e == "mkv");
    ExportSpec::Clip(ClipExport {
        copy,
        smart: smart.smart,
        verify: smart.verify,
        boxes_out: boxes.boxes_out,
        container,
        ..ClipExport::default()
    })
}

impl CutArgs {
    /// True for `cut --manifest` (a batch).
    pub fn is_batch(&self) -> bool {
        self.manifest.is_some()
    }
}

pub fn run_cut(args: CutArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    if let Some(manifest) = &args.manifest {
        if args.boxes.options_without_boxes() || args.format.format.is_some() {
            return Err(vidprep::Error::Usage(
                "box and drawing options belong to each manifest item (its \"boxes\": {\"path\": FILE, ...options}), not to the command line".into(),
            )
            .into());
        }
        let out_dir = args.out_dir.clone().unwrap_or_else(|| PathBuf::from("."));
        let mut m = vidprep::manifest::read_manifest_shard_in(
            manifest,
            args.batch.shard,
            &vidprep::call::CallContext::new(),
        )?;
        if args.strict {
            for item in &mut m.items {
                item.plan.set_strict(true);
            }
        }
        return crate::batch::run_items(
            &m,
            &out_dir,
            &args.batch,
            &args.encode,
            Some(manifest),
            ctx,
        );
    }
    refuse_box_options(&args.boxes, &args.format)?;
    let input = args.input.clone().expect("clap requires input");
    let output = args.output.clone().expect("clap requires output");
    // With --ratios, one clip per decision point, each from the source.
    let jobs: Vec<(Option<TimeSpec>, PathBuf)> = if args.ratios.is_empty() {
        vec![(args.span.decision, output)]
    } else {
        ratio_jobs(&args.ratios, &output)?
            .into_iter()
            .map(|(r, p)| (Some(r), p))
            .collect()
    };
    let plans: Vec<(Plan, PathBuf)> = jobs
        .into_iter()
        .map(|(decision, output)| {
            let mut plan = source_plan(
                &output,
                &input,
                clip_export(args.copy, args.smart, &args.boxes, &output),
                &args.source_fps,
                args.boxes.spec(args.format.format),
                args.strict,
            );
            args.span.apply(&mut plan);
            plan.decision = decision;
            (plan, output)
        })
        .collect();
    run_ratio_plans(plans, || args.encode.exec(ctx), "cut", ctx)
}

/// Runs the plans of a `--ratios` request, one clip per ratio, after checking every output
/// of the group first (nothing is written when a later output would be refused).
fn run_ratio_plans(
    plans: Vec<(Plan, PathBuf)>,
    exec: impl Fn() -> vidprep::ExecOptions,
    verb: &str,
    ctx: &vidprep::call::CallContext,
) -> anyhow::Result<u8> {
    check_every_output(&plans, ctx)?;
    for (plan, output) in plans {
        run_plan(&plan, vec![ExportTarget::at(output)], exec(), verb)?;
    }
    Ok(crate::EXIT_OK)
}

/// Before the first of several plans runs (`--ratios`: one clip per ratio, each committed by
/// its own plan), every output and its sidecar is claimed by the rules each plan's own group
/// applies (not an input, not a folder or device, no two alike) and released again, so that a
/// refusal comes before anything is written rather than after the first clips.
fn check_every_output(
    plans: &[(Plan, PathBuf)],
    ctx: &vidprep::call::CallContext,
) -> anyhow::Result<()> {
    if plans.len() < 2 {
        return Ok(());
    }
    let mut group = vidprep::exec::OutputGroup::new(&plans[0].0.inputs(), ctx);
    for (_, output) in plans {
        group.file(output)?;
        group.file(&output.with_extension("json"))?;
    }
    Ok(())
}

/// The outputs of `--ratios` (`clip.mp4` with 50% -> `clip_50.mp4`), refusing two ratios that
/// name the same file (50% and 50 would overwrite each other).
fn ratio_jobs(ratios: &[TimeSpec], base: &Path) -> anyhow::Result<Vec<(TimeSpec, PathBuf)>> {
    let jobs: Vec<(TimeSpec, PathBuf)> = ratios
        .iter()
        .map(|r| (*r, ratio_output_path(base, r)))
        .collect();
    let mut seen = std::collections::HashSet::new();
    for (r, out) in &jobs {
        if !seen.insert(out.clone()) {
            return Err(vidprep::Error::Usage(format!(
                "--ratios gives {} twice (at {}); list each ratio once",
                out.display(),
                r
            ))
            .into());
        }
    }
    Ok(jobs)
}

#[derive(Args)]
pub struct TruncateArgs {
    /// The clip to truncate (a video file, an image folder or pattern, or an http(s) URL).
    input: PathBuf,
    #[command(flatten)]
    source_fps: SourceFpsArg,
    /// Decision point: frames at or after it are dropped (frame, seconds, timecode or %).
    #[arg(long, visible_alias = "decision", value_parser = parse_time, required_unless_present = "ratios", conflicts_with = "ratios")]
    at: Option<TimeSpec>,
    /// Several truncations at once, e.g. 50%,75%,100%: writes OUT_50.mp4, OUT_75.mp4, ...
    #[arg(long, value_delimiter = ',', value_parser = parse_time)]
    ratios: Vec<TimeSpec>,
    /// Output video (with --ratios, the base name).
    #[arg(short, long)]
    output: PathBuf,
    /// Treat damaged input (packets that do not decode) as an error.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    smart: SmartArgs,
    #[command(flatten)]
    encode: EncodeArgs,
    #[command(flatten)]
    boxes: BoxesArgs,
    #[command(flatten)]
    format: FormatArg,
}

/// Output paths for a set of truncation ratios: `clip.mp4` with 50% -> `clip_50.mp4`.
fn ratio_output_path(base: &Path, ratio: &TimeSpec) -> PathBuf {
    let label = match ratio {
        TimeSpec::Percent(p) => vidprep::time::decimal_text(*p),
        other => other.to_text().replace('/', "_"),
    };
    let stem = base
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "clip".into());
    let ext = base
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "mp4".into());
    base.with_file_name(format!("{stem}_{label}.{ext}"))
}

pub fn run_truncate(args: TruncateArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    refuse_box_options(&args.boxes, &args.format)?;
    let jobs: Vec<(TimeSpec, PathBuf)> = match args.at {
        Some(at) => vec![(at, args.output.clone())],
        None => ratio_jobs(&args.ratios, &args.output)?,
    };
    let plans: Vec<(Plan, PathBuf)> = jobs
        .into_iter()
        .map(|(at, output)| {
            let mut plan = source_plan(
                &output,
                &args.input,
                clip_export(false, args.smart, &args.boxes, &output),
                &args.source_fps,
                args.boxes.spec(args.format.format),
                args.strict,
            );
            plan.decision = Some(at);
            (plan, output)
        })
        .collect();
    run_ratio_plans(plans, || args.encode.exec(ctx), "truncate", ctx)
}

#[derive(Args)]
pub struct OverlayArgs {
    /// The source: a video file, an image folder or pattern, or an http(s) URL.
    input: PathBuf,
    #[command(flatten)]
    source_fps: SourceFpsArg,
    /// Output video (a sidecar JSON with the boxes in output frames and pixels is written beside).
    #[arg(short, long)]
    output: PathBuf,
    #[command(flatten)]
    span: SpanArgs,
    /// Treat damaged input (packets that do not decode) as an error.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    boxes: BoxesArgs,
    #[command(flatten)]
    format: FormatArg,
    #[command(flatten)]
    encode: EncodeArgs,
}

pub fn run_overlay(args: OverlayArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    if args.boxes.boxes.is_none() {
        return Err(vidprep::Error::Usage(
            "overlay needs --boxes FILE (the annotations to draw)".into(),
        )
        .into());
    }
    if args.boxes.no_draw {
        return Err(vidprep::Error::Usage(
            "overlay draws the boxes; use cut --boxes FILE --no-draw to only carry them".into(),
        )
        .into());
    }
    let mut plan = source_plan(
        &args.output,
        &args.input,
        clip_export(false, SmartArgs::default(), &args.boxes, &args.output),
        &args.source_fps,
        args.boxes.spec(args.format.format),
        args.strict,
    );
    args.span.apply(&mut plan);
    run_plan(
        &plan,
        vec![ExportTarget::at(args.output.clone())],
        args.encode.exec(ctx),
        "overlay",
    )
}
