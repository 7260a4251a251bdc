//! #52 item 1: a full-range source (`yuvj420p`, or `yuv420p` tagged `color_range pc`: webcam,
//! phone and MJPEG-derived footage) gives ffmpeg's RGB to the bit. Before, vidprep squeezed
//! full range into its limited-range 4:2:0 pipeline and made RGB from that: up to 57% of
//! values off by up to 3 (48 dB) from `ffmpeg -pix_fmt rgb24` on H.264, MPEG-4 ASP, VP9 and
//! MJPEG, while limited-range sources were byte-equal. Frames are now converted from the
//! decoder's own picture, as the ffmpeg CLI converts; a JPEG export of a full-range 4:2:0
//! source keeps its levels (ffmpeg encodes the picture as it is), and an encoded clip still
//! converts to limited range and says so (`tv`). The oracle is the ffmpeg CLI: its rgb24 of
//! each frame (the range said outright, `in_range=pc`, as FFmpeg 4.3's scale filter needs for
//! a tagged `yuv420p`), and ffprobe's reading of each source (so that each case is full range
//! as it claims).

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::cmd::{self, p};
use common::oracle::{self, Frame, PixFmt};
use serde_json::Value;
use support::vidprep;

/// Writes a 12-frame testsrc2 video of `size` with `encode` (codec and range options).
fn source(dir: &Path, name: &str, size: &str, encode: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut args: Vec<String> = [
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        &format!("testsrc2=size={size}:rate=25"),
        "-frames:v",
        "12",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(encode.iter().map(|s| s.to_string()));
    args.push(p(&path));
    cmd::ffmpeg(&args).unwrap();
    path
}

/// The full-range sources: H.264 as `yuvj420p` (with B-frames) and as `yuv420p` tagged full
/// range, MPEG-4 ASP in MP4 and MKV (B-frames), VP9, MJPEG in AVI, and an odd size.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let x264 = |pix: &'static str| {
        vec![
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-bf",
            "2",
            "-pix_fmt",
            pix,
            "-color_range",
            "pc",
        ]
    };
    let mpeg4 = vec![
        "-c:v",
        "mpeg4",
        "-q:v",
        "4",
        "-bf",
        "2",
        "-pix_fmt",
        "yuv420p",
        "-color_range",
        "pc",
        "-colorspace",
        "bt470bg",
        // (MP4 says the range in its `colr` box only when asked; MOV's `nclc` cannot say it.)
        "-movflags",
        "+write_colr",
    ];
    vec![
        source(dir, "h264_yuvj420p.mp4", "96x64", &x264("yuvj420p")),
        source(dir, "h264_tagged.mkv", "96x64", &x264("yuv420p")),
        source(dir, "mpeg4_asp.mp4", "96x64", &mpeg4),
        source(dir, "mpeg4_asp.mkv", "96x64", &mpeg4),
        source(
            dir,
            "vp9.webm",
            "96x64",
            &[
                "-c:v",
                "libvpx-vp9",
                "-b:v",
                "0",
                "-crf",
                "30",
                "-pix_fmt",
                "yuv420p",
                "-color_range",
                "pc",
            ],
        ),
        source(
            dir,
            "mjpeg.avi",
            "96x64",
            &["-c:v", "mjpeg", "-q:v", "3", "-pix_fmt", "yuvj420p"],
        ),
        source(dir, "h264_odd.mp4", "97x65", &x264("yuvj420p")),
    ]
}

/// Frame `index` of `path` as `ffmpeg -pix_fmt rgb24` gives it, the source's full range said
/// outright.
fn ffmpeg_rgb_at(path: &Path, index: usize) -> Frame {
    let out = cmd::ffmpeg(&[
        "-v",
        "error",
        "-i",
        &p(path),
        "-vf",
        &format!("select=eq(n\\,{index}),scale=in_range=pc,format=rgb24"),
        "-frames:v",
        "1",
        "-f",
        "rawvideo",
        "-",
    ])
    .unwrap();
    let (w, h) = oracle::dimensions(path);
    Frame {
        width: w as usize,
        height: h as usize,
        pix_fmt: PixFmt::Rgb24,
        data: out.stdout,
    }
}

/// The share of values that differ and the largest difference.
fn difference(a: &Frame, b: &Frame) -> (f64, u8) {
    let differing = a.data.iter().zip(&b.data).filter(|(x, y)| x != y).count();
    let worst = a
        .data
        .iter()
        .zip(&b.data)
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0);
    (differing as f64 / a.data.len().max(1) as f64, worst)
}

fn frames_json(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("frames.json")).unwrap()).unwrap()
}

/// PNG frames (every one, and a sampled few) are ffmpeg's rgb24 of the same frames, bit for
/// bit, for each full-range source; and for a limited-range control as before.
#[test]
fn full_range_frames_are_ffmpegs_rgb_to_the_bit() {
    let dir = tempfile::tempdir().unwrap();
    for src in sources(dir.path()) {
        assert!(
            oracle::source_is_full_range(&src),
            "{}: ffprobe does not read it as full range",
            src.display()
        );
        let out = dir.path().join(format!(
            "{}-png",
            src.file_name().unwrap().to_string_lossy()
        ));
        vidprep()
            .args(["export", "frames"])
            .arg(&src)
            .args(["--count", "4", "--format", "png", "--out-dir"])
            .arg(&out)
            .assert()
            .success();
        let frames = frames_json(&out);
        for f in frames["frames"].as_array().unwrap() {
            let i = f["source_frame"].as_u64().unwrap() as usize;
            let got = oracle::decode_image(&out.join(f["file"].as_str().unwrap()), PixFmt::Rgb24);
            let want = ffmpeg_rgb_at(&src, i);
            let (share, worst) = difference(&got, &want);
            assert!(
                got.data == want.data,
                "{} frame {i}: {:.0}% of values differ from ffmpeg's rgb24, by up to {worst}",
                src.display(),
                share * 100.0
            );
        }
    }
}

/// A JPEG export of a full-range 4:2:0 source is encoded from the source's own levels, as
/// `ffmpeg -i SRC -q:v 3 frame.jpg` encodes it: decoded, the two JPEGs hold the same pixels.
/// Before, the pipeline's limited-range picture was stretched back to full range first.
#[test]
fn full_range_jpegs_keep_the_sources_levels() {
    let dir = tempfile::tempdir().unwrap();
    let src = source(
        dir.path(),
        "h264_yuvj420p.mp4",
        "96x64",
        &[
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuvj420p",
        ],
    );
    let out = dir.path().join("jpg");
    vidprep()
        .args(["export", "frames"])
        .arg(&src)
        .args([
            "--frames",
            "5",
            "--format",
            "jpg",
            "--quality",
            "90",
            "--out-dir",
        ])
        .arg(&out)
        .assert()
        .success();
    let frames = frames_json(&out);
    let file = frames["frames"][0]["file"].as_str().unwrap().to_string();
    let theirs = dir.path().join("ffmpeg.jpg");
    cmd::ffmpeg(&[
        "-v",
        "error",
        "-i",
        &p(&src),
        "-vf",
        "select=eq(n\\,5)",
        "-frames:v",
        "1",
        "-q:v",
        "3",
        &p(&theirs),
    ])
    .unwrap();
    let got = oracle::decode_image(&out.join(&file), PixFmt::Rgb24);
    let want = oracle::decode_image(&theirs, PixFmt::Rgb24);
    let (share, worst) = difference(&got, &want);
    assert!(
        got.data == want.data,
        "frame 5's JPEG: {:.0}% of values differ from ffmpeg's JPEG, by up to {worst} ({:.1} dB)",
        share * 100.0,
        oracle::psnr(&got, &want)
    );
}

/// An encoded clip of a full-range source converts it to limited range and says so: ffprobe
/// reads `tv` in the file and the sidecar says the same, and the clip's frames are ffmpeg's
/// limited-range 4:2:0 of the source's (a lossless cut, bit for bit).
#[test]
fn an_encoded_clip_of_a_full_range_source_says_limited_range() {
    let dir = tempfile::tempdir().unwrap();
    let src = sources(dir.path()).remove(0);
    let out = dir.path().join("cut.mp4");
    vidprep()
        .arg("cut")
        .arg(&src)
        .args([
            "--start",
            "2",
            "--end",
            "8",
            "--crf",
            "0",
            "--preset",
            "ultrafast",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    // H.264 says limited range by saying nothing (x264 writes the VUI's signal type only for
    // full range or a colour description); a reader takes it as limited either way.
    let stream = oracle::video_stream(&out);
    assert!(
        stream["color_range"].is_null() || stream["color_range"] == "tv",
        "{stream}"
    );
    assert_eq!(stream["pix_fmt"], "yuv420p", "{stream}");
    let sidecar = support::sidecar(&out);
    assert_eq!(sidecar["output"]["colour"]["range"], "tv", "{sidecar}");
    // (The oracle's yuv420p decode brings a full-range source to limited range.)
    let theirs = oracle::framemd5(&src, &oracle::DecodeOpts::new(PixFmt::Yuv420p));
    let ours = oracle::framemd5(&out, &oracle::DecodeOpts::new(PixFmt::Yuv420p));
    assert_eq!(ours, theirs[2..8].to_vec());
}
