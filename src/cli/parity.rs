//! `vidprep parity`: runs a profile and the package it mirrors on the same video and says
//! whether they agree: the frame indices, the frame size, the timestamps, and each frame's
//! pixels (PSNR, largest difference, differing values). The package runs in a Python
//! interpreter (`--python`, or `VIDPREP_PYTHON`, default `python3`) through
//! `scripts/parity_runner.py` (built in), which imports only the package. The record is
//! written as JSON (`--out`, default `parity.json` is not written: stdout) and the exit code
//! is 0 when everything agrees, 1 otherwise, or when the package is not installed there.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;
use clap::Args;
use serde_json::{json, Value};

use crate::plan::{ExportSpec, FramesExport, Plan};
use crate::{Destination, ExecOptions, NoProgress};

/// The runner, written to a temporary folder for each check.
const RUNNER: &str = include_str!("../../scripts/parity_runner.py");

#[derive(Args)]
pub struct ParityArgs {
    /// The video.
    input: PathBuf,
    /// The profile to check (its package must be installed for --python).
    #[arg(long)]
    profile: String,
    /// The package's nframes.
    #[arg(long, conflicts_with = "fps")]
    count: Option<usize>,
    /// The package's fps (its default when neither is given).
    #[arg(long)]
    fps: Option<f64>,
    /// One of the profile's options: KEY=NUMBER; repeatable.
    #[arg(long = "profile-option", value_name = "KEY=NUMBER", value_parser = super::export::parse_profile_option)]
    profile_options: Vec<(String, f64)>,
    /// The Python interpreter with the package (default: $VIDPREP_PYTHON, else python3).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Write the record here (JSON) as well as a summary on stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Lowest PSNR (dB) a frame may have to agree.
    #[arg(long, default_value_t = 45.0)]
    min_psnr: f64,
}

/// PSNR of two 8-bit buffers (`None`: identical).
fn psnr(a: &[u8], b: &[u8]) -> (Option<f64>, u8, usize) {
    let mut se = 0f64;
    let mut max = 0u8;
    let mut differing = 0usize;
    for (x, y) in a.iter().zip(b) {
        let d = x.abs_diff(*y);
        if d > 0 {
            differing += 1;
            max = max.max(d);
            se += (d as f64) * (d as f64);
        }
    }
    let mse = se / a.len().max(1) as f64;
    let p = (mse > 0.0).then(|| 10.0 * (255.0f64 * 255.0 / mse).log10());
    (p, max, differing)
}

pub fn run(args: ParityArgs) -> anyhow::Result<u8> {
    let source = &args.input;
    let python = args
        .python
        .clone()
        .or_else(|| std::env::var_os("VIDPREP_PYTHON").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("python3"));
    // vidprep's side.
    let spec = FramesExport {
        count: args.count,
        fps: args.fps,
        profile: Some(args.profile.clone()),
        profile_options: args.profile_options.iter().cloned().collect(),
        ..FramesExport::default()
    };
    let plan = Plan::new("parity", source.clone(), vec![ExportSpec::Frames(spec)]);
    let t0 = Instant::now();
    let outcome = crate::execute(
        &plan,
        &Destination::Memory,
        &ExecOptions::default(),
        &mut NoProgress,
    )?;
    let ours_s = t0.elapsed().as_secs_f64();
    let ours = outcome
        .memory
        .into_iter()
        .next()
        .context("the frames export kept nothing in memory")?;
    let facts = &ours.frames_json;
    let our_indices: Vec<u64> = facts["sampled"]["indices"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    let our_stamps = facts["profile"]["timestamps"].clone();
    // The package's side.
    let dir = tempfile::tempdir().context("cannot make a temporary folder for the runner")?;
    let runner = dir.path().join("parity_runner.py");
    std::fs::write(&runner, RUNNER)
        .with_context(|| format!("cannot write {}", runner.display()))?;
    let mut options = serde_json::Map::new();
    for (k, v) in &args.profile_options {
        options.insert(k.clone(), json!(v));
    }
    if let Some(n) = args.count {
        options.insert("nframes".into(), json!(n));
    }
    if let Some(f) = args.fps {
        options.insert("fps".into(), json!(f));
    }
    let out_dir = dir.path().join("out");
    let t1 = Instant::now();
    let run = std::process::Command::new(&python)
        .arg(&runner)
        .arg(&args.profile)
        .arg(source)
        .arg(&out_dir)
        .arg(Value::Object(options).to_string())
        .output()
        .with_context(|| {
            format!(
                "cannot run the Python interpreter {} (install Python 3 with the package, or \
                 name one with --python or VIDPREP_PYTHON)",
                python.display()
            )
        })?;
    let theirs_s = t1.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&run.stderr);
    match run.status.code() {
        Some(0) => {}
        Some(3) => anyhow::bail!(
            "{}: {} (install it there, or name another interpreter with --python / VIDPREP_PYTHON)",
            source.display(),
            stderr.trim()
        ),
        _ => anyhow::bail!(
            "{}: the package failed on this video ({}):\n{}",
            source.display(),
            run.status,
            stderr.trim()
        ),
    }
    let broken = |what: &str| {
        format!(
            "{}: {what}: is {} a working Python 3 with the package? (name another with --python \
             or VIDPREP_PYTHON)",
            source.display(),
            python.display()
        )
    };
    let result: Value = serde_json::from_slice(
        &std::fs::read(out_dir.join("result.json"))
            .with_context(|| broken("the parity runner wrote no result.json"))?,
    )
    .with_context(|| broken("the parity runner's result.json is not JSON"))?;
    let pixels = std::fs::read(out_dir.join("frames.u8"))
        .with_context(|| broken("the parity runner wrote no frames.u8"))?;
    let shape: Vec<usize> = result["shape"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_u64)
                .map(|v| v as usize)
                .collect()
        })
        .unwrap_or_default();
    let their_indices: Option<Vec<u64>> = result["indices"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect());
    let indices_equal = their_indices.as_ref().map(|t| *t == our_indices);
    let ours_shape = [ours.count, ours.height as usize, ours.width as usize, 3];
    let sizes_equal = shape == ours_shape;
    let needed = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if shape.len() != 4 || needed != Some(pixels.len()) {
        anyhow::bail!(broken(&format!(
            "the parity runner's frames.u8 has {} bytes, but its result.json gives the shape \
             {shape:?} (N x H x W x 3)",
            pixels.len()
        )));
    }
    let timestamps_equal =
        (!result["timestamps"].is_null()).then(|| result["timestamps"] == our_stamps);
    let mut frames = Vec::new();
    let mut worst: Option<f64> = None;
    let mut bit_exact = sizes_equal;
    if sizes_equal {
        let per = ours_shape[1] * ours_shape[2] * 3;
        for p in 0..ours.count {
            let (a, b) = (
                &ours.pixels[p * per..(p + 1) * per],
                &pixels[p * per..(p + 1) * per],
            );
            let (q, max, differing) = psnr(a, b);
            if differing > 0 {
                bit_exact = false;
            }
            if let Some(q) = q {
                worst = Some(worst.map_or(q, |w: f64| w.min(q)));
            }
            frames.push(json!({
                "position": p,
                "index": our_indices.get(p),
                "psnr_db": q,
                "max_abs_diff": max,
                "differing_values": differing,
            }));
        }
    }
    let pass = sizes_equal
        && indices_equal != Some(false)
        && timestamps_equal != Some(false)
        && worst.is_none_or(|w| w >= args.min_psnr);
    let record = json!({
        "vidprep_version": crate::sidecar::VERSION,
        "source": source,
        "profile": facts["profile"],
        "package": result,
        "python": python,
        "indices_equal": indices_equal,
        "sizes_equal": sizes_equal,
        "vidprep_shape": ours_shape,
        "timestamps_equal": timestamps_equal,
        "bit_exact": bit_exact,
        "min_psnr_db": worst,
        "psnr_threshold_db": args.min_psnr,
        "frames": frames,
        "seconds": {"vidprep": ours_s, "package_process": theirs_s, "package_call": result["seconds"]},
        "pass": pass,
    });
    if let Some(out) = &args.out {
        crate::output::write_json(out, &record)
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    println!(
        "{}: {} vs {} {} ({}): indices {}, size {}, timestamps {}, pixels {} ({} frames); vidprep {:.2} s, package {:.2} s",
        source.display(),
        args.profile,
        record["package"]["package"].as_str().unwrap_or("?"),
        record["package"]["version"].as_str().unwrap_or("?"),
        record["package"]["backend"].as_str().unwrap_or("?"),
        match indices_equal { Some(true) => "equal", Some(false) => "DIFFER", None => "not reported" },
        if sizes_equal { "equal".to_string() } else { format!("DIFFERS ({ours_shape:?} vs {shape:?})") },
        match timestamps_equal { Some(true) => "equal", Some(false) => "DIFFER", None => "-" },
        if bit_exact { "bit-exact".to_string() } else { worst.map_or("-".into(), |w| format!("min PSNR {w:.2} dB")) },
        ours.count,
        ours_s,
        result["seconds"].as_f64().unwrap_or(theirs_s),
    );
    Ok(if pass {
        super::EXIT_OK
    } else {
        super::EXIT_FAILED
    })
}
