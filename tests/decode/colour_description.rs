//! A source's colour description (its YCbCr matrix and range) reaches swscale as the ffmpeg
//! CLI's scale filter passes it: a BT.709-tagged H.264 exports the same RGB pixels as
//! `ffmpeg -vf scale=out_range=tv,format=yuv420p,format=rgb24` (vidprep's 4:2:0 pipeline, as
//! ffmpeg converts), a full-range VP9 (`yuv420p` tagged full range, not `yuvj420p`) and a
//! full-range MJPEG the same as `ffmpeg -pix_fmt rgb24` (their own pictures, #52 item 1:
//! `oracle::to_export_rgb`), and a lossless cut holds ffmpeg's limited-range 4:2:0 of each
//! frame, bit for bit. Before, swscale assumed BT.601 and, for `yuv*` formats, limited range
//! (29 dB and 26 dB against ffmpeg).

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::cmd::{self, p};
use common::oracle::{self, DecodeOpts, PixFmt};
use serde_json::Value;
use support::vidprep;

/// Writes a 10-frame 96x64 testsrc2 video with `encode` (codec and colour options).
fn source(dir: &Path, name: &str, encode: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut args: Vec<String> = [
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=96x64:rate=10",
        "-frames:v",
        "10",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(encode.iter().map(|s| s.to_string()));
    args.push(p(&path));
    cmd::ffmpeg(&args).unwrap();
    path
}

/// The sources, with what ffprobe must say of their first decoded frame (so that each case
/// tests what it claims to).
fn sources(dir: &Path) -> Vec<(PathBuf, &'static str, &'static str)> {
    vec![
        (
            source(
                dir,
                "bt709.mp4",
                &[
                    "-c:v",
                    "libx264",
                    "-preset",
                    "ultrafast",
                    "-pix_fmt",
                    "yuv420p",
                    "-colorspace",
                    "bt709",
                    "-color_primaries",
                    "bt709",
                    "-color_trc",
                    "bt709",
                ],
            ),
            "color_space=bt709",
            "color_range=tv",
        ),
        (
            source(
                dir,
                "full.webm",
                &[
                    "-c:v",
                    "libvpx-vp9",
                    "-b:v",
                    "0",
                    "-crf",
                    "20",
                    "-pix_fmt",
                    "yuv420p",
                    "-color_range",
                    "pc",
                ],
            ),
            "pix_fmt=yuv420p",
            "color_range=pc",
        ),
        (
            source(
                dir,
                "mjpeg.avi",
                &["-c:v", "mjpeg", "-q:v", "3", "-pix_fmt", "yuvj420p"],
            ),
            "pix_fmt=yuvj420p",
            "color_range=pc",
        ),
    ]
}

fn first_frame_description(path: &Path) -> String {
    let out = cmd::ffprobe(&[
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-read_intervals",
        "%+#1",
        "-show_entries",
        "frame=pix_fmt,color_range,color_space",
        "-of",
        "compact",
        &p(path),
    ])
    .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn exported_pixels_follow_the_sources_matrix_and_range() {
    let dir = tempfile::tempdir().unwrap();
    for (src, a, b) in sources(dir.path()) {
        let desc = first_frame_description(&src);
        assert!(
            desc.contains(a) && desc.contains(b),
            "{}: {desc}",
            src.display()
        );
        let out = dir.path().join(format!(
            "{}-frames",
            src.file_stem().unwrap().to_string_lossy()
        ));
        vidprep()
            .args(["export", "frames"])
            .arg(&src)
            .args(["--count", "3", "--format", "png", "--out-dir"])
            .arg(&out)
            .assert()
            .success();
        let frames: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("frames.json")).unwrap())
                .unwrap();
        for f in frames["frames"].as_array().unwrap() {
            let i = f["source_frame"].as_u64().unwrap();
            let got = oracle::decode_image(&out.join(f["file"].as_str().unwrap()), PixFmt::Rgb24);
            let want = oracle::pipeline_rgb_at(&src, i as usize);
            assert!(
                got.data == want.data,
                "{} frame {i}: exported pixels differ from ffmpeg's ({:.1} dB)",
                src.display(),
                oracle::psnr(&got, &want)
            );
        }
    }
}

#[test]
fn a_lossless_cut_holds_ffmpegs_limited_range_frames() {
    let dir = tempfile::tempdir().unwrap();
    for (src, ..) in sources(dir.path()) {
        let out = dir.path().join(format!(
            "{}-cut.mp4",
            src.file_stem().unwrap().to_string_lossy()
        ));
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
        let want = oracle::framemd5(&src, &DecodeOpts::new(PixFmt::Yuv420p));
        let got = oracle::framemd5(&out, &DecodeOpts::new(PixFmt::Yuv420p));
        assert_eq!(got, want[2..8].to_vec(), "{}", src.display());
    }
}

/// The colour description ffprobe reads from a file's video stream: matrix, primaries,
/// transfer and range.
fn stream_description(path: &Path) -> [String; 4] {
    let out = cmd::ffprobe(&[
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-show_entries",
        "stream=color_space,color_primaries,color_transfer,color_range",
        "-of",
        "json",
        &p(path),
    ])
    .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["streams"][0];
    let get = |k: &str| s[k].as_str().unwrap_or("unknown").to_string();
    [
        get("color_space"),
        get("color_primaries"),
        get("color_transfer"),
        get("color_range"),
    ]
}

/// #52 item 8: a re-encoded output carries its source's matrix, primaries and transfer (and
/// says its range), whichever path makes it: a plain cut, a lossless cut, `export video`,
/// `cut --smart`; its sidecar says the same. Before, a plain cut and `export video` wrote
/// none, and every reader took a BT.709, DNxHR or PQ clip for BT.601 (RGB 9 levels off on
/// BT.709). The oracle is ffprobe's reading of the stream and ffmpeg's RGB of both files.
#[test]
fn encoded_outputs_carry_the_sources_colour_description() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bt709 = [
        "-colorspace",
        "bt709",
        "-color_primaries",
        "bt709",
        "-color_trc",
        "bt709",
    ];
    let make = |name: &str, codec: &[&str], tags: &[&str]| {
        let mut a: Vec<&str> = codec.to_vec();
        a.extend_from_slice(tags);
        source(d, name, &a)
    };
    let cases = [
        make(
            "bt709.mp4",
            &[
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-pix_fmt",
                "yuv420p",
            ],
            &bt709,
        ),
        make(
            "pq.mkv",
            &[
                "-c:v",
                "libx265",
                "-preset",
                "ultrafast",
                "-x265-params",
                "log-level=error",
                "-pix_fmt",
                "yuv420p10le",
            ],
            &[
                "-colorspace",
                "bt2020nc",
                "-color_primaries",
                "bt2020",
                "-color_trc",
                "smpte2084",
            ],
        ),
        make(
            "dnxhr.mov",
            &[
                // (DNxHR takes 256x120 and larger.)
                "-vf",
                "scale=256:144",
                "-c:v",
                "dnxhd",
                "-profile:v",
                "dnxhr_hq",
                "-pix_fmt",
                "yuv422p",
            ],
            &bt709,
        ),
    ];
    for src in &cases {
        let name = src.file_name().unwrap().to_string_lossy().into_owned();
        let want = stream_description(src);
        assert_ne!(want[0], "unknown", "{name}: the source says its matrix");
        let outputs: Vec<(&str, Vec<String>)> = vec![
            (
                "cut",
                vec!["cut".into(), p(src), "--end".into(), "6".into()],
            ),
            (
                "lossless cut",
                vec![
                    "cut".into(),
                    p(src),
                    "--end".into(),
                    "6".into(),
                    "--crf".into(),
                    "0".into(),
                ],
            ),
            (
                "export video",
                vec!["export".into(), "video".into(), p(src)],
            ),
            (
                "smart cut",
                vec![
                    "cut".into(),
                    p(src),
                    "--end".into(),
                    "6".into(),
                    "--smart".into(),
                ],
            ),
        ];
        for (what, args) in outputs {
            let out = d.join(format!("{name}.{}.mp4", what.replace(' ', "_")));
            vidprep()
                .args(&args)
                .args(["--preset", "ultrafast", "-o"])
                .arg(&out)
                .assert()
                .success();
            let got = stream_description(&out);
            assert_eq!(
                got[..3],
                want[..3],
                "{name} {what}: matrix, primaries, transfer"
            );
            assert_eq!(
                got[3], "tv",
                "{name} {what}: vidprep's 4:2:0 is limited range"
            );
            let sidecar: Value =
                serde_json::from_str(&std::fs::read_to_string(out.with_extension("json")).unwrap())
                    .unwrap();
            // The sidecar says what ffprobe reads from the file ("unknown": nothing said).
            let colour = &sidecar["output"]["colour"];
            let said = |k: &str| colour[k].as_str().unwrap_or("unknown").to_string();
            assert_eq!(
                [
                    said("matrix"),
                    said("primaries"),
                    said("transfer"),
                    said("range")
                ],
                got,
                "{name} {what}: {colour}"
            );
            if what == "lossless cut" {
                // Read with its tags, the clip's RGB is the source's through vidprep's 4:2:0
                // (ffmpeg's conversion, read with the source's matrix): a few levels at most.
                for i in [0usize, 3, 5] {
                    let a = oracle::pipeline_rgb_at(src, i);
                    let b = oracle::decode_frame_at(&out, i as u64, PixFmt::Rgb24);
                    let worst = a
                        .data
                        .iter()
                        .zip(&b.data)
                        .map(|(x, y)| x.abs_diff(*y))
                        .max()
                        .unwrap();
                    assert!(worst <= 3, "{name} frame {i}: RGB {worst} levels off");
                }
            }
        }
    }
}
