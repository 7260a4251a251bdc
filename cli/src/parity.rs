//! `vidprep parity`: runs a profile and the package it mirrors on the same video and says
//! whether they agree: the frame indices, the frame size, the timestamps, and each frame's
//! pixels (PSNR, largest difference, differing values). The package runs in a Python
//! interpreter (`--python`, or `VIDPREP_PYTHON`, default `python3`) through
//! `scripts/parity_runner.py` (built in), which imports only the package. The record is
//! written as JSON (`--out`, default `parity.json` is not written: stdout) and the exit code
//! is 0 when everything agrees, 1 otherwise, or when the package is not installed there.
//! The record names the request and the source as vidprep read it, so that `export frames
//! --follow-package RECORD` can show the frames the package really showed
//! (`reference.positions[].package_shows`) and refuse a record of anything else.
//! The runner runs in a process group of its own under a time limit (`--timeout`, else
//! `VIDPREP_PARITY_TIMEOUT`, default 10 minutes): past it, the whole group is killed (a
//! hanging interpreter and whatever it started) and the check fails naming the limit. Ctrl-C or
//! SIGTERM ends the group at once too, and the runner's temporary folder goes with the call
//! (exit 130). Of the runner's stderr only the last [`STDERR_TAIL`] bytes are kept (a runner
//! that floods it costs no more memory), and an error says how much was cut.

use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use serde_json::{json, Value};

use vidprep::plan::{ExportSpec, FramesExport, Plan};
use vidprep::records::{
    FrameComparison, ParityRecord, ParityRequest, ParitySeconds, PositionCheck, ReferenceCheck,
};
use vidprep::{Destination, ExecOptions, NoProgress};

/// The runner, written to a temporary folder for each check.
const RUNNER: &str = include_str!("../../scripts/parity_runner.py");

#[derive(Args)]
pub struct ParityArgs {
    /// The video.
    pub(crate) input: PathBuf,
    /// The profile to check (its package must be installed for --python).
    #[arg(long, required_unless_present = "loader")]
    pub(crate) profile: Option<String>,
    /// Instead of a profile: a vLLM server's video loader, with its decoding codec
    /// (vllm-opencv, vLLM's default, or vllm-torchcodec): which frames a server shows the
    /// model when sent the file, against vidprep's own sampling for the same request
    /// (docs/profiles.md, "vLLM's video loaders").
    #[arg(long, value_name = "vllm-CODEC", conflicts_with_all = ["profile", "profile_options"], value_parser = crate::parity_loader::parse_loader)]
    pub(crate) loader: Option<String>,
    /// The package's nframes (with --loader: the request's num_frames, and vidprep's
    /// uniform count).
    #[arg(long, conflicts_with = "fps")]
    pub(crate) count: Option<usize>,
    /// The package's fps (its default when neither is given; with --loader: the request's
    /// fps, and vidprep's fps rule).
    #[arg(long)]
    pub(crate) fps: Option<f64>,
    /// One of the profile's options: KEY=NUMBER; repeatable.
    #[arg(long = "profile-option", value_name = "KEY=NUMBER", value_parser = crate::export::parse_profile_option)]
    profile_options: Vec<(String, f64)>,
    /// The Python interpreter with the package (default: $VIDPREP_PYTHON, else python3).
    #[arg(long)]
    pub(crate) python: Option<PathBuf>,
    /// Write the record here (JSON) as well as a summary on stdout.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Seconds the package's runner may take before it (and every process it started) is
    /// killed and the check fails (default: $VIDPREP_PARITY_TIMEOUT, else 600).
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub(crate) timeout: Option<Duration>,
    /// Lowest PSNR (dB) a frame may have to agree.
    #[arg(long, default_value_t = 45.0)]
    min_psnr: f64,
}

/// The arguments of a profile's check: the profile named (`--profile`, required without
/// `--loader`) beside the rest.
struct ProfileArgs {
    profile: String,
    args: ParityArgs,
}

impl std::ops::Deref for ProfileArgs {
    type Target = ParityArgs;
    fn deref(&self) -> &ParityArgs {
        &self.args
    }
}

/// `--timeout`: seconds, more than 0, at most a day.
fn parse_timeout(s: &str) -> Result<Duration, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= 86_400.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| format!("expected seconds, more than 0 and at most 86400, found {s:?}"))
}

/// How much of the runner's stderr is kept and shown: its last 64 KiB (a traceback's end).
const STDERR_TAIL: usize = 64 << 10;

/// What the runner left: its exit status and its stderr.
pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) stderr: Tail,
}

/// How the runner's run ended.
enum Ended {
    /// It exited.
    Finished(Finished),
    /// It ran past the limit; its group was killed.
    TimedOut,
    /// The call was cancelled (Ctrl-C, SIGTERM); its group was killed.
    Cancelled,
}

/// The last `keep` bytes of a stream, and how many it had in all.
pub(crate) struct Tail {
    kept: Vec<u8>,
    total: u64,
}

impl Tail {
    /// Reads `reader` to its end, keeping only its last `keep` bytes (memory: at most twice
    /// `keep`, whatever the stream's length).
    fn read(mut reader: impl std::io::Read, keep: usize) -> Tail {
        let mut kept = Vec::new();
        let mut total = 0u64;
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            total += n as u64;
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > 2 * keep {
                kept.drain(..kept.len() - keep);
            }
        }
        if kept.len() > keep {
            kept.drain(..kept.len() - keep);
        }
        Tail { kept, total }
    }

    /// The kept text, trimmed, after a line saying how much was cut (when some was).
    pub(crate) fn text(&self) -> String {
        let text = String::from_utf8_lossy(&self.kept);
        let text = text.trim();
        let cut = self.total - self.kept.len() as u64;
        if cut == 0 {
            return text.to_string();
        }
        format!(
            "[the runner wrote {} bytes to stderr; the first {cut} are cut, the last {} follow]\n...{text}",
            self.total,
            self.kept.len()
        )
    }
}

/// Runs `command` in a process group of its own and waits at most `limit` for it. Past the
/// limit, or once `cancel` (the call's token) is cancelled, the whole group is killed
/// (SIGKILL).
fn run_with_limit(
    mut command: Command,
    limit: Duration,
    cancel: &vidprep::call::CancelToken,
) -> std::io::Result<Ended> {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        command.process_group(0);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    // stderr is read on a thread of its own, so that a chatty runner never blocks on a full
    // pipe while this thread waits.
    let mut pipe = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || Tail::read(&mut pipe, STDERR_TAIL));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Ok(status);
        }
        // Ctrl-C or SIGTERM: the runner's group is not the terminal's, so the signal never
        // reached it; it is ended here, at once, not left running past vidprep's exit.
        if cancel.is_cancelled() {
            break Err(Ended::Cancelled);
        }
        if Instant::now() >= deadline {
            break Err(Ended::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The runner exited, timed out or was cancelled; what it started goes with its group.
    kill_group(&mut child);
    let status = match status {
        Ok(status) => status,
        Err(ended) => {
            let _ = child.wait();
            // The group is dead, so the pipe's every writer is gone and the reader ends.
            let _ = reader.join();
            return Ok(ended);
        }
    };
    let stderr = reader.join().unwrap_or(Tail {
        kept: Vec::new(),
        total: 0,
    });
    Ok(Ended::Finished(Finished { status, stderr }))
}

/// vidprep's side of a check: the frames export `spec` of `source`, kept in memory, and the
/// seconds it took.
pub(crate) fn our_frames(
    spec: FramesExport,
    source: &std::path::Path,
    ctx: &vidprep::call::CallContext,
) -> anyhow::Result<(vidprep::exec::MemoryFrames, f64)> {
    let plan = Plan::new(
        "parity",
        source.to_path_buf(),
        vec![ExportSpec::Frames(spec)],
    );
    let started = Instant::now();
    let outcome = vidprep::execute(
        &plan,
        &Destination::Memory,
        &ExecOptions::default().in_context(ctx),
        &mut NoProgress,
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let ours = outcome
        .memory
        .into_iter()
        .next()
        .context("the frames export kept nothing in memory")?;
    Ok((ours, seconds))
}

/// One run of the parity runner: `target` (a profile, or `vllm:LOADER`) on `source` with the
/// request `options` (JSON), by `python`, within `limit`; `side` names what is run in the
/// messages ("profile qwen3-vl (qwen-vl-utils package", "loader vllm-opencv (vllm"), `who` what
/// fails when the runner does ("the package", "vLLM's loader vllm-opencv") and `needs` what
/// the interpreter must have ("the package", "vllm").
pub(crate) struct RunnerCall<'a> {
    pub python: &'a std::path::Path,
    pub source: &'a std::path::Path,
    pub target: &'a str,
    pub options: Value,
    pub limit: Duration,
    pub side: String,
    pub who: String,
    pub needs: &'a str,
}

/// What the runner wrote: its result record, its pictures (`shape`: N x H x W x 3, checked
/// against the bytes) and how long it took.
pub(crate) struct RunnerOutput {
    pub result: Value,
    pub pixels: Vec<u8>,
    pub shape: Vec<usize>,
    pub seconds: f64,
}

/// Runs the parity runner (its temporary folder removed after), with the command line's
/// errors for an interpreter that cannot run it, a runner that times out or fails, and a
/// result that is not what it must be.
pub(crate) fn run_runner(
    call: RunnerCall<'_>,
    cancel: &vidprep::call::CancelToken,
) -> anyhow::Result<RunnerOutput> {
    let RunnerCall {
        python,
        source,
        target,
        options,
        limit,
        side,
        who,
        needs,
    } = call;
    let dir = tempfile::tempdir().context("cannot make a temporary folder for the runner")?;
    let runner = dir.path().join("parity_runner.py");
    std::fs::write(&runner, RUNNER)
        .with_context(|| format!("cannot write {}", runner.display()))?;
    let out_dir = dir.path().join("out");
    let mut command = Command::new(python);
    command
        .arg(&runner)
        .arg(target)
        .arg(source)
        .arg(&out_dir)
        .arg(options.to_string());
    let started = Instant::now();
    let run = run_with_limit(command, limit, cancel).with_context(|| {
        format!(
            "cannot run the Python interpreter {} (install Python 3 with {needs}, or name one \
             with --python or VIDPREP_PYTHON)",
            python.display()
        )
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let run = match run {
        Ended::Finished(run) => run,
        // `main` sees the cancelled token and exits 130; the runner's folder goes with `dir`.
        Ended::Cancelled => return Err(vidprep::Error::Cancelled.into()),
        Ended::TimedOut => anyhow::bail!(
            "{}: the parity runner for {side}, run by {} parity_runner.py) did not finish \
             within the limit of {} s, so it and every process it started were killed; give it \
             longer with --timeout SECONDS or VIDPREP_PARITY_TIMEOUT, or check that the \
             interpreter does not hang",
            source.display(),
            python.display(),
            limit.as_secs_f64(),
        ),
    };
    let stderr = run.stderr.text();
    match run.status.code() {
        Some(0) => {}
        Some(3) => anyhow::bail!(
            "{}: {} (install it there, or name another interpreter with --python / VIDPREP_PYTHON)",
            source.display(),
            stderr.trim()
        ),
        _ => anyhow::bail!(
            "{}: {who} failed on this video ({}):\n{}",
            source.display(),
            run.status,
            stderr.trim()
        ),
    }
    let broken = |what: &str| {
        format!(
            "{}: {what}: is {} a working Python 3 with {needs}? (name another with --python \
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
    let needed = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if shape.len() != 4 || shape[3] != 3 || needed != Some(pixels.len()) {
        anyhow::bail!(broken(&format!(
            "the parity runner's frames.u8 has {} bytes, but its result.json gives the shape \
             {shape:?} (N x H x W x 3)",
            pixels.len()
        )));
    }
    Ok(RunnerOutput {
        result,
        pixels,
        shape,
        seconds,
    })
}

/// Kills `child`'s process group (the child is its leader), or the child where there are no
/// process groups.
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let _ = rustix::process::kill_process_group(
            rustix::process::Pid::from_child(child),
            rustix::process::Signal::KILL,
        );
    }
    let _ = child.kill();
}

/// PSNR of two 8-bit buffers (`None`: identical).
pub(crate) fn psnr(a: &[u8], b: &[u8]) -> (Option<f64>, u8, usize) {
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

/// The package `profile` mirrors, for messages (`?` for an unknown profile).
fn package_of(profile: &str) -> &'static str {
    vidprep::check::mirrored_package(profile).unwrap_or("?")
}

pub fn run(args: ParityArgs, ctx: &vidprep::call::CallContext) -> anyhow::Result<u8> {
    if let Some(loader) = args.loader.clone() {
        return crate::parity_loader::run(&args, &loader, ctx);
    }
    let profile = args
        .profile
        .clone()
        .expect("clap requires --profile without --loader");
    let args = ProfileArgs { profile, args };
    let source = &args.input;
    let python = args
        .python
        .clone()
        .or_else(|| std::env::var_os("VIDPREP_PYTHON").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("python3"));
    // vidprep's side.
    let mut spec = FramesExport::default();
    spec.count = args.count;
    spec.fps = args.fps;
    spec.profile = Some(args.profile.clone());
    spec.profile_options = args.profile_options.iter().cloned().collect();
    // The check compares with what the package gives, repeats and all (internvl's segments on
    // a video shorter than the count pick frames twice, as decord does).
    spec.allow_repeats = true;
    let (ours, ours_s) = our_frames(spec, source, ctx)?;
    let facts = &ours.frames_json;
    let our_indices: Vec<u64> = facts.sampled.indices.iter().map(|&i| i as u64).collect();
    let our_stamps = facts
        .profile
        .as_ref()
        .map_or(Value::Null, |p| p["timestamps"].clone());
    // The package's side.
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
    let limit = args.timeout.unwrap_or(ctx.settings.parity_timeout);
    let RunnerOutput {
        result,
        pixels,
        shape,
        seconds: theirs_s,
    } = run_runner(
        RunnerCall {
            python: &python,
            source,
            target: &args.profile,
            options: Value::Object(options),
            limit,
            side: format!(
                "profile {} ({} package",
                args.profile,
                package_of(&args.profile)
            ),
            who: "the package".into(),
            needs: "the package",
        },
        &ctx.cancel,
    )?;
    let their_indices: Option<Vec<u64>> = result["indices"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect());
    let indices_equal = their_indices.as_ref().map(|t| *t == our_indices);
    let ours_shape = [ours.count, ours.height as usize, ours.width as usize, 3];
    let sizes_equal = shape == ours_shape;
    let timestamps_equal =
        (!result["timestamps"].is_null()).then(|| result["timestamps"] == our_stamps);
    // The visual tokens, where the runner reads them off the processor's own prompt text.
    let our_tokens = facts
        .profile
        .as_ref()
        .map_or(Value::Null, |p| p["tokens"].clone());
    let tokens_equal = (!result["tokens"].is_null()).then(|| result["tokens"] == our_tokens);
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
            frames.push(FrameComparison {
                position: p,
                index: our_indices.get(p).copied(),
                psnr_db: q,
                max_abs_diff: max,
                differing_values: differing,
            });
        }
    }
    // Which side shows other frames than it names: both against the plain sequential decode.
    let reference = if !bit_exact && sizes_equal && ours.count > 0 {
        Some(which_side(
            source,
            &ours,
            &pixels,
            &our_indices,
            their_indices.as_deref(),
            ctx,
        )?)
    } else {
        None
    };
    let pass = sizes_equal
        && indices_equal != Some(false)
        && timestamps_equal != Some(false)
        && tokens_equal != Some(false)
        && worst.is_none_or(|w| w >= args.min_psnr);
    let record = ParityRecord {
        vidprep_version: vidprep::records::VERSION.to_string(),
        source: source.clone(),
        // What `export frames --follow-package` checks a record against: the source as
        // vidprep read it, and the request.
        vidprep_source: facts
            .sources
            .first()
            .map(|s| serde_json::to_value(s).expect("a source record serialises")),
        request: ParityRequest {
            count: args.count,
            fps: args.fps,
            profile_options: args.profile_options.iter().cloned().collect(),
        },
        profile: facts.profile.clone(),
        package: result.clone(),
        python: python.clone(),
        indices_equal,
        sizes_equal,
        vidprep_shape: ours_shape,
        timestamps_equal,
        tokens_equal,
        bit_exact,
        min_psnr_db: worst,
        psnr_threshold_db: args.min_psnr,
        frames,
        reference,
        seconds: ParitySeconds {
            vidprep: ours_s,
            package_process: theirs_s,
            package_call: result["seconds"].as_f64(),
        },
        pass,
    };
    if let Some(out) = &args.out {
        write_json(
            out,
            &serde_json::to_value(&record).expect("a parity record serialises"),
        )
        .with_context(|| format!("cannot write {}", out.display()))?;
    }
    crate::print_out(&format!(
        "{}: {} vs {} {} ({}): indices {}, size {}, timestamps {}, tokens {}, pixels {} ({} frames); vidprep {:.2} s, package {:.2} s\n",
        source.display(),
        args.profile,
        record.package["package"].as_str().unwrap_or("?"),
        record.package["version"].as_str().unwrap_or("?"),
        record.package["backend"].as_str().unwrap_or("?"),
        match indices_equal { Some(true) => "equal", Some(false) => "DIFFER", None => "not reported" },
        if sizes_equal { "equal".to_string() } else { format!("DIFFERS ({ours_shape:?} vs {shape:?})") },
        match timestamps_equal { Some(true) => "equal", Some(false) => "DIFFER", None => "-" },
        match tokens_equal { Some(true) => "equal", Some(false) => "DIFFER", None => "-" },
        if bit_exact { "bit-exact".to_string() } else { worst.map_or("-".into(), |w| format!("min PSNR {w:.2} dB")) },
        ours.count,
        ours_s,
        result["seconds"].as_f64().unwrap_or(theirs_s),
    ))?;
    if let Some(summary) = record.reference.as_ref().map(|r| r.summary.as_str()) {
        crate::print_out(&format!(
            "  against the plain sequential decode: {summary}\n"
        ))?;
    }
    Ok(if pass {
        crate::EXIT_OK
    } else {
        crate::EXIT_FAILED
    })
}

/// Writes `value` as pretty-printed JSON with a final newline (the record of `--out`), with
/// the library's messages for a failed write.
pub(crate) fn write_json(path: &std::path::Path, value: &Value) -> vidprep::Result<()> {
    use std::io::Write as _;
    let io = |source: std::io::Error| vidprep::Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::create(path).map_err(io)?;
    let mut out = std::io::BufWriter::new(file);
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| {
        if e.is_io() {
            io(e.into())
        } else {
            vidprep::Error::Internal(format!("cannot write JSON: {e}"))
        }
    })?;
    out.write_all(b"\n").and_then(|()| out.flush()).map_err(io)
}

/// How far from the frame it names a side's picture may be looked for.
pub(crate) const NEIGHBOURS: usize = 2;

/// Below this PSNR against every frame looked at, a picture shows none of them. (The same
/// frame, scaled by FFmpeg's bicubic here and the profile's resampler there, measured 30-32
/// dB on the format matrix; a neighbouring frame of it 11-15 dB.)
pub(crate) const SAME_FRAME_DB: f64 = 20.0;

/// Each compared position's picture on both sides matched against the plain sequential
/// decode's frames (`media::reference`, FFmpeg's loop as the CLI runs it) at the index named
/// and its neighbours, all scaled to the output size: the frame each side shows is the one
/// it is closest to (PSNR). The record says per position which frame each side shows, and a
/// summary which side is wrong where.
fn which_side(
    source: &std::path::Path,
    ours: &vidprep::exec::MemoryFrames,
    theirs: &[u8],
    our_indices: &[u64],
    their_indices: Option<&[u64]>,
    ctx: &vidprep::call::CallContext,
) -> anyhow::Result<ReferenceCheck> {
    let (w, h) = (ours.width, ours.height);
    let per = w as usize * h as usize * 3;
    let named = |p: usize, side: Option<&[u64]>| side.and_then(|s| s.get(p)).map(|&i| i as usize);
    let mut wanted = std::collections::BTreeSet::new();
    for p in 0..ours.count {
        for i in [named(p, Some(our_indices)), named(p, their_indices)]
            .into_iter()
            .flatten()
        {
            wanted.extend(i.saturating_sub(NEIGHBOURS)..=i + NEIGHBOURS);
        }
    }
    let frames = vidprep::media::reference_rgb_frames(
        &vidprep::media::Source::from(source),
        &wanted,
        w,
        h,
        ctx,
    )
    .with_context(|| format!("{}: the plain sequential decode failed", source.display()))?;
    let closest = |picture: &[u8], index: usize| -> Option<(usize, f64)> {
        (index.saturating_sub(NEIGHBOURS)..=index + NEIGHBOURS)
            .filter_map(|j| {
                frames
                    .get(&j)
                    .map(|f| (j, psnr(picture, f).0.unwrap_or(f64::INFINITY)))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
    };
    // The frame a picture shows: `Some(None)` when it is none of those looked at.
    let shows = |c: Option<(usize, f64)>| c.map(|c| (c.1 >= SAME_FRAME_DB).then_some(c.0));
    let mut positions = Vec::new();
    let (mut ours_wrong, mut theirs_wrong, mut offsets) =
        (0usize, 0usize, std::collections::BTreeMap::new());
    for p in 0..ours.count {
        let Some(i) = named(p, Some(our_indices)) else {
            continue;
        };
        let mine = closest(&ours.pixels[p * per..(p + 1) * per], i);
        let j = named(p, their_indices).unwrap_or(i);
        let other = closest(&theirs[p * per..(p + 1) * per], j);
        if shows(mine).is_some_and(|f| f != Some(i)) {
            ours_wrong += 1;
        }
        match shows(other) {
            Some(Some(f)) if f != j => {
                theirs_wrong += 1;
                *offsets
                    .entry(format!("frame i{:+}", f as i64 - j as i64))
                    .or_insert(0usize) += 1;
            }
            Some(None) => {
                theirs_wrong += 1;
                *offsets
                    .entry(format!("none of i-{NEIGHBOURS}..i+{NEIGHBOURS}"))
                    .or_insert(0usize) += 1;
            }
            _ => {}
        }
        positions.push(PositionCheck {
            position: p,
            vidprep_names: Some(i),
            vidprep_shows: shows(mine).flatten(),
            vidprep_psnr_db: mine.map(|c| c.1),
            package_names: Some(j),
            package_shows: shows(other).flatten(),
            package_psnr_db: other.map(|c| c.1),
        });
    }
    let n = positions.len();
    let side = |wrong: usize| if wrong == 0 { "right" } else { "wrong" };
    let offsets_text = offsets
        .iter()
        .map(|(what, c)| format!("{what} at {c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let summary = match (ours_wrong, theirs_wrong) {
        (0, 0) => format!(
            "both sides show the frames they name at all {n} positions (the difference is in the pixels, not the frames)"
        ),
        (0, t) => format!(
            "the package is wrong: for index i it shows {offsets_text} of {n} positions ({t} in all); vidprep shows the frames it names"
        ),
        (o, 0) => format!("vidprep is wrong at {o} of {n} positions; the package shows the frames it names"),
        (o, t) => format!("both are wrong: vidprep at {o}, the package at {t} of {n} positions ({offsets_text})"),
    };
    Ok(ReferenceCheck {
        decode: "plain sequential FFmpeg decode (read, send, receive; no seek), scaled to the output size".into(),
        vidprep: side(ours_wrong).into(),
        package: side(theirs_wrong).into(),
        summary,
        positions,
    })
}
