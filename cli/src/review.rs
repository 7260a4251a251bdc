//! `vidprep review OUT_DIR` (build the static review page of a run) and `vidprep
//! review-apply DECISIONS --manifest M` (apply what the reviewer decided to the manifest).

use std::path::PathBuf;

use clap::Args;
use vidprep::plan::Size;
use vidprep::review;

#[derive(Args)]
pub struct ReviewArgs {
    /// The run's output folder (`vidprep run ... --out-dir OUT_DIR`).
    out_dir: PathBuf,
    /// Where the page goes (default OUT_DIR/review/); open its index.html in a browser.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// The run's manifest: its plans make the previews (relative paths are read from its
    /// folder), its items not in the run are listed as missing, and the page names it for
    /// `review-apply`. Without it the plans recorded in the sidecars are used (their relative
    /// paths are read from the current folder).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Without --manifest, run the plans the sidecars record even where they name a URL or a
    /// file outside OUT_DIR (only for a folder you trust: its sidecars choose what is read).
    /// Off, those items get no preview and a warning.
    #[arg(long)]
    trust_sidecars: bool,
    /// Thumbnails on each item's timeline.
    #[arg(long, default_value_t = 24)]
    thumbs: usize,
    /// Largest size of the previews the page scrubs (WxH).
    #[arg(long, default_value = "480x270")]
    preview_size: Size,
    /// Items made at a time (default: one per core).
    #[arg(long)]
    jobs: Option<u32>,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ReviewArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    let options = review::ReviewOptions {
        run_dir: args.out_dir.clone(),
        page_dir: args.output.clone(),
        manifest: args.manifest.clone(),
        jobs: args.jobs.unwrap_or(0) as usize,
        thumbs: args.thumbs,
        preview_size: args.preview_size,
        trust_sidecars: args.trust_sidecars,
    };
    let display = crate::batch::Display::new("previews");
    let summary = review::build_review(&options, &display, ctx)?;
    display.finish();
    crate::print_warnings(&summary.warnings);
    eprintln!(
        "review page: {} ({} items: {} with outputs, {} failed or missing; previews: {} made, {} kept, {} failed)",
        summary.page.display(),
        summary.items,
        summary.ok,
        summary.failed,
        summary.previews_made,
        summary.previews_kept,
        summary.previews_failed
    );
    if args.json {
        crate::print_out(&format!("{}\n", serde_json::to_string_pretty(&summary)?))?;
    }
    // The page is written either way; an item without its preview is a failed item.
    Ok(if summary.previews_failed > 0 {
        crate::EXIT_FAILED
    } else {
        crate::EXIT_OK
    })
}

#[derive(Args)]
pub struct ReviewApplyArgs {
    /// The decisions the review page exported (decisions.json).
    decisions: PathBuf,
    /// The manifest the reviewed run was made from.
    #[arg(long)]
    manifest: PathBuf,
    /// The new manifest (default: NAME.reviewed.jsonl beside the manifest; it must be in the
    /// manifest's folder).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run_apply(args: ReviewApplyArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    let applied =
        review::apply_decisions(&args.decisions, &args.manifest, args.output.as_deref(), ctx)?;
    let list = |ids: &[String]| {
        if ids.is_empty() {
            String::new()
        } else {
            format!(" ({})", ids.join(", "))
        }
    };
    eprintln!(
        "{}: {} items kept, {} rejected and dropped{}, {} decision points moved{}, {} kept unreviewed{}",
        applied.manifest.display(),
        applied.kept,
        applied.rejected.len(),
        list(&applied.rejected),
        applied.moved.len(),
        list(&applied.moved),
        applied.unreviewed.len() + applied.not_in_review.len(),
        list(&[applied.unreviewed.clone(), applied.not_in_review.clone()].concat()),
    );
    eprintln!(
        "next: vidprep run {} --out-dir OUT_DIR --resume  (redoes exactly the moved items; the rejected items' folders stay in OUT_DIR)",
        applied.manifest.display()
    );
    if args.json {
        crate::print_out(&format!("{}\n", serde_json::to_string_pretty(&applied)?))?;
    }
    Ok(crate::EXIT_OK)
}
