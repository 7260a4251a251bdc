//! `vidprep parity VIDEO --loader vllm-CODEC [--count N | --fps F]`: what a vLLM server shows
//! the model when it is sent the video file (lmms-eval's `pass_video_url`) rather than the
//! benchmark's frames. The server's loader (vLLM's `opencv` loader, uniform sampling, with the
//! codec named: `vllm-opencv`, vLLM's default, or `vllm-torchcodec`) runs on the file in the
//! Python interpreter (`--python`, `VIDPREP_PYTHON`) through the same runner as the profiles'
//! check (`scripts/parity_runner.py`), with the request's `num_frames` (`--count`) or `fps`
//! (`--fps`) in `media_io_kwargs`; the benchmark's frames are vidprep's own sampling for the
//! same request (`export frames --count N` or `--fps F`).
//!
//! Per video the record says: the frames the loader names (`frames_indices`, and those its
//! sampler computed but could not read), the frame each of its pictures shows (found against
//! the plain sequential FFmpeg decode, as the profiles' check finds it: a loader may show
//! another frame than it names), whether those are the benchmark's frames, the fps, total
//! and duration the loader reports and the times `index / fps` the model's time markers come
//! from, and a verdict: "send the file" when the model sees the benchmark's frames at the
//! benchmark's times, else "send the frames: --payload vllm". Kept apart from the profiles'
//! check (`parity.rs`), whose runner, limits and record helpers it shares.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::Context as _;
use serde_json::{json, Value};

use vidprep::plan::FramesExport;

use crate::parity::{self, ParityArgs};

/// The codecs vLLM's loaders decode with on a CPU (vLLM 0.34: `opencv`, its default, and
/// `torchcodec`; `pynvvideocodec` and `deepstream` need a GPU, and there is no PyAV codec).
const CODECS: [&str; 2] = ["opencv", "torchcodec"];

/// The frames vLLM's `VideoMediaIO` asks its loader for when a request names neither
/// `num_frames` nor `fps`.
const SERVER_DEFAULT_FRAMES: usize = 32;

/// Two times are the same marker when they differ by less than this (seconds).
const SAME_TIME_S: f64 = 5e-4;

/// `--loader`: `vllm-CODEC` with a codec vLLM decodes with on a CPU.
pub(crate) fn parse_loader(s: &str) -> Result<String, String> {
    let codec = s.strip_prefix("vllm-").unwrap_or("");
    if CODECS.contains(&codec) {
        return Ok(s.to_string());
    }
    Err(format!(
        "expected vllm-opencv (vLLM's default) or vllm-torchcodec, found {s:?} (vLLM 0.34's \
         video loaders decode with OpenCV or torchcodec on a CPU; it has no PyAV video codec)"
    ))
}

pub(crate) fn run(
    args: &ParityArgs,
    loader: &str,
    ctx: &vidprep::call::CallContext,
) -> anyhow::Result<u8> {
    let source = &args.input;
    let python = args
        .python
        .clone()
        .or_else(|| std::env::var_os("VIDPREP_PYTHON").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("python3"));
    if let Some(f) = args.fps {
        anyhow::ensure!(
            f.is_finite() && f > 0.0,
            "--fps must be a number greater than 0, found {f}"
        );
    }
    // The request: the server's default count when neither is given.
    let count = match (args.count, args.fps) {
        (None, None) => Some(SERVER_DEFAULT_FRAMES),
        (c, _) => c,
    };
    // The benchmark's frames: vidprep's own sampling for the same request.
    let mut spec = FramesExport::default();
    spec.count = count;
    spec.fps = args.fps;
    let (ours, ours_s) = parity::our_frames(spec, source, ctx)?;
    let facts = &ours.frames_json;
    let bench: Vec<u64> = facts.sampled.indices.iter().map(|&i| i as u64).collect();
    let src = facts
        .sources
        .first()
        .context("the frames export recorded no source")?;
    let rate = src.avg_frame_rate;
    let source_fps = (rate.den != 0).then(|| rate.num as f64 / rate.den as f64);
    // The times a frames request (`--payload vllm`) gives the model: index / the source's fps.
    // Without a known rate (Ogg), each frame's own time.
    let bench_times: Vec<Option<f64>> = bench
        .iter()
        .enumerate()
        .map(|(p, &i)| match source_fps.filter(|f| *f > 0.0) {
            Some(f) => Some(i as f64 / f),
            None => facts.frames.get(p).map(|r| r.time_s),
        })
        .collect();

    // The server's side.
    let mut request = serde_json::Map::new();
    if let Some(n) = args.count {
        request.insert("num_frames".into(), json!(n));
    }
    if let Some(f) = args.fps {
        request.insert("fps".into(), json!(f));
    }
    let limit = args.timeout.unwrap_or(ctx.settings.parity_timeout);
    let parity::RunnerOutput {
        result,
        pixels,
        shape,
        seconds: theirs_s,
    } = parity::run_runner(
        parity::RunnerCall {
            python: &python,
            source,
            target: loader,
            options: Value::Object(request.clone()),
            limit,
            side: format!("loader {loader} (vllm"),
            who: format!("vLLM's loader {loader}"),
            needs: "vllm",
        },
        &ctx.cancel,
    )?;
    let list = |v: &Value| -> Vec<u64> {
        v.as_array()
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default()
    };
    let names = list(&result["indices"]);
    let sampled = list(&result["sampled_indices"]);
    if shape[0] != names.len() {
        anyhow::bail!(
            "{}: the parity runner's result.json gives {} pictures but {} indices: is {} a \
             working Python 3 with vllm? (name another with --python or VIDPREP_PYTHON)",
            source.display(),
            shape[0],
            names.len(),
            python.display()
        );
    }
    let (h, w) = (shape[1], shape[2]);
    let per = w * h * 3;
    let loader_fps = result["fps"].as_f64().filter(|f| *f > 0.0);

    // Which frame each picture shows: against the plain sequential decode at and around the
    // index it names, at the picture's size.
    let mut wanted = BTreeSet::new();
    for &i in &names {
        let i = i as usize;
        wanted.extend(i.saturating_sub(parity::NEIGHBOURS)..=i + parity::NEIGHBOURS);
    }
    let decoded = if names.is_empty() {
        Default::default()
    } else {
        vidprep::media::reference_rgb_frames(
            &vidprep::media::Source::from(source.as_path()),
            &wanted,
            w as u32,
            h as u32,
            ctx,
        )
        .with_context(|| format!("{}: the plain sequential decode failed", source.display()))?
    };
    let mut positions = Vec::new();
    let mut shows_all = Vec::new();
    let mut offsets = std::collections::BTreeMap::<String, usize>::new();
    for (p, &i) in names.iter().enumerate() {
        let picture = &pixels[p * per..(p + 1) * per];
        let i = i as usize;
        let closest = (i.saturating_sub(parity::NEIGHBOURS)..=i + parity::NEIGHBOURS)
            .filter_map(|j| {
                decoded
                    .get(&j)
                    .map(|f| (j, parity::psnr(picture, f).0.unwrap_or(f64::INFINITY)))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let shows = closest.and_then(|(j, q)| (q >= parity::SAME_FRAME_DB).then_some(j as u64));
        match shows {
            Some(f) if f != i as u64 => {
                *offsets
                    .entry(format!("frame i{:+}", f as i64 - i as i64))
                    .or_default() += 1;
            }
            None => {
                *offsets
                    .entry(format!("none of i-{n}..i+{n}", n = parity::NEIGHBOURS))
                    .or_default() += 1;
            }
            _ => {}
        }
        shows_all.push(shows);
        let time = loader_fps.map(|f| i as f64 / f);
        positions.push(json!({
            "position": p,
            "names": i,
            "shows": shows,
            "psnr_db": closest.map(|c| if c.1.is_finite() { Some(c.1) } else { None }),
            "time_s": time,
            "benchmark_index": bench.get(p),
            "benchmark_time_s": bench_times.get(p).copied().flatten(),
        }));
    }
    let dropped: Vec<u64> = sampled
        .iter()
        .copied()
        .filter(|i| !names.contains(i))
        .collect();
    let shows_what_it_names =
        shows_all.iter().zip(&names).all(|(s, &i)| *s == Some(i)) && dropped.is_empty();
    let indices_equal = names == bench;
    let frames_equal =
        shows_all.len() == bench.len() && shows_all.iter().zip(&bench).all(|(s, &b)| *s == Some(b));
    let fps_equal = match (loader_fps, source_fps) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-6 * b.abs().max(1.0),
        _ => false,
    };
    let server_times: Vec<Option<f64>> = names
        .iter()
        .map(|&i| loader_fps.map(|f| i as f64 / f))
        .collect();
    let timestamps_equal = server_times.len() == bench_times.len()
        && server_times
            .iter()
            .zip(&bench_times)
            .all(|(a, b)| matches!((a, b), (Some(a), Some(b)) if (a - b).abs() < SAME_TIME_S));
    let send_file = frames_equal && timestamps_equal;
    // Why not, in the order a reader should fix them.
    let mut reasons = Vec::new();
    if !dropped.is_empty() {
        reasons.push(format!(
            "the loader could not read {} of the {} frames it picked ({dropped:?}: past the \
             frames it decoded)",
            dropped.len(),
            sampled.len()
        ));
    }
    if !offsets.is_empty() {
        let text = offsets
            .iter()
            .map(|(what, c)| format!("{what} at {c}"))
            .collect::<Vec<_>>()
            .join(", ");
        reasons.push(format!(
            "its pictures are not the frames it names: for index i it shows {text} of {} \
             positions",
            names.len()
        ));
    }
    if src.rotation_cw != 0 && shows_all.iter().any(Option::is_none) {
        reasons.push(format!(
            "the source is shown turned {} degrees clockwise (its rotation metadata) and the \
             loader's pictures match none of the frames as shown: it turns them otherwise, or \
             not at all",
            src.rotation_cw
        ));
    }
    if !indices_equal {
        let differ = names.iter().zip(&bench).filter(|(a, b)| a != b).count()
            + names.len().abs_diff(bench.len());
        reasons.push(format!(
            "it names other frames than the benchmark's ({} vs {} frames, {differ} positions \
             differ)",
            names.len(),
            bench.len()
        ));
    }
    if !fps_equal && source_fps.is_some_and(|f| f > 0.0) {
        reasons.push(format!(
            "it reports {} fps where the source's rate is {} fps",
            loader_fps.map_or("no".into(), |f| format!("{f}")),
            source_fps.map_or("unknown".into(), |f| format!("{f}"))
        ));
    }
    if frames_equal && !timestamps_equal {
        reasons.push(
            "the model's time markers (index / the loader's fps) are not the benchmark's frame \
             times"
                .into(),
        );
    }
    let verdict = if send_file {
        "send the file".to_string()
    } else {
        "send the frames: --payload vllm".to_string()
    };
    let record = json!({
        "vidprep_version": vidprep::records::VERSION,
        "source": source,
        "vidprep_source": src,
        "loader": loader,
        "request": {
            "count": args.count,
            "fps": args.fps,
            "media_io_kwargs": {"video": request},
        },
        "package": result,
        "python": python,
        "benchmark": {
            "what": "vidprep's own sampling for the same request (export frames --count N / --fps F)",
            "count": count,
            "fps_rule": args.fps,
            "formula": facts.sampled.formula,
            "indices": bench,
            "source_fps": source_fps,
            "times_s": bench_times,
        },
        "server": {
            "names": names,
            "sampled": sampled,
            "dropped": dropped,
            "shows": shows_all,
            "fps": loader_fps,
            "total_frames": result["total_frames"],
            "duration_s": result["duration"],
            "times_s": server_times,
        },
        "reference": {
            "decode": "plain sequential FFmpeg decode (read, send, receive; no seek), scaled to the loader's picture size",
            "positions": positions,
        },
        "shows_what_it_names": shows_what_it_names,
        "indices_equal": indices_equal,
        "frames_equal": frames_equal,
        "fps_equal": fps_equal,
        "timestamps_equal": timestamps_equal,
        "verdict": verdict,
        "reasons": reasons,
        "seconds": {"vidprep": ours_s, "package_process": theirs_s, "package_call": result["seconds"]},
        "pass": send_file,
    });
    if let Some(out) = &args.out {
        parity::write_json(out, &record)
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let secs = |t: &[Option<f64>]| {
        t.iter()
            .map(|t| t.map_or("-".to_string(), |t| format!("{t:.3}")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = format!(
        "{}: {loader} ({} {}, loader {}, {}) vs vidprep's {}:\n",
        source.display(),
        result["package"].as_str().unwrap_or("?"),
        result["version"].as_str().unwrap_or("?"),
        result["loader"].as_str().unwrap_or("?"),
        result["backend"].as_str().unwrap_or("?"),
        match args.fps {
            Some(f) => format!("frames at {f} fps"),
            None => format!("{} uniform frames", count.unwrap_or(0)),
        },
    );
    text += &format!(
        "  benchmark's frames: {bench:?} at {} fps (times {})\n",
        source_fps.map_or("?".into(), |f| format!("{f}")),
        secs(&bench_times)
    );
    text += &format!(
        "  server's loader names: {names:?} at {} fps, {} frames, {} s (times {}){}\n",
        loader_fps.map_or("no".into(), |f| format!("{f}")),
        result["total_frames"],
        result["duration"],
        secs(&server_times),
        if dropped.is_empty() {
            String::new()
        } else {
            format!("; picked but not read: {dropped:?}")
        }
    );
    text += &format!(
        "  its pictures show (FFmpeg's decode): [{}]{}\n",
        shows_all
            .iter()
            .map(|s| opt(*s))
            .collect::<Vec<_>>()
            .join(", "),
        if offsets.is_empty() {
            ", the frames it names"
        } else {
            ""
        }
    );
    text += &format!(
        "  frames {}, timestamps {}: {verdict}{}\n",
        if frames_equal { "equal" } else { "DIFFER" },
        if timestamps_equal { "equal" } else { "DIFFER" },
        if reasons.is_empty() {
            String::new()
        } else {
            format!(" ({})", reasons.join("; "))
        }
    );
    crate::print_out(&text)?;
    Ok(if send_file {
        crate::EXIT_OK
    } else {
        crate::EXIT_FAILED
    })
}
