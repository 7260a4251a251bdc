//! `vidprep insert`: one GOT-10k sequence into one host video, or a reproducible batch of
//! sequences into a folder of hosts.

use std::path::PathBuf;

use clap::Args;
use vidprep::fit::Fit;
use vidprep::jobs::insert::{
    insert, list_hosts, list_sequences, plan_batch, run_batch, InsertRequest, Position,
};
use vidprep::time::TimeSpec;

use super::clip::{EncodeArgs, StyleArgs};
use super::progress::BarProgress;

#[derive(Args)]
pub struct InsertArgs {
    /// The host video.
    #[arg(long, required_unless_present = "hosts", conflicts_with = "hosts")]
    host: Option<PathBuf>,
    /// The GOT-10k sequence folder (JPEG frames, groundtruth.txt, meta_info.ini, ...).
    #[arg(
        long,
        required_unless_present = "sequences",
        conflicts_with = "sequences"
    )]
    sequence: Option<PathBuf>,
    /// Insert before the host frame at this point (frame, seconds, timecode or %).
    #[arg(long, value_parser = TimeSpec::parse, conflicts_with = "seed")]
    at: Option<TimeSpec>,
    /// Draw the insertion point uniformly over the host's frame boundaries from this seed.
    #[arg(long)]
    seed: Option<u64>,
    /// How the sequence's frames fit the host frame.
    #[arg(long, default_value = "letterbox", value_parser = ["letterbox", "stretch", "crop"])]
    fit: String,
    /// Output MP4 (single insertion).
    #[arg(short, long, required_unless_present = "hosts")]
    output: Option<PathBuf>,
    /// Where to write the V-STaR annotations (default: OUTPUT.vstar.json).
    #[arg(long)]
    annotations: Option<PathBuf>,
    /// Draw the remapped boxes on the needle (for inspection).
    #[arg(long)]
    overlay: bool,
    /// Batch: a folder of host videos.
    #[arg(long, requires_all = ["sequences", "count", "out_dir"])]
    hosts: Option<PathBuf>,
    /// Batch: a GOT-10k dataset root (list.txt honoured).
    #[arg(long)]
    sequences: Option<PathBuf>,
    /// Batch: how many outputs to make.
    #[arg(long)]
    count: Option<usize>,
    /// Batch: the output folder (one MP4, sidecar and annotations file per output, index.jsonl).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Batch: outputs made at a time (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
    #[command(flatten)]
    style: StyleArgs,
    #[command(flatten)]
    encode: EncodeArgs,
}

pub fn run(args: InsertArgs) -> anyhow::Result<u8> {
    let fit: Fit = args.fit.parse().map_err(vidprep::Error::Usage)?;
    let overlay = args.overlay.then(|| args.style.style());
    if let Some(hosts_dir) = &args.hosts {
        let seed = args.seed.ok_or_else(|| {
            vidprep::Error::Usage(
                "a batch needs --seed N (positions and pairings come from it)".into(),
            )
        })?;
        if args.at.is_some() {
            return Err(vidprep::Error::Usage(
                "--at is for one insertion; a batch draws positions from --seed".into(),
            )
            .into());
        }
        let sequences =
            list_sequences(args.sequences.as_ref().expect("clap requires --sequences"))?;
        let hosts = list_hosts(hosts_dir)?;
        let out_dir = args.out_dir.clone().expect("clap requires --out-dir");
        let items = plan_batch(
            &hosts,
            &sequences,
            args.count.expect("clap requires --count"),
            seed,
            &out_dir,
        );
        let jobs = args.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        });
        let print = |o: &vidprep::jobs::insert::BatchOutcome| match &o.error {
            None => eprintln!(
                "ok     {}: frames {}..{} of {} (before host frame {})",
                o.item.output.display(),
                o.needle_frames.map_or(0, |n| n[0]),
                o.needle_frames.map_or(0, |n| n[1]),
                o.item
                    .output
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                o.insert_frame.unwrap_or(0)
            ),
            Some(e) => eprintln!("FAILED {}: {e}", o.item.output.display()),
        };
        let outcomes = run_batch(
            &items,
            fit,
            overlay,
            &args.encode.settings(),
            jobs,
            &out_dir,
            &print,
        )?;
        let failed = outcomes.iter().filter(|o| !o.ok).count();
        eprintln!(
            "{} outputs: {} ok, {failed} failed; index in {}",
            outcomes.len(),
            outcomes.len() - failed,
            out_dir.join("index.jsonl").display()
        );
        return Ok(if failed > 0 {
            super::EXIT_FAILED
        } else {
            super::EXIT_OK
        });
    }
    let position = match (args.at, args.seed) {
        (Some(at), None) => Position::At(at),
        (None, Some(seed)) => Position::Seed(seed),
        _ => {
            return Err(vidprep::Error::Usage(
                "say where the sequence goes: --at T or --seed N".into(),
            )
            .into())
        }
    };
    let request = InsertRequest {
        host: args.host.clone().expect("clap requires --host"),
        sequence: args.sequence.clone().expect("clap requires --sequence"),
        position,
        fit,
        output: args.output.clone().expect("clap requires --output"),
        annotations: args.annotations.clone(),
        overlay,
        encode: args.encode.settings(),
    };
    let mut progress = BarProgress::new("insert");
    let out = insert(&request, &mut progress)?;
    progress.done();
    let i = &out.insertion;
    println!(
        "{}: {} frames; the sequence ({} frames at {} fps) is output frames {}..{} ({}s to {}s), inserted before host frame {}; annotations {}, sidecar {}",
        out.output.display(),
        i.output_frames,
        i.sequence_frames,
        i.anno_fps,
        i.needle_start,
        i.needle_end,
        i.insert_time.exact,
        // Rounded to the microsecond: the sum of two decimals in f64 can print as 11.879999999999999.
        ((i.insert_time.seconds + i.needle_duration.seconds) * 1e6).round() / 1e6,
        i.insert_frame,
        out.annotations.display(),
        out.sidecar.display()
    );
    Ok(super::EXIT_OK)
}
