//! Frame identity on every format: `scripts/format-matrix.sh` writes one frame-coded source
//! in many codecs and containers (H.264 with B-pyramid in MP4/MKV/TS/AVI and Annex B, HEVC,
//! VP9, AV1, MPEG-4 ASP with packed B-frames in AVI, MPEG-1/2 raw and in PS/TS, MJPEG, ProRes,
//! FFV1, Theora, y4m, variable frame rate with a freeze, non-zero start, audio before video,
//! non-square pixels, rotations, odd size, one frame, damaged packets, ...). For every
//! variant, against the ffmpeg CLI:
//!
//! - probe's frame count equals `ffprobe -count_frames` (frame i is the i-th frame ffmpeg
//!   decodes);
//! - 16 uniform samples, a cut that starts off a keyframe and a truncation each hold exactly
//!   the frames their sidecar names: the frame code read back from each output frame is the
//!   code of the source frame the sidecar names (in ffmpeg's decode), and the pixels match
//!   ffmpeg's decode of that frame (PSNR >= 45 dB; 30 dB where the decoder concealed damage,
//!   which depends on what was decoded before);
//! - a truncation's duration in the sidecar equals ffprobe's within 1 ms.
//!
//! Adding a format is one line of the script. The variants are split over four tests so they
//! run in parallel.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::oracle::{self, Frame, PixFmt};
use serde_json::Value;
use support::vidprep;

/// Generates the matrix once per test run (the script keeps what it already made).
fn matrix() -> &'static (PathBuf, Vec<String>) {
    static MATRIX: OnceLock<(PathBuf, Vec<String>)> = OnceLock::new();
    MATRIX.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("format-matrix");
        let script = crate::repo_root().join("scripts/format-matrix.sh");
        let out = std::process::Command::new("bash")
            .arg(&script)
            .arg(&dir)
            .output()
            .expect("run scripts/format-matrix.sh");
        assert!(
            out.status.success(),
            "format-matrix.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let list = std::fs::read_to_string(dir.join("list.txt")).unwrap();
        let names: Vec<String> = list.split_whitespace().map(str::to_string).collect();
        assert!(names.len() >= 25, "{} variants", names.len());
        (dir, names)
    })
}

/// Every frame of `path` as ffmpeg decodes it, through yuv420p (vidprep's pipeline format),
/// optionally scaled to `size` like vidprep's scaler, as `fmt`. RGB of a source that is not
/// limited-range 8-bit 4:2:0 YUV comes from the source's own layout, in one conversion and
/// scale (as the CLI's `-pix_fmt rgb24` gives it, and vidprep's images do).
fn ffmpeg_frames(path: &Path, size: Option<(u32, u32)>, fmt: PixFmt) -> Vec<Frame> {
    let pix_fmt = oracle::video_stream(path)["pix_fmt"]
        .as_str()
        .unwrap_or("")
        .to_string();
    // A full-range source's RGB comes from its own picture too (#52 item 1), its range said
    // outright (FFmpeg 4.3's scale filter reads it only from `yuvj*` formats).
    let full = fmt == PixFmt::Rgb24 && oracle::source_is_full_range(path);
    let own_rgb =
        fmt == PixFmt::Rgb24 && (full || !matches!(pix_fmt.as_str(), "yuv420p" | "yuvj420p"));
    let mut filter = if full {
        "scale=in_range=pc".to_string()
    } else if own_rgb {
        "null".to_string()
    } else {
        oracle::to_pipeline_yuv(path)
    };
    if let Some((w, h)) = size {
        if full {
            filter = format!("scale={w}:{h}:flags=bicubic:in_range=pc");
        } else if own_rgb {
            filter.push_str(&format!(",scale={w}:{h}:flags=bicubic"));
        } else {
            // Scaled in YUV, then converted, as vidprep does (two passes, not one).
            filter.push_str(&format!(",scale={w}:{h}:flags=bicubic,format=yuv420p"));
        }
    }
    let (w, h) = size.unwrap_or_else(|| {
        let (w, h) = oracle::dimensions(path);
        let quarter =
            ((oracle::rotation(path).unwrap_or(0.0) / 90.0).round() as i64).rem_euclid(2) == 1;
        if quarter {
            (h, w)
        } else {
            (w, h)
        }
    });
    // One decoder thread: a damaged stream's concealed frames depend on FFmpeg's frame-thread
    // count (the CLI's default is one per core, so the oracle differed from machine to
    // machine), and vidprep decodes a damaged stream with one thread (decode.rs,
    // `decoder_threads`); an undamaged stream decodes to the same pixels either way.
    let args = [
        "-v",
        "error",
        "-threads",
        "1",
        "-i",
        &path.display().to_string(),
        "-map",
        "0:v:0",
        "-vf",
        &filter,
        common::cmd::passthrough()[0],
        common::cmd::passthrough()[1],
        "-pix_fmt",
        fmt.ffmpeg_name(),
        "-f",
        "rawvideo",
        "-",
    ];
    let out = common::cmd::run_ok("ffmpeg", &args);
    let fb = fmt.frame_bytes(w as usize, h as usize);
    out.stdout
        .chunks_exact(fb)
        .map(|c| Frame {
            width: w as usize,
            height: h as usize,
            pix_fmt: fmt,
            data: c.to_vec(),
        })
        .collect()
}

fn code_of(f: &Frame) -> Option<u32> {
    f.code_any_orientation().map(|(c, _)| c)
}

/// The top-left `w x h` of a frame (vidprep crops odd sizes to even).
fn crop(f: &Frame, w: usize, h: usize) -> Frame {
    if (f.width, f.height) == (w, h) {
        return f.clone();
    }
    let mut data = Vec::new();
    for (i, &(pw, ph, bpp)) in f.pix_fmt.planes(f.width, f.height).iter().enumerate() {
        let (tw, th, _) = f.pix_fmt.planes(w, h)[i];
        let plane = f.plane(i);
        for y in 0..th.min(ph) {
            data.extend_from_slice(&plane[y * pw * bpp..y * pw * bpp + tw * bpp]);
        }
    }
    Frame {
        width: w,
        height: h,
        pix_fmt: f.pix_fmt,
        data,
    }
}

/// Source frames named by a sidecar's runs, in output order.
fn named_frames(sidecar: &Value) -> Vec<usize> {
    let mut v = Vec::new();
    for run in sidecar["frames"].as_array().unwrap() {
        let start = run["source_start"].as_u64().unwrap() as usize;
        for k in 0..run["count"].as_u64().unwrap() as usize {
            v.push(start + k);
        }
    }
    v
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Checks that `got` is the source frame `s` (`source[s]`): same code, close pixels.
fn same_frame(what: &str, got: &Frame, source: &[Frame], s: usize, min_psnr: f64) {
    let want = &source[s];
    if let Some(c) = code_of(want) {
        assert_eq!(
            code_of(got),
            Some(c),
            "{what}: the frame code does not match source frame {s}"
        );
    }
    let p = oracle::psnr(got, want);
    assert!(
        p >= min_psnr,
        "{what}: PSNR {p:.1} dB against ffmpeg's decode of source frame {s}"
    );
}

fn check_variant(dir: &Path, name: &str) {
    let path = dir.join(name);
    let work = tempfile::tempdir().unwrap();
    let damaged = name.starts_with("damaged");
    let min_psnr = if damaged { 30.0 } else { 45.0 };

    // The frame count: vidprep's frames are ffmpeg's.
    let out = vidprep()
        .args(["probe", "--json", "--count-frames"])
        .arg(&path)
        .assert()
        .success();
    let probe: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let ff_count = oracle::count_frames(&path) as usize;
    let n = probe["video"]["frames"].as_u64().unwrap() as usize;
    assert_eq!(
        probe["video"]["frames_decoded"].as_u64().unwrap() as usize,
        ff_count,
        "{name}: decoded frame count"
    );
    // A damaged file whose packets look fine is numbered by packets until a decode says
    // otherwise; every other file agrees with ffmpeg from the start.
    if !damaged {
        assert_eq!(n, ff_count, "{name}: frame count");
    }

    // 16 uniform samples (repeats allowed for the one-frame file), as PNG images.
    let frames_dir = work.path().join("frames");
    vidprep()
        .args(["export", "frames"])
        .arg(&path)
        .arg("--out-dir")
        .arg(&frames_dir)
        .args(["--count", "16", "--format", "png", "--allow-repeats"])
        .assert()
        .success();
    let fj = json(&frames_dir.join("frames.json"));
    assert_eq!(
        fj["total_frames"].as_u64().unwrap() as usize,
        ff_count,
        "{name}"
    );
    let first = &fj["frames"][0];
    let size = (
        first["width"].as_u64().unwrap() as u32,
        first["height"].as_u64().unwrap() as u32,
    );
    let source_rgb = ffmpeg_frames(&path, Some(size), PixFmt::Rgb24);
    assert_eq!(source_rgb.len(), ff_count, "{name}: oracle frames");
    for f in fj["frames"].as_array().unwrap() {
        let s = f["source_frame"].as_u64().unwrap() as usize;
        let image =
            oracle::decode_image(&frames_dir.join(f["file"].as_str().unwrap()), PixFmt::Rgb24);
        same_frame(
            &format!("{name}: sampled image {}", f["file"]),
            &image,
            &source_rgb,
            s,
            min_psnr,
        );
    }
    if ff_count < 40 {
        return;
    }

    // A cut that starts off a keyframe, lossless so the pixels can be compared exactly.
    let source = ffmpeg_frames(&path, None, PixFmt::Yuv420p);
    let (start, end) = (ff_count / 3 + 1, ff_count / 3 + 17);
    let cut = work.path().join("cut.mp4");
    vidprep()
        .arg("cut")
        .arg(&path)
        .args(["--start", &start.to_string(), "--end", &end.to_string()])
        .args(["--crf", "0", "--preset", "ultrafast", "--no-audio", "-o"])
        .arg(&cut)
        .assert()
        .success();
    let sc = json(&cut.with_extension("json"));
    let named = named_frames(&sc);
    assert_eq!(
        named,
        (start..end).collect::<Vec<_>>(),
        "{name}: cut provenance"
    );
    let got = ffmpeg_frames(&cut, None, PixFmt::Yuv420p);
    assert_eq!(got.len(), named.len(), "{name}: frames in the cut");
    for (k, (g, &s)) in got.iter().zip(&named).enumerate() {
        let want: Vec<Frame> = vec![crop(&source[s], g.width, g.height)];
        same_frame(&format!("{name}: cut frame {k}"), g, &want, 0, min_psnr);
    }

    // A truncation at 50% of a span: the frames before the decision point, ending exactly
    // there.
    let trunc = work.path().join("trunc.mp4");
    vidprep()
        .arg("cut")
        .arg(&path)
        .args(["--start", "10", "--end", &(ff_count - 5).to_string()])
        .args([
            "--decision",
            "50%",
            "--crf",
            "0",
            "--preset",
            "ultrafast",
            "-o",
        ])
        .arg(&trunc)
        .assert()
        .success();
    let sc = json(&trunc.with_extension("json"));
    let kept = &sc["resolved"]["kept"];
    let (ks, ke) = (
        kept["start"].as_u64().unwrap() as usize,
        kept["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(named_frames(&sc), (ks..ke).collect::<Vec<_>>(), "{name}");
    let got = ffmpeg_frames(&trunc, None, PixFmt::Yuv420p);
    assert_eq!(got.len(), ke - ks, "{name}: frames in the truncation");
    for (k, g) in got.iter().enumerate() {
        let want = vec![crop(&source[ks + k], g.width, g.height)];
        same_frame(
            &format!("{name}: truncated frame {k}"),
            g,
            &want,
            0,
            min_psnr,
        );
    }
    let ff_duration = oracle::presented_duration(&trunc);
    let ours = sc["output"]["duration_s"].as_f64().unwrap();
    assert!(
        (ff_duration - ours).abs() <= 0.001,
        "{name}: ffprobe says {ff_duration} s, the sidecar {ours} s"
    );

    // The same truncation, smart: whole GOPs copied where the format allows it, the rest
    // re-encoded (or everything, with the reason in the sidecar); the same frames either way,
    // copied ones bit-identical to ffmpeg's decode of the source.
    let smart = work.path().join("smart.mp4");
    vidprep()
        .arg("cut")
        .arg(&path)
        .args(["--start", "10", "--end", &(ff_count - 5).to_string()])
        .args(["--decision", "50%", "--crf", "10", "--preset", "ultrafast"])
        .args(["--smart", "--verify", "-o"])
        .arg(&smart)
        .assert()
        .success();
    let sc = json(&smart.with_extension("json"));
    assert_eq!(
        named_frames(&sc),
        (ks..ke).collect::<Vec<_>>(),
        "{name}: smart"
    );
    let copied: Vec<usize> = sc["smart"]["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["how"] == "copied")
        .flat_map(|p| {
            p["output_frames"][0].as_u64().unwrap() as usize
                ..p["output_frames"][1].as_u64().unwrap() as usize
        })
        .collect();
    eprintln!(
        "{name}: smart {}",
        if copied.is_empty() {
            format!("fully encoded: {}", sc["smart"]["fallback"])
        } else {
            format!("copied {} of {} frames", copied.len(), ke - ks)
        }
    );
    let got = ffmpeg_frames(&smart, None, PixFmt::Yuv420p);
    assert_eq!(got.len(), ke - ks, "{name}: frames in the smart truncation");
    for (k, g) in got.iter().enumerate() {
        let want = crop(&source[ks + k], g.width, g.height);
        if copied.contains(&k) {
            assert_eq!(
                g.md5(),
                want.md5(),
                "{name}: copied frame {k} is bit-identical"
            );
        } else {
            same_frame(
                &format!("{name}: smart frame {k}"),
                g,
                &[want],
                0,
                if damaged { 30.0 } else { 40.0 },
            );
        }
    }
}

fn check_shard(shard: usize) {
    let (dir, names) = matrix();
    let mut failures = Vec::new();
    for name in names.iter().skip(shard).step_by(4) {
        let result = std::panic::catch_unwind(|| check_variant(dir, name));
        if let Err(e) = result {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{name}: {msg}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn format_matrix_part_1() {
    check_shard(0);
}

#[test]
fn format_matrix_part_2() {
    check_shard(1);
}

#[test]
fn format_matrix_part_3() {
    check_shard(2);
}

#[test]
fn format_matrix_part_4() {
    check_shard(3);
}
