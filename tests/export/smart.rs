//! Smart encoding (`--smart`): whole GOPs copied, the edges (and a needle) re-encoded, one
//! H.264 stream. Every output is checked against independent oracles, not against vidprep:
//!
//! - the ffmpeg CLI decodes it without a complaint, ffprobe counts its frames and shows
//!   decoding timestamps that increase and never pass the presentation timestamps;
//! - every output frame carries the frame code of the source frame it must be;
//! - frames the sidecar calls copied are bit-identical (ffmpeg's framemd5) to ffmpeg's
//!   decode of those source frames, re-encoded ones at least 40 dB PSNR;
//! - seeking with `ffmpeg -ss` lands on the right frame, in copied and re-encoded parts;
//! - Chromium plays it and shows the right frame after seeks (when a browser is present);
//! - and vidprep's own `--verify` agrees.
//!
//! Where smart encoding cannot apply the clip is fully encoded and the sidecar says why.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::cmd::{ffmpeg, ffprobe, p};
use common::code::read_code;
use common::oracle::{self, DecodeOpts, PixFmt};
use common::synth::{Codec, SynthVideo};
use serde_json::Value;
use support::{sidecar, vidprep};

/// A 320x240 25 fps H.264 source with B-frames (x264 medium: B-pyramid, CABAC, High), a
/// keyframe every 25 frames, AAC audio, the frame index painted in.
fn source(frames: u32) -> PathBuf {
    let mut v = SynthVideo::new(320, 240)
        .frames(frames)
        .gop(25)
        .bframes(3)
        .audio_tone(440.0);
    v.preset = "medium".into();
    v.cached().path
}

/// A part as the sidecar lists it: how, output frames, source frames (copied parts).
type PartRow = (String, (u64, u64), Option<(u64, u64)>);

/// The output's parts as the sidecar lists them.
fn parts(out: &Path) -> Vec<PartRow> {
    let s = sidecar(out);
    assert_eq!(
        s["smart"]["applied"], true,
        "smart did not apply: {}",
        s["smart"]
    );
    s["smart"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let pair = |v: &Value| (v[0].as_u64().unwrap(), v[1].as_u64().unwrap());
            (
                p["how"].as_str().unwrap().to_string(),
                pair(&p["output_frames"]),
                p.get("source_frames").map(pair),
            )
        })
        .collect()
}

/// Packet timestamps of the video stream (pts, dts) in decoding order, from ffprobe.
fn packet_times(path: &Path) -> Vec<(f64, f64)> {
    let out = ffprobe(&[
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-show_entries",
        "packet=pts_time,dts_time",
        "-of",
        "csv=p=0",
        &p(path),
    ])
    .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut it = l.split(',');
            let pts = it.next().unwrap().parse().unwrap();
            let dts = it.next().unwrap().parse().unwrap();
            (pts, dts)
        })
        .collect()
}

/// The code of the frame `ffmpeg -ss T -i PATH` shows first.
fn code_after_seek(path: &Path, t: f64) -> Option<u32> {
    let (w, h) = oracle::dimensions(path);
    let out = ffmpeg(&[
        "-v",
        "error",
        "-ss",
        &format!("{t:.6}"),
        "-i",
        &p(path),
        "-frames:v",
        "1",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "gray",
        "-",
    ])
    .unwrap();
    read_code(&out.stdout, w as usize, h as usize, w as usize)
}

/// Checks a smart output against the ffmpeg CLI: it decodes cleanly, holds exactly
/// `expected` (source frame codes, in order), its timestamps are sane, its copied frames are
/// bit-identical to the source's and its re-encoded ones at least 40 dB, and `-ss` seeks
/// land right.
fn check_smart_output(out: &Path, src: &Path, expected: &[u32]) {
    let check = oracle::decode_check(out);
    assert!(
        check.is_clean(),
        "{}: {:?}",
        check.command,
        check.error_lines
    );
    assert_eq!(
        oracle::count_frames(out),
        expected.len() as u64,
        "frame count"
    );
    assert_eq!(
        oracle::frame_codes(out),
        expected,
        "every frame is the right source frame"
    );
    let times = packet_times(out);
    assert_eq!(times.len(), expected.len());
    for w in times.windows(2) {
        assert!(w[1].1 > w[0].1, "decoding times increase: {times:?}");
    }
    assert!(
        times.iter().all(|(pts, dts)| dts <= pts),
        "dts <= pts: {times:?}"
    );
    // Copied frames: ffmpeg's decode of the output equals its decode of the source.
    let opts = DecodeOpts::new(PixFmt::Yuv420p);
    let out_md5 = oracle::framemd5(out, &opts);
    let src_md5 = oracle::framemd5(src, &opts);
    let out_frames = oracle::decode_frames(out, PixFmt::Yuv420p, None);
    let src_frames = oracle::decode_frames(src, PixFmt::Yuv420p, None);
    for (how, (o1, o2), _) in parts(out) {
        for o in o1..o2 {
            let s = expected[o as usize] as usize;
            if how == "copied" {
                assert_eq!(
                    out_md5[o as usize], src_md5[s],
                    "copied output frame {o} (source {s}) is bit-identical"
                );
            } else {
                let psnr = oracle::psnr(&out_frames[o as usize], &src_frames[s]);
                assert!(psnr >= 40.0, "re-encoded output frame {o}: {psnr:.1} dB");
            }
        }
    }
    // Seeks (`-ss` before the input shows the first frame at or after the time): the first
    // frames, the middle, the last ones.
    let mut sorted: Vec<f64> = times.iter().map(|t| t.0).collect();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = sorted.len();
    for o in [0, 1, n / 3, n / 2, n - 2, n - 1] {
        let t = if o == 0 {
            0.0
        } else {
            sorted[o] - 0.3 * (sorted[o] - sorted[o - 1])
        };
        assert_eq!(
            code_after_seek(out, t),
            Some(expected[o]),
            "ffmpeg -ss {t:.3} shows output frame {o}"
        );
    }
    // vidprep's own verification ran and agrees.
    let v = &sidecar(out)["smart"]["verify"];
    assert_eq!(v["frames"], expected.len(), "{v}");
}

#[test]
fn a_smart_cut_copies_whole_gops_and_reencodes_the_partial_ones() {
    let dir = tempfile::tempdir().unwrap();
    let src = source(150);
    let out = dir.path().join("cut.mp4");
    vidprep()
        .args([
            "cut",
            &p(&src),
            "--start",
            "13",
            "--end",
            "112",
            "--smart",
            "--verify",
            "-o",
            &p(&out),
        ])
        .assert()
        .success();
    assert_eq!(
        parts(&out),
        vec![
            ("encoded".to_string(), (0, 12), None),
            ("copied".into(), (12, 87), Some((25, 100))),
            ("encoded".into(), (87, 99), None),
        ]
    );
    check_smart_output(&out, &src, &(13..112).collect::<Vec<u32>>());
    // #52: the worst re-encoded frame's luma PSNR, beside the pooled figure, as ffmpeg's
    // decodes of the output and of the source give it.
    let v = &sidecar(&out)["smart"]["verify"];
    let got = oracle::decode_frames(&out, oracle::PixFmt::Yuv420p, None);
    let want = oracle::decode_frames(&src, oracle::PixFmt::Yuv420p, None);
    let luma = |a: &oracle::Frame, b: &oracle::Frame| {
        let n = a.width * a.height;
        let sse: u64 = a.data[..n]
            .iter()
            .zip(&b.data[..n])
            .map(|(x, y)| (*x as i64 - *y as i64).pow(2) as u64)
            .sum();
        10.0 * (255.0f64 * 255.0 / (sse as f64 / n as f64)).log10()
    };
    let (worst, frame) = (0..12)
        .chain(87..99)
        .map(|o| (luma(&got[o], &want[o + 13]), o))
        .filter(|(p, _)| p.is_finite())
        .fold((f64::INFINITY, 0), |m, x| if x.0 < m.0 { x } else { m });
    assert_eq!(v["encoded_worst_luma_frame"], frame, "{v}");
    let reported = v["encoded_min_luma_psnr_db"].as_f64().unwrap();
    assert!(
        (reported - worst).abs() < 0.01,
        "{reported} reported, {worst} by ffmpeg's decodes"
    );
    // The audio is cut exactly as a full encode cuts it.
    let full = dir.path().join("full.mp4");
    vidprep()
        .args([
            "cut",
            &p(&src),
            "--start",
            "13",
            "--end",
            "112",
            "-o",
            &p(&full),
        ])
        .assert()
        .success();
    let audio = |f: &Path| {
        let probe = oracle::probe(f);
        oracle::stream(&probe, "audio")
            .map(|s| (s["duration_ts"].clone(), s["sample_rate"].clone()))
    };
    assert!(audio(&out).is_some());
    assert_eq!(
        audio(&out),
        audio(&full),
        "the same audio samples as a full encode"
    );
}

#[test]
fn a_smart_truncation_shows_nothing_at_or_after_the_decision_point() {
    let dir = tempfile::tempdir().unwrap();
    let src = source(150);
    let out = dir.path().join("trunc.mp4");
    vidprep()
        .args([
            "cut",
            &p(&src),
            "--start",
            "0",
            "--end",
            "150",
            "--decision",
            "90",
            "--smart",
            "--verify",
            "-o",
            &p(&out),
        ])
        .assert()
        .success();
    assert_eq!(
        parts(&out),
        vec![
            ("copied".to_string(), (0, 75), Some((0, 75))),
            ("encoded".into(), (75, 90), None),
        ]
    );
    check_smart_output(&out, &src, &(0..90).collect::<Vec<u32>>());
    // truncate --smart on a clip: the same rule.
    let t2 = dir.path().join("t2.mp4");
    vidprep()
        .args([
            "truncate",
            &p(&src),
            "--at",
            "60%",
            "--smart",
            "--verify",
            "-o",
            &p(&t2),
        ])
        .assert()
        .success();
    check_smart_output(&t2, &src, &(0..90).collect::<Vec<u32>>());
}

#[test]
fn a_smart_insertion_copies_the_host_around_the_needle() {
    let dir = tempfile::tempdir().unwrap();
    let host = source(200);
    let needle = crate::repo_root().join("fixtures/example/needle");
    let out = dir.path().join("ins.mp4");
    vidprep()
        .args([
            "insert",
            "--host",
            &p(&host),
            "--sequence",
            &p(&needle),
            "--at",
            "60",
            "--smart",
            "--verify",
            "-o",
            &p(&out),
        ])
        .assert()
        .success();
    let s = sidecar(&out);
    let (at, end) = (
        s["resolved"]["insert"]["needle_start"].as_u64().unwrap(),
        s["resolved"]["insert"]["needle_end"].as_u64().unwrap(),
    );
    assert_eq!(at, 60);
    let k = end - at;
    assert_eq!(
        parts(&out),
        vec![
            ("copied".to_string(), (0, 50), Some((0, 50))),
            ("encoded".into(), (50, 75 + k), None),
            ("copied".into(), (75 + k, 200 + k), Some((75, 200))),
        ]
    );
    // Host frames keep their codes around the needle; the needle's frames carry none.
    let codes = oracle::frame_codes_opts(&out, &DecodeOpts::new(PixFmt::Gray));
    assert_eq!(codes.len() as u64, 200 + k);
    for (o, c) in codes.iter().enumerate() {
        let o = o as u64;
        if o < at {
            assert_eq!(*c, Some(o as u32));
        } else if o >= end {
            assert_eq!(*c, Some((o - k) as u32));
        }
    }
    let check = oracle::decode_check(&out);
    assert!(check.is_clean(), "{:?}", check.error_lines);
    // The same annotations as a full encode of the same insertion.
    let full = dir.path().join("full.mp4");
    vidprep()
        .args([
            "insert",
            "--host",
            &p(&host),
            "--sequence",
            &p(&needle),
            "--at",
            "60",
            "-o",
            &p(&full),
        ])
        .assert()
        .success();
    let vstar = |f: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(f.with_extension("vstar.json")).unwrap())
            .unwrap()
    };
    let (a, b) = (vstar(&out), vstar(&full));
    assert_eq!(a[0]["bboxes"], b[0]["bboxes"], "the needle's boxes");
    assert_eq!(a[0]["temporal_span"], b[0]["temporal_span"]);
    assert_eq!(s["smart"]["verify"]["frames"], 200 + k);
}

/// The avcC record of an MP4: (profile, level, SPS count, PPS count).
fn avcc(path: &Path) -> (u8, u8, usize, usize) {
    let bytes = std::fs::read(path).unwrap();
    let at = bytes
        .windows(4)
        .position(|w| w == b"avcC")
        .expect("an avcC box")
        + 4;
    let d = &bytes[at..];
    let nsps = (d[5] & 0x1f) as usize;
    let mut i = 6;
    for _ in 0..nsps {
        i += 2 + u16::from_be_bytes([d[i], d[i + 1]]) as usize;
    }
    (d[1], d[3], nsps, d[i] as usize)
}

#[test]
fn re_encoded_parts_follow_the_source_parameters() {
    // Main profile, level 3.1, SAR 4:3, BT.709 tags: a camera-like source.
    let dir = tempfile::tempdir().unwrap();
    let base = source(100);
    let src = dir.path().join("cam.mp4");
    ffmpeg(&[
        "-v",
        "error",
        "-i",
        &p(&base),
        "-c:v",
        "libx264",
        "-preset",
        "fast",
        "-profile:v",
        "main",
        "-level",
        "3.1",
        "-x264-params",
        "keyint=25:min-keyint=25:scenecut=0",
        "-vf",
        "setsar=4/3",
        "-color_primaries",
        "bt709",
        "-color_trc",
        "bt709",
        "-colorspace",
        "bt709",
        "-c:a",
        "copy",
        &p(&src),
    ])
    .unwrap();
    let out = dir.path().join("cut.mp4");
    vidprep()
        .args([
            "cut",
            &p(&src),
            "--start",
            "10",
            "--end",
            "90",
            "--smart",
            "--verify",
            "-o",
            &p(&out),
        ])
        .assert()
        .success();
    check_smart_output(&out, &src, &(10..90).collect::<Vec<u32>>());
    let s = oracle::video_stream(&out);
    let want = oracle::video_stream(&src);
    for key in [
        "profile",
        "sample_aspect_ratio",
        "color_primaries",
        "color_transfer",
        "color_space",
        "pix_fmt",
        "width",
        "height",
    ] {
        assert_eq!(s[key], want[key], "{key}");
    }
    let (profile, level, nsps, npps) = avcc(&out);
    assert_eq!(
        (profile, level),
        (77, 31),
        "Main profile, level 3.1 in the sample entry"
    );
    assert_eq!(
        (nsps, npps),
        (2, 2),
        "the source's and the re-encoded parts' parameter sets"
    );
}

#[test]
fn where_smart_cannot_apply_the_clip_is_fully_encoded_and_the_sidecar_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let mpeg4 = SynthVideo::new(320, 240)
        .frames(60)
        .gop(25)
        .codec(Codec::Mpeg4)
        .cached()
        .path;
    let h264 = source(100);
    let rotated = SynthVideo::new(320, 240)
        .frames(60)
        .gop(25)
        .rotation(90)
        .cached()
        .path;
    let images = crate::repo_root().join("fixtures/example/needle");
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "rotated",
            vec![
                "cut".into(),
                p(&rotated),
                "--start".into(),
                "5".into(),
                "--end".into(),
                "55".into(),
            ],
            "rotated",
        ),
        (
            "images",
            vec![
                "cut".into(),
                p(&images),
                "--start".into(),
                "2".into(),
                "--end".into(),
                "18".into(),
            ],
            "image sequence",
        ),
        (
            "mpeg4",
            vec![
                "cut".into(),
                p(&mpeg4),
                "--start".into(),
                "5".into(),
                "--end".into(),
                "55".into(),
            ],
            "H.264 only",
        ),
        (
            "short",
            vec![
                "cut".into(),
                p(&h264),
                "--start".into(),
                "30".into(),
                "--end".into(),
                "45".into(),
            ],
            "no whole GOP",
        ),
    ];
    for (name, args, why) in cases {
        let out = dir.path().join(format!("{name}.mp4"));
        let assert = vidprep()
            .args(&args)
            .args(["--smart", "--verify", "-o", &p(&out)])
            .assert()
            .success();
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
        assert!(stderr.contains(why), "{name}: {stderr}");
        let s = sidecar(&out);
        assert_eq!(s["smart"]["applied"], false, "{name}");
        assert!(
            s["smart"]["fallback"].as_str().unwrap().contains(why),
            "{name}: {}",
            s["smart"]
        );
        // Verified all the same: every frame re-encoded, each at least 40 dB.
        assert_eq!(
            s["smart"]["verify"]["encoded"], s["output"]["frames"],
            "{name}"
        );
        assert_eq!(s["smart"]["verify"]["copied_identical"], 0);
    }
}

#[test]
fn smart_clips_through_a_manifest_match_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(source(150), d.join("src.mp4")).unwrap();
    vidprep()
        .current_dir(d)
        .args([
            "cut",
            "src.mp4",
            "--start",
            "13",
            "--end",
            "112",
            "--smart",
            "-o",
            "cli/clip.mp4",
        ])
        .assert()
        .success();
    std::fs::write(
        d.join("m.jsonl"),
        r#"{"id": "a", "source": "src.mp4", "start": 13, "end": 112, "exports": [{"kind": "clip", "smart": true}]}"#,
    )
    .unwrap();
    vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "run"])
        .assert()
        .success();
    let md5 = |f: &Path| oracle::framemd5(f, &DecodeOpts::new(PixFmt::Yuv420p));
    assert_eq!(md5(&d.join("cli/clip.mp4")), md5(&d.join("run/a/clip.mp4")));
    assert_eq!(
        std::fs::read(d.join("cli/clip.mp4")).unwrap(),
        std::fs::read(d.join("run/a/clip.mp4")).unwrap(),
        "byte-identical files"
    );
}

#[test]
fn smart_outputs_play_and_seek_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let downloads = dir.path().join("downloads");
    std::fs::create_dir(&downloads).unwrap();
    let Some(browser) = support::webdriver::Browser::start(&downloads) else {
        return;
    };
    let b = &browser;
    let src = source(150);
    let out = dir.path().join("cut.mp4");
    vidprep()
        .args([
            "cut",
            &p(&src),
            "--start",
            "13",
            "--end",
            "112",
            "--smart",
            "-o",
            &p(&out),
        ])
        .assert()
        .success();
    let page = dir.path().join("page.html");
    std::fs::write(
        &page,
        r#"<!doctype html><html><body style="margin:0"><video id="v" src="cut.mp4" muted preload="auto" style="display:block;width:320px;height:240px"></video></body></html>"#,
    )
    .unwrap();
    b.goto_file(&page);
    b.wait_until(
        "return document.getElementById('v').readyState >= 2;",
        std::time::Duration::from_secs(20),
    );
    let video = b.find("#v");
    let mut sorted: Vec<f64> = packet_times(&out).iter().map(|t| t.0).collect();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    // Frames in the first re-encoded part, across both seams, in the copied middle, the last.
    for o in [0usize, 5, 11, 12, 13, 50, 86, 87, 90, 98] {
        let t = if o + 1 < sorted.len() {
            (sorted[o] + sorted[o + 1]) / 2.0
        } else {
            sorted[o] + 0.02
        };
        b.execute_async(
            "const [t, done] = arguments; const v = document.getElementById('v');
             v.addEventListener('seeked', () => requestAnimationFrame(() => done(true)), {once: true});
             v.currentTime = t;",
            vec![serde_json::json!(t)],
        );
        let png = b.element_screenshot(&video);
        let img = image::load_from_memory(&png).unwrap().to_rgb8();
        let (w, h) = img.dimensions();
        let luma: Vec<u8> = img
            .pixels()
            .map(|px| {
                (0.299 * px[0] as f64 + 0.587 * px[1] as f64 + 0.114 * px[2] as f64).round() as u8
            })
            .collect();
        assert_eq!(
            read_code(&luma, w as usize, h as usize, w as usize),
            Some(13 + o as u32),
            "Chromium at output frame {o}"
        );
    }
    // And it plays.
    b.execute(
        "document.getElementById('v').currentTime = 0; document.getElementById('v').play();",
        vec![],
    );
    b.wait_until(
        "return document.getElementById('v').currentTime > 0.5;",
        std::time::Duration::from_secs(20),
    );
    let errors = b.js_errors();
    assert!(errors.is_empty(), "{errors:?}");
}
