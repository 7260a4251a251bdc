//! `vidprep insert`: one GOT-10k sequence into one host video (a plan with an insertion and
//! one clip, whose V-STaR annotations are written beside it), or a reproducible batch of
//! sequences into a folder of hosts (many such plans, run as a batch).

use std::path::PathBuf;

use clap::Args;
use vidprep::exec::ExportTarget;
use vidprep::plan::{BoxesOut, ClipExport, ExportSpec, InsertSpec, Plan};
use vidprep::time::TimeSpec;

use crate::args::{id_for, parse_time, BatchArgs, EncodeArgs, SmartArgs, SourceFpsArg};

#[derive(Args)]
pub struct InsertArgs {
    /// The host: a video file, an image folder or pattern, or an http(s) URL.
    #[arg(long, required_unless_present = "hosts", conflicts_with = "hosts")]
    host: Option<PathBuf>,
    #[command(flatten)]
    source_fps: SourceFpsArg,
    /// The GOT-10k sequence folder (JPEG frames, groundtruth.txt, meta_info.ini, ...).
    #[arg(
        long,
        required_unless_present = "sequences",
        conflicts_with = "sequences"
    )]
    sequence: Option<PathBuf>,
    /// Insert before the host frame at this point (frame, seconds, timecode or %).
    #[arg(long, value_parser = parse_time, conflicts_with = "seed")]
    at: Option<TimeSpec>,
    /// Draw the insertion point uniformly over the host's frame boundaries from this seed.
    #[arg(long)]
    seed: Option<u64>,
    /// How the sequence's frames fit the host frame: letterbox, stretch or crop.
    #[arg(long, default_value = "letterbox", value_parser = |s: &str| s.parse::<vidprep::plan::Fit>())]
    fit: vidprep::plan::Fit,
    /// Output video, single insertion (.mp4, .mov or .mkv).
    #[arg(short, long, required_unless_present = "hosts")]
    output: Option<PathBuf>,
    /// Where to write the V-STaR annotations (default: OUTPUT.vstar.json).
    #[arg(long)]
    annotations: Option<PathBuf>,
    /// Draw the remapped boxes on the needle (for inspection).
    #[arg(long)]
    overlay: bool,
    /// Treat damaged input (packets that do not decode) as an error.
    #[arg(long)]
    strict: bool,
    /// Batch: a folder of host videos.
    #[arg(long, requires_all = ["sequences", "count", "out_dir"])]
    hosts: Option<PathBuf>,
    /// Batch: a GOT-10k dataset root (list.txt honoured).
    #[arg(long, requires = "hosts")]
    sequences: Option<PathBuf>,
    /// Batch: how many outputs to make.
    #[arg(long, requires = "hosts")]
    count: Option<usize>,
    /// Batch: the output folder (DIR/<id>/clip.mp4 with its sidecar and V-STaR annotations,
    /// DIR/report.jsonl).
    #[arg(long, requires = "hosts")]
    out_dir: Option<PathBuf>,
    #[command(flatten)]
    batch: BatchArgs,
    #[command(flatten)]
    smart: SmartArgs,
    #[command(flatten)]
    encode: EncodeArgs,
}

impl InsertArgs {
    /// True for `insert --hosts` (a batch).
    pub fn is_batch(&self) -> bool {
        self.hosts.is_some()
    }
}

pub fn run(args: InsertArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    if let Some(hosts_dir) = &args.hosts {
        if args.source_fps.source_fps.is_some() {
            return Err(vidprep::Error::Usage(
                "--source-fps is for one --host; the hosts of a batch are video files".into(),
            )
            .into());
        }
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
        let sequences = vidprep::insert::list_sequences(
            args.sequences.as_ref().expect("clap requires --sequences"),
        )?;
        let hosts = vidprep::insert::list_hosts(hosts_dir)?;
        let out_dir = args.out_dir.clone().expect("clap requires --out-dir");
        let count = args.count.expect("clap requires --count");
        let plans = vidprep::insert::plan_insertions(
            &hosts,
            &sequences,
            count,
            seed,
            args.fit,
            args.overlay,
            &[ExportSpec::Clip(ClipExport {
                smart: args.smart.smart,
                verify: args.smart.verify,
                ..ClipExport::default()
            })],
        );
        let (items, bad) =
            vidprep::manifest::ManifestItem::check_all(plans.into_iter().map(|mut plan| {
                plan.strict = args.strict;
                (0, plan)
            }));
        let manifest = vidprep::manifest::Manifest {
            items,
            bad,
            ..Default::default()
        };
        return crate::batch::run_items(&manifest, &out_dir, &args.batch, &args.encode, None, ctx);
    }
    let (at, seed) = match (args.at, args.seed) {
        (Some(at), None) => (Some(at), None),
        (None, Some(seed)) => (None, Some(seed)),
        _ => {
            return Err(vidprep::Error::Usage(
                "say where the sequence goes: --at T or --seed N".into(),
            )
            .into())
        }
    };
    let output = args.output.clone().expect("clap requires --output");
    let container = output
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .filter(|e| e == "mov" || e == "mkv");
    let mut plan = Plan::new(
        id_for(&output),
        args.host.clone().expect("clap requires --host"),
        vec![ExportSpec::Clip(ClipExport {
            boxes_out: Some(BoxesOut::Vstar),
            container,
            smart: args.smart.smart,
            verify: args.smart.verify,
            ..ClipExport::default()
        })],
    );
    args.source_fps.apply(&mut plan);
    plan.insert = Some(InsertSpec {
        sequence: args.sequence.clone().expect("clap requires --sequence"),
        at,
        seed,
        fit: args.fit,
        overlay: args.overlay,
    });
    plan.strict = args.strict;
    let target = ExportTarget {
        boxes: args.annotations.clone(),
        ..ExportTarget::at(output)
    };
    crate::clip::run_plan(&plan, vec![target], args.encode.exec(ctx), "insert")
}
