//! Cutting and truncation through the CLI, proved frame-exact against the ffmpeg CLI: the
//! expected frames come from ffprobe's timestamps of the source, the output's frames are read
//! back by ffmpeg (frame codes painted in the pixels), and each output frame must match its
//! source frame (PSNR >= 40 dB).

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::oracle::{self, PixFmt};
use common::synth::{SynthInfo, SynthVideo};
use serde_json::Value;
use support::{sidecar, vidprep};

/// Source frame times relative to the input's start (as `ffmpeg -ss/-t` count), from ffprobe.
fn source_times(path: &Path) -> Vec<f64> {
    let start = oracle::input_start_time(path);
    oracle::frame_pts(path).iter().map(|p| p - start).collect()
}

/// Indices with `start <= t < end` (times in seconds, compared with a tolerance far below
/// any frame spacing, on ffprobe's decimal output).
fn frames_in(times: &[f64], start: f64, end: f64) -> Vec<usize> {
    (0..times.len())
        .filter(|&i| times[i] >= start - 1e-9 && times[i] < end - 1e-9)
        .collect()
}

/// The output holds exactly `expected` source frames, in order, each close to the source.
fn assert_output_frames(source: &SynthInfo, output: &Path, expected: &[usize]) {
    let codes: Vec<usize> = oracle::frame_codes(output)
        .into_iter()
        .map(|c| c as usize)
        .collect();
    assert_eq!(codes, expected, "{output:?}: source frames in the output");
    assert_eq!(oracle::count_frames(output) as usize, expected.len());
    let src = oracle::decode_frames(&source.path, PixFmt::Yuv420p, None);
    let out = oracle::decode_frames(output, PixFmt::Yuv420p, None);
    for (k, &i) in expected.iter().enumerate() {
        let p = oracle::psnr(&out[k], &src[i]);
        assert!(
            p >= 40.0,
            "{output:?} frame {k} (source {i}): PSNR {p:.2} dB"
        );
    }
    // Output timestamps keep the source spacing (variable frame rate survives).
    let st = source_times(&source.path);
    let ot = source_times(output);
    for (k, &i) in expected.iter().enumerate() {
        let want = st[i] - st[expected[0]] + ot[0];
        assert!(
            (ot[k] - want).abs() < 1e-3,
            "{output:?} frame {k}: time {} vs {want}",
            ot[k]
        );
    }
    // And the sidecar says the same, frame by frame.
    let sc = sidecar(output);
    let mut listed = Vec::new();
    for run in sc["frames"].as_array().unwrap() {
        let start = run["source_start"].as_u64().unwrap() as usize;
        for k in 0..run["count"].as_u64().unwrap() as usize {
            listed.push(start + k);
        }
    }
    assert_eq!(listed, expected, "{output:?}: sidecar provenance");
}

fn cut(source: &Path, dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = dir.join(name);
    vidprep()
        .arg("cut")
        .arg(source)
        .args(args)
        .arg("-o")
        .arg(&out)
        .args(["--preset", "ultrafast", "--crf", "12"])
        .assert()
        .success();
    out
}

#[test]
fn cuts_are_frame_exact_for_constant_rate() {
    let v = SynthVideo::new(320, 240)
        .frames(100)
        .gop(30)
        .bframes(3)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let times = source_times(&v.path);
    let out = cut(
        &v.path,
        dir.path(),
        "frames.mp4",
        &["--start", "17", "--end", "63"],
    );
    assert_output_frames(&v, &out, &(17..63).collect::<Vec<_>>());
    let out = cut(
        &v.path,
        dir.path(),
        "secs.mp4",
        &["--start", "1.01s", "--end", "00:00:02.500"],
    );
    assert_output_frames(&v, &out, &frames_in(&times, 1.01, 2.5));
    // Open-ended spans run to the end / from the start.
    let out = cut(&v.path, dir.path(), "tail.mp4", &["--start", "2.0"]);
    assert_output_frames(&v, &out, &(50..100).collect::<Vec<_>>());
    let out = cut(&v.path, dir.path(), "head.mp4", &["--end", "1s"]);
    assert_output_frames(&v, &out, &(0..25).collect::<Vec<_>>());
}

#[test]
fn cuts_are_frame_exact_for_variable_rate() {
    let v = SynthVideo::new(320, 240)
        .frames(80)
        .vfr(&[40, 40, 80, 20, 120])
        .gop(20)
        .bframes(2)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let times = source_times(&v.path);
    for (i, (a, b)) in [(0.3, 1.7), (0.16, 0.18), (1.0, 4.0), (0.0, 0.04)]
        .into_iter()
        .enumerate()
    {
        let expected = frames_in(&times, a, b);
        assert!(!expected.is_empty());
        let out = cut(
            &v.path,
            dir.path(),
            &format!("vfr{i}.mp4"),
            &["--start", &format!("{a}s"), "--end", &format!("{b}s")],
        );
        assert_output_frames(&v, &out, &expected);
    }
}

#[test]
fn cuts_are_frame_exact_with_a_long_gop_and_a_nonzero_start() {
    let v = SynthVideo::new(320, 240)
        .frames(200)
        .gop(250)
        .bframes(3)
        .start_offset(5.0)
        .audio_tone(440.0)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let times = source_times(&v.path);
    // Times are relative to the stream start (5 s in the container).
    let out = cut(
        &v.path,
        dir.path(),
        "mid.mp4",
        &["--start", "3.3s", "--end", "5.5s"],
    );
    assert_output_frames(&v, &out, &frames_in(&times, 3.3, 5.5));
    // The audio covers the same span.
    let probe = oracle::probe(&out);
    let audio = oracle::stream(&probe, "audio").expect("audio kept");
    let video = oracle::stream(&probe, "video").unwrap();
    let ad = oracle::num(&audio["duration"]).unwrap();
    let vd = oracle::num(&video["duration"]).unwrap();
    assert!((ad - vd).abs() < 0.03, "audio {ad} s vs video {vd} s");
    let ts = SynthVideo::new(320, 240)
        .frames(90)
        .gop(30)
        .bframes(2)
        .container("ts")
        .cached();
    let out = cut(
        &ts.path,
        dir.path(),
        "ts.mp4",
        &["--start", "31", "--end", "77"],
    );
    assert_output_frames(&ts, &out, &(31..77).collect::<Vec<_>>());
}

#[test]
fn no_audio_drops_the_audio_stream() {
    let v = SynthVideo::new(320, 240)
        .frames(50)
        .audio_tone(440.0)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let out = cut(
        &v.path,
        dir.path(),
        "mute.mp4",
        &["--start", "10", "--no-audio"],
    );
    assert!(oracle::stream(&oracle::probe(&out), "audio").is_none());
    let out = cut(&v.path, dir.path(), "loud.mp4", &["--start", "10"]);
    assert!(oracle::stream(&oracle::probe(&out), "audio").is_some());
}

#[test]
fn truncation_never_leaks_the_decision_point() {
    let v = SynthVideo::new(320, 240)
        .frames(100)
        .vfr(&[40, 40, 80, 20, 120])
        .gop(24)
        .bframes(3)
        .audio_tone(300.0)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let times = source_times(&v.path);
    for (name, at, cutoff) in [
        ("t1.mp4", "1.5s", 1.5),
        ("t2.mp4", "00:00:02.230", 2.23),
        ("t3.mp4", "0.161", 0.161),
    ] {
        let out = dir.path().join(name);
        vidprep()
            .args(["truncate"])
            .arg(&v.path)
            .args(["--at", at, "-o"])
            .arg(&out)
            .args(["--preset", "ultrafast", "--crf", "12"])
            .assert()
            .success();
        let expected = frames_in(&times, 0.0, cutoff);
        assert_output_frames(&v, &out, &expected);
        // Nothing at or after the decision point: every kept frame is earlier.
        assert!(expected.iter().all(|&i| times[i] < cutoff));
        // The whole output, audio included, ends at the decision point.
        let probe = oracle::probe(&out);
        let ad = oracle::num(&oracle::stream(&probe, "audio").unwrap()["duration"]).unwrap();
        assert!(
            ad <= cutoff + 0.025,
            "audio runs to {ad} s past the decision point {cutoff}"
        );
        let sc = sidecar(&out);
        assert_eq!(sc["kind"], "clip");
        assert!(sc["request"]["decision"].is_string(), "{}", sc["request"]);
        assert_eq!(
            sc["resolved"]["decision"]["last_kept_frame"]
                .as_u64()
                .unwrap() as usize,
            *expected.last().unwrap()
        );
    }
    // A frame number as decision point keeps the frames before it.
    let out = dir.path().join("f.mp4");
    vidprep()
        .args(["truncate"])
        .arg(&v.path)
        .args(["--at", "37", "-o"])
        .arg(&out)
        .args(["--preset", "ultrafast"])
        .assert()
        .success();
    assert_output_frames(&v, &out, &(0..37).collect::<Vec<_>>());
}

#[test]
fn truncation_ratios_write_the_whole_set_from_one_decode() {
    let v = SynthVideo::new(320, 240).frames(80).cached();
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("clip.mp4");
    vidprep()
        .args(["truncate"])
        .arg(&v.path)
        .args(["--ratios", "50%,75%,100%", "-o"])
        .arg(&base)
        .args(["--preset", "ultrafast", "--crf", "12"])
        .assert()
        .success();
    // 80 frames at 25 fps = 3.2 s: 50% = 1.6 s (40 frames), 75% = 2.4 s (60), 100% all.
    for (suffix, n) in [("50", 40), ("75", 60), ("100", 80)] {
        let out = dir.path().join(format!("clip_{suffix}.mp4"));
        assert_output_frames(&v, &out, &(0..n).collect::<Vec<_>>());
    }
}

#[test]
fn cut_then_decision_is_relative_to_the_clip() {
    let v = SynthVideo::new(320, 240).frames(100).cached();
    let dir = tempfile::tempdir().unwrap();
    // Clip [1 s, 3 s) = frames 25..75; decision 1 s into it = frame 50.
    let out = cut(
        &v.path,
        dir.path(),
        "d.mp4",
        &["--start", "1s", "--end", "3s", "--decision", "1s"],
    );
    assert_output_frames(&v, &out, &(25..50).collect::<Vec<_>>());
    let sc = sidecar(&out);
    assert_eq!(sc["resolved"]["decision"]["first_dropped_frame"], 50);
    assert_eq!(sc["resolved"]["cut"]["start"], 25);
    assert_eq!(sc["resolved"]["cut"]["end"], 75);
}

#[test]
fn copy_mode_keeps_whole_gops_and_says_so() {
    let v = SynthVideo::new(320, 240)
        .frames(120)
        .gop(25)
        .bframes(2)
        .audio_tone(440.0)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("copy.mp4");
    vidprep()
        .args(["cut"])
        .arg(&v.path)
        .args(["--start", "1.1s", "--end", "2.9s", "--copy", "-o"])
        .arg(&out)
        .assert()
        .success();
    let sc = sidecar(&out);
    // Requested frames 28..73; keyframes every 25 frames: copied 25..75, which `resolved`
    // states (the file holds them), the request kept under `resolved.requested`.
    assert_eq!(sc["resolved"]["requested"]["kept"]["start"], 28);
    assert_eq!(sc["resolved"]["requested"]["kept"]["end"], 73);
    assert_eq!(sc["resolved"]["kept"]["start"], 25);
    assert_eq!(sc["resolved"]["kept"]["end"], 75);
    assert_eq!(sc["copy"]["copied"]["start"], 25);
    assert_eq!(sc["copy"]["copied"]["end"], 75);
    let codes: Vec<u32> = oracle::frame_codes(&out);
    assert_eq!(codes, (25..75).collect::<Vec<u32>>());
    // Stream copy: pixels identical to the source's.
    let src = oracle::decode_frames(&v.path, PixFmt::Yuv420p, None);
    let got = oracle::decode_frames(&out, PixFmt::Yuv420p, None);
    for (k, f) in got.iter().enumerate() {
        assert_eq!(f.md5(), src[25 + k].md5());
    }
    assert!(oracle::stream(&oracle::probe(&out), "audio").is_some());
}

#[test]
fn cut_manifest_runs_items_in_parallel_and_reports_bad_ones() {
    let v = SynthVideo::new(320, 240).frames(100).cached();
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("events.jsonl");
    let src = v.path.display().to_string();
    let lines = [
        format!(r#"{{"id": "a", "source": "{src}", "start": "1s", "end": "2s"}}"#),
        format!(r#"{{"id": "b", "source": "{src}", "start": 10, "end": 60, "decision": "50%"}}"#),
        format!(r#"{{"id": "c", "source": "{src}", "start": "9s"}}"#),
        r#"{"id": "d", "source": "missing.mp4"}"#.to_string(),
        "{broken".to_string(),
        format!(r#"{{"id": "e", "source": "{src}", "start": 0.5, "end": 30}}"#),
    ];
    std::fs::write(&manifest, lines.join("\n")).unwrap();
    let out_dir = dir.path().join("out");
    let assert = vidprep()
        .args(["cut", "--manifest"])
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&out_dir)
        .args(["--jobs", "2", "--preset", "ultrafast", "--crf", "12"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(
        stderr.contains("line 3")
            && stderr.contains("(id c)")
            && stderr.contains("outside the video"),
        "{stderr}"
    );
    assert!(stderr.contains("missing.mp4: file not found"), "{stderr}");
    assert!(stderr.contains("line 5"), "{stderr}");
    // One layout for every batch door: OUT/<id>/<export>.mp4.
    assert_output_frames(
        &v,
        &out_dir.join("a/clip.mp4"),
        &(25..50).collect::<Vec<_>>(),
    );
    assert_output_frames(
        &v,
        &out_dir.join("b/clip.mp4"),
        &(10..35).collect::<Vec<_>>(),
    );
    assert_output_frames(
        &v,
        &out_dir.join("e/clip.mp4"),
        &(13..30).collect::<Vec<_>>(),
    );
    assert!(!out_dir.join("c").exists() && !out_dir.join("d").exists());
    let report = std::fs::read_to_string(out_dir.join("report.jsonl")).unwrap();
    let rows: Vec<Value> = report
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 6);
    let status: Vec<&str> = rows.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(status, vec!["ok", "ok", "failed", "failed", "failed", "ok"]);
    // No temporary files are left behind.
    for entry in std::fs::read_dir(&out_dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains("vidprep-tmp"), "left {name}");
    }
}

#[test]
fn odd_sizes_are_cropped_to_even_and_say_so() {
    let v = SynthVideo::new(321, 241)
        .codec(common::synth::Codec::Mpeg4)
        .container("avi")
        .frames(30)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let out = cut(
        &v.path,
        dir.path(),
        "odd.mp4",
        &["--start", "5", "--end", "20"],
    );
    assert_eq!(oracle::dimensions(&out), (320, 240));
    let sc = sidecar(&out);
    assert_eq!(sc["output"]["cropped_right"], 1);
    assert_eq!(sc["output"]["cropped_bottom"], 1);
    // Cropping drops the last column and row; everything else is the source picture.
    let src = oracle::decode_frames_opts(&v.path, &oracle::DecodeOpts::new(PixFmt::Gray));
    let got = oracle::decode_frames_opts(&out, &oracle::DecodeOpts::new(PixFmt::Gray));
    for (k, f) in got.iter().enumerate() {
        let s = &src[5 + k];
        let mut cropped = Vec::with_capacity(320 * 240);
        for y in 0..240 {
            cropped.extend_from_slice(&s.data[y * 321..y * 321 + 320]);
        }
        let s = oracle::Frame {
            width: 320,
            height: 240,
            pix_fmt: PixFmt::Gray,
            data: cropped,
        };
        assert!(oracle::psnr(f, &s) >= 40.0, "frame {k}");
    }
}

#[test]
fn probe_tells_metadata_counts_from_real_counts() {
    let v = SynthVideo::new(160, 120)
        .codec(common::synth::Codec::Mpeg4)
        .container("avi")
        .frames(40)
        .avi_header_frames(250)
        .cached();
    let out = vidprep()
        .args(["probe", "--json", "--count-frames"])
        .arg(&v.path)
        .assert()
        .success();
    let j: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(j["video"]["frames_metadata"], 250);
    assert_eq!(j["video"]["frames"], 40);
    assert_eq!(j["video"]["frames_decoded"], 40);
    assert_eq!(oracle::count_frames(&v.path), 40);
}

/// The x264 settings string libx264 writes into its stream (an SEI message).
fn x264_settings(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let at = bytes
        .windows(9)
        .position(|w| w == b"options: ")
        .unwrap_or_else(|| panic!("{path:?}: no x264 settings in the stream"));
    let rest = &bytes[at..];
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    String::from_utf8_lossy(&rest[..end]).into_owned()
}

#[test]
fn encoder_settings_match_the_ffmpeg_cli() {
    // Same preset and CRF through the ffmpeg CLI and through vidprep must give the same x264
    // settings (closed GOPs included: an open GOP makes keyframes that seek badly).
    let v = SynthVideo::new(320, 240).frames(40).gop(20).cached();
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("ours.mp4");
    vidprep()
        .arg("cut")
        .arg(&v.path)
        .args([
            "--end",
            "30",
            "--preset",
            "veryfast",
            "--crf",
            "23",
            "--no-audio",
            "-o",
        ])
        .arg(&ours)
        .assert()
        .success();
    let theirs = dir.path().join("theirs.mp4");
    common::cmd::ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-i",
        &common::cmd::p(&v.path),
        "-frames:v",
        "30",
        "-an",
        "-c:v",
        "libx264",
        // vidprep fixes x264's thread count (its output depends on it).
        "-threads",
        "4",
        "-preset",
        "veryfast",
        "-crf",
        "23",
        &common::cmd::p(&theirs),
    ])
    .unwrap();
    let (a, b) = (x264_settings(&ours), x264_settings(&theirs));
    assert!(a.contains("open_gop=0"), "{a}");
    assert_eq!(a, b, "x264 settings differ from the ffmpeg CLI's");
}
