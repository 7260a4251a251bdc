//! `vidprep run`: a whole benchmark manifest, with a progress bar on a terminal (plain log
//! lines otherwise) on stderr, and an optional JSON summary on stdout.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use vidprep::jobs::run::{parse_shard, run_manifest, ItemReport, RunObserver, RunOptions, Status};

use super::clip::EncodeArgs;

#[derive(Args)]
pub struct RunArgs {
    /// The manifest: JSONL (one item per line) or a JSON array (see docs/manifest.md).
    manifest: PathBuf,
    /// Output folder: DIR/<id>/... per item, DIR/report.jsonl.
    #[arg(long)]
    out_dir: PathBuf,
    /// Items at a time (default: one per core; codec threads are divided between them).
    #[arg(long)]
    jobs: Option<usize>,
    /// Run only shard I of N (0-based), e.g. 3/8: items are split by a hash of their id.
    #[arg(long, value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
    /// Skip items already complete whose manifest entry has not changed.
    #[arg(long)]
    resume: bool,
    /// Start no new item after the first failure.
    #[arg(long)]
    fail_fast: bool,
    /// Decoder and encoder threads per item (default: the cores divided among the jobs).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    codec_threads: Option<u32>,
    /// Print a JSON summary on stdout when done.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    encode: EncodeArgs,
}

/// Draws the run on stderr.
struct Display {
    bar: Option<ProgressBar>,
    started: std::time::Instant,
    failed: AtomicUsize,
    done: AtomicUsize,
    total: AtomicUsize,
    frames: Mutex<u64>,
}

impl Display {
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

impl RunObserver for Display {
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
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        self.refresh();
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<u8> {
    let options = RunOptions {
        out_dir: args.out_dir.clone(),
        jobs: args.jobs.unwrap_or(0),
        shard: args.shard,
        resume: args.resume,
        fail_fast: args.fail_fast,
        codec_threads: args.codec_threads.map(|t| t as usize),
        encode: args.encode.settings(),
    };
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "run [{bar:30}] {pos}/{len} items {per_sec} eta {eta} ({msg})",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(250));
        bar
    });
    let display = Display {
        bar,
        started: std::time::Instant::now(),
        failed: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        total: AtomicUsize::new(0),
        frames: Mutex::new(0),
    };
    let (summary, _) = run_manifest(&args.manifest, &options, &display)?;
    if let Some(bar) = &display.bar {
        bar.finish_and_clear();
    }
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
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    }
    Ok(if summary.failed > 0 || summary.not_run > 0 {
        super::EXIT_FAILED
    } else {
        super::EXIT_OK
    })
}
