//! Batch doors on the command line: `vidprep run MANIFEST` and the shared runner behind
//! `cut --manifest` and `insert --hosts`. Progress goes to stderr (a bar on a terminal, one
//! line per item otherwise); stdout gets only the `--json` summary.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use vidprep::batch::{run_manifest, ItemReport, Observer, Status};
use vidprep::manifest::Manifest;
use vidprep::BatchOptions;

use crate::args::{BatchArgs, EncodeArgs};

#[derive(Args)]
pub struct RunArgs {
    /// The manifest: JSONL (one item per line) or a JSON array (see docs/manifest.md).
    manifest: PathBuf,
    /// Output folder: DIR/<id>/... per item, DIR/report.jsonl.
    #[arg(long)]
    out_dir: PathBuf,
    /// Treat damaged input as an error in every item (as "strict": true on each line).
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    batch: BatchArgs,
    #[command(flatten)]
    encode: EncodeArgs,
}

/// Draws the run on stderr.
pub struct Display {
    bar: Option<ProgressBar>,
    started: std::time::Instant,
    failed: AtomicUsize,
    done: AtomicUsize,
    total: AtomicUsize,
    frames: Mutex<u64>,
}

impl Display {
    /// A display for a batch of items labelled `label` (a bar on a terminal).
    pub fn new(label: &str) -> Display {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{label} [{{bar:30}}] {{pos}}/{{len}} items {{per_sec}} eta {{eta}} ({{msg}})"
                ))
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.enable_steady_tick(std::time::Duration::from_millis(250));
            bar
        });
        Display {
            bar,
            started: std::time::Instant::now(),
            failed: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            total: AtomicUsize::new(0),
            frames: Mutex::new(0),
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    fn log(&self, line: String) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn refresh(&self) {
        if let Some(bar) = &self.bar {
            let frames = self.frames.lock().map(|f| *f).unwrap_or(0);
            let fps = frames as f64 / self.started.elapsed().as_secs_f64().max(1e-3);
            bar.set_message(format!(
                "{frames} frames, {fps:.0} frames/s, {} failed",
                self.failed.load(Ordering::Relaxed)
            ));
        }
    }
}

impl Observer for Display {
    fn notice(&self, message: &str) {
        self.log(message.to_string());
    }

    fn planned(&self, items: usize, bad: &[ItemReport]) {
        self.total.store(items + bad.len(), Ordering::Relaxed);
        for b in bad {
            self.log(format!(
                "FAILED (manifest) {}",
                b.error.as_deref().unwrap_or("")
            ));
        }
        self.failed.store(bad.len(), Ordering::Relaxed);
        self.done.store(bad.len(), Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.set_length((items + bad.len()) as u64);
            bar.set_position(bad.len() as u64);
        }
        self.refresh();
    }

    fn frames(&self, n: u64) {
        let total = match self.frames.lock() {
            Ok(mut f) => {
                *f += n;
                *f
            }
            Err(_) => return,
        };
        if total % 25 == 0 {
            self.refresh();
        }
    }

    fn item_done(&self, r: &ItemReport) {
        let id = r.id.as_deref().unwrap_or("?");
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let total = self.total.load(Ordering::Relaxed);
        match r.status {
            Status::Ok => {
                if self.bar.is_none() {
                    self.log(format!(
                        "[{done}/{total}] ok      {id} ({} frames, {:.1}s)",
                        r.frames, r.seconds
                    ));
                }
                if let Some(damage) = &r.damage {
                    self.log(format!(
                        "[{done}/{total}] warning {id}: damaged source: {damage}"
                    ));
                }
            }
            Status::Skipped => {
                if self.bar.is_none() {
                    self.log(format!(
                        "[{done}/{total}] done    {id} (complete from an earlier run)"
                    ));
                }
            }
            Status::Failed => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                self.log(format!(
                    "[{done}/{total}] FAILED  {}",
                    r.error.as_deref().unwrap_or(id)
                ));
            }
            Status::NotRun => self.log(format!("[{done}/{total}] not run {id}")),
            // A status a later library adds (`Status` is `#[non_exhaustive]`), by its name.
            other => self.log(format!("[{done}/{total}] {other:?} {id}")),
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        self.refresh();
    }
}

pub fn run(args: RunArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    // A shard's run reads its own entries only (and the others' ids).
    let mut manifest =
        vidprep::manifest::read_manifest_shard_in(&args.manifest, args.batch.shard, ctx)?;
    if args.strict {
        for item in &mut manifest.items {
            item.plan.set_strict(true);
        }
    }
    run_items(
        &manifest,
        &args.out_dir,
        &args.batch,
        &args.encode,
        Some(&args.manifest),
        ctx,
    )
}

/// Runs a manifest's items (or plans a door made, as a [`Manifest`] of every item) as a batch
/// into `out_dir`, drawing progress; the exit code says whether every item succeeded.
pub fn run_items(
    manifest: &Manifest,
    out_dir: &Path,
    batch: &BatchArgs,
    encode: &EncodeArgs,
    origin: Option<&Path>,
    ctx: &vidprep::call::CallContext,
) -> anyhow::Result<u8> {
    let mut options = BatchOptions::new(out_dir);
    options.jobs = batch.jobs.unwrap_or(0) as usize;
    options.shard = batch.shard;
    options.resume = batch.resume;
    options.fail_fast = batch.fail_fast;
    options.codec_threads = batch.codec_threads.map(|t| t as usize);
    options.exec = encode.exec(ctx);
    options.origin = origin.map(Path::to_path_buf);
    let display = Display::new("run");
    let (summary, _) = run_manifest(manifest, &options, &display)?;
    display.finish();
    eprintln!(
        "{} items: {} ok, {} done earlier, {} failed, {} not run; {} frames in {:.1}s ({:.0} frames/s); report {}",
        summary.items,
        summary.ok,
        summary.skipped,
        summary.failed,
        summary.not_run,
        summary.frames,
        summary.seconds,
        summary.frames as f64 / summary.seconds.max(1e-9),
        summary.report.display()
    );
    if batch.json {
        crate::print_out(&format!("{}\n", serde_json::to_string_pretty(&summary)?))?;
    }
    Ok(if summary.failed > 0 || summary.not_run > 0 {
        crate::EXIT_FAILED
    } else {
        crate::EXIT_OK
    })
}
