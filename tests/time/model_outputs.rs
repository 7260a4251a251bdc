//! What models and annotators receive, checked against the ffmpeg CLI: times counted from the
//! input's start as ffmpeg counts them, decision points that end video and audio alike, the
//! container the output's name asks for, model inputs that are upright, square-pixel and
//! standard (pass-through only for files that already are), V-STaR frame rates, and
//! provenance runs that satisfy their documented time formula.

use crate::common;
use crate::support;

use std::path::Path;

use common::oracle;
use common::synth::{Codec, SynthVideo};
use serde_json::Value;
use support::{shared, sidecar, vidprep};

fn ffmpeg(args: &[&str]) {
    common::cmd::run_ok("ffmpeg", args);
}

#[test]
fn times_count_from_the_input_start_like_ffmpeg() {
    // MPEG-4 ASP with B-frames in AVI at 24 fps: the decoder stamps the first frame one frame
    // after the stream's start, so `ffmpeg -t 5` keeps 119 frames, not 120.
    let dir = tempfile::tempdir().unwrap();
    let src = SynthVideo::new(320, 240).fps(24, 1).frames(150).cached();
    let avi = dir.path().join("late.avi");
    ffmpeg(&[
        "-v",
        "error",
        "-i",
        &src.path.display().to_string(),
        "-an",
        "-c:v",
        "mpeg4",
        "-vtag",
        "DX50",
        "-bf",
        "2",
        "-q:v",
        "3",
        &avi.display().to_string(),
    ]);
    let reference = dir.path().join("ffmpeg_t5.mp4");
    ffmpeg(&[
        "-v",
        "error",
        "-i",
        &avi.display().to_string(),
        "-t",
        "5",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        &reference.display().to_string(),
    ]);
    let want = oracle::count_frames(&reference);
    assert_eq!(want, 119, "ffmpeg -t 5 keeps frames shown before 5 s");
    let out = dir.path().join("t5.mp4");
    vidprep()
        .arg("truncate")
        .arg(&avi)
        .args(["--at", "5s", "--preset", "ultrafast", "-o"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(oracle::count_frames(&out), want);
    let sc = sidecar(&out);
    assert_eq!(sc["sources"][0]["time_origin"], "0");
    assert_eq!(sc["sources"][0]["first_frame_time"], "1/24");
    assert_eq!(sc["sources"][0]["frame_times_from"], "decoder");
}

#[test]
fn a_decision_point_ends_video_and_audio_exactly() {
    let dir = tempfile::tempdir().unwrap();
    // 10 fps (a 0.1 s frame grid) with no audio: the output still ends at 2.25 s.
    let silent = SynthVideo::new(320, 240).fps(10, 1).frames(50).cached();
    // 25 fps with audio.
    let loud = SynthVideo::new(320, 240)
        .frames(100)
        .audio_tone(440.0)
        .cached();
    for (src, decision, want) in [(&silent.path, "75%", 2.25), (&loud.path, "1.33s", 1.33)] {
        let out = dir.path().join("d.mp4");
        vidprep()
            .arg("cut")
            .arg(src)
            .args(["--start", "1s", "--end", "4s", "--decision", decision])
            .args(["--preset", "ultrafast", "-o"])
            .arg(&out)
            .assert()
            .success();
        let probe = oracle::probe(&out);
        let ff = oracle::presented_duration(&out);
        let ours = sidecar(&out)["output"]["duration_s"].as_f64().unwrap();
        assert!(
            (ff - want).abs() <= 0.001,
            "{src:?}: ffprobe {ff} s, want {want} s"
        );
        assert!((ours - want).abs() <= 0.001, "{src:?}: sidecar {ours} s");
        let v = oracle::num(&oracle::stream(&probe, "video").unwrap()["duration"]).unwrap();
        assert!((v - want).abs() <= 0.001, "{src:?}: video stream {v} s");
        if let Some(a) = oracle::stream(&probe, "audio") {
            let a = oracle::num(&a["duration"]).unwrap();
            assert!((a - want).abs() <= 0.001, "{src:?}: audio stream {a} s");
        }
    }
}

#[test]
fn the_container_follows_the_name_or_the_request_is_refused() {
    let src = SynthVideo::new(160, 120).frames(20).cached();
    let dir = tempfile::tempdir().unwrap();
    for (ext, format) in [("mp4", "mov,mp4"), ("mov", "mov,mp4"), ("mkv", "matroska")] {
        // One stem per output: outputs sharing a stem would share a sidecar (refused).
        let out = dir.path().join(format!("c-{ext}.{ext}"));
        vidprep()
            .arg("cut")
            .arg(&src.path)
            .args(["--preset", "ultrafast", "-o"])
            .arg(&out)
            .assert()
            .success();
        let name = oracle::probe(&out)["format"]["format_name"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(name.starts_with(format), "{ext}: {name}");
    }
    for (ext, needle) in [("webm", "WebM"), ("avi", ".avi"), ("", "extension")] {
        let out = dir.path().join(if ext.is_empty() {
            "noext".to_string()
        } else {
            format!("c.{ext}")
        });
        let a = vidprep()
            .arg("cut")
            .arg(&src.path)
            .arg("-o")
            .arg(&out)
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(err.contains(needle), "{ext}: {err}");
        assert!(!out.exists());
    }
}

fn export_video(src: &Path, out: &Path) -> Value {
    vidprep()
        .args(["export", "video"])
        .arg(src)
        .args(["--preset", "ultrafast", "-o"])
        .arg(out)
        .assert()
        .success();
    sidecar(out)
}

#[test]
fn model_videos_are_upright_square_and_standard() {
    let dir = tempfile::tempdir().unwrap();
    // Already a standard model input: copied byte for byte.
    let plain = SynthVideo::new(320, 240).frames(30).cached();
    let sc = export_video(&plain.path, &dir.path().join("plain.mp4"));
    assert_eq!(sc["budget"]["passthrough"], true);
    // Stored sideways with a rotation flag: re-encoded upright, no flag.
    let rotated = SynthVideo::new(320, 240).frames(30).rotation(90).cached();
    let out = dir.path().join("rot.mp4");
    let sc = export_video(&rotated.path, &out);
    assert_eq!(sc["budget"]["passthrough"], false, "{sc}");
    assert_eq!(oracle::dimensions(&out), (240, 320));
    assert_eq!(oracle::rotation(&out).unwrap_or(0.0), 0.0);
    assert!(sc["warnings"].to_string().contains("rotation"), "{sc}");
    // Non-square pixels (SAR 64:45): re-encoded with square pixels at the display aspect.
    let sar = dir.path().join("sar.mp4");
    ffmpeg(&[
        "-v",
        "error",
        "-i",
        &plain.path.display().to_string(),
        "-vf",
        "setsar=64/45",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        &sar.display().to_string(),
    ]);
    let out = dir.path().join("square.mp4");
    let sc = export_video(&sar, &out);
    assert_eq!(sc["budget"]["passthrough"], false);
    assert_eq!(oracle::dimensions(&out), (456, 240));
    let s = oracle::video_stream(&out);
    let out_sar = s["sample_aspect_ratio"].as_str().unwrap_or("1:1");
    assert!(out_sar == "1:1" || out_sar == "0:1", "{out_sar}");
    // probe reports the display size from the SAR.
    let a = vidprep()
        .args(["probe", "--json"])
        .arg(&sar)
        .assert()
        .success();
    let p: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(
        (p["video"]["width"].as_u64(), p["video"]["height"].as_u64()),
        (Some(456), Some(240))
    );
    // H.263 + AMR-style audio in 3GP: not copied into an .mp4.
    let h263 = dir.path().join("phone.3gp");
    ffmpeg(&[
        "-v",
        "error",
        "-i",
        &plain.path.display().to_string(),
        "-vf",
        "scale=352:288",
        "-c:v",
        "h263",
        &h263.display().to_string(),
    ]);
    let out = dir.path().join("phone.mp4");
    let sc = export_video(&h263, &out);
    assert_eq!(sc["budget"]["passthrough"], false);
    assert_eq!(
        oracle::video_stream(&out)["codec_name"].as_str(),
        Some("h264")
    );
}

#[test]
fn real_rotated_phone_clips_are_exported_upright() {
    let Some(src) = shared("edge/video_90.mov") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("upright.mp4");
    let sc = export_video(&src, &out);
    assert_eq!(sc["budget"]["passthrough"], false);
    assert_eq!(oracle::dimensions(&out), (320, 568));
    assert_eq!(oracle::rotation(&out).unwrap_or(0.0), 0.0);
}

#[test]
fn vstar_fps_is_the_stream_rate_after_a_decision_point() {
    let src = SynthVideo::new(320, 240).frames(100).cached();
    let dir = tempfile::tempdir().unwrap();
    let boxes = dir.path().join("b.csv");
    std::fs::write(
        &boxes,
        "frame,track,x1,y1,x2,y2\n0,1,10,10,60,60\n99,1,100,100,150,150\n",
    )
    .unwrap();
    let out = dir.path().join("t.mp4");
    vidprep()
        .arg("cut")
        .arg(&src.path)
        .args([
            "--start",
            "0",
            "--end",
            "3s",
            "--decision",
            "2.21s",
            "--boxes",
        ])
        .arg(&boxes)
        .args(["--boxes-out", "vstar", "--preset", "ultrafast", "-o"])
        .arg(&out)
        .assert()
        .success();
    let items: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("t.vstar.json")).unwrap())
            .unwrap();
    assert_eq!(items[0]["fps"].as_f64(), Some(25.0), "{}", items[0]);
}

#[test]
fn needle_runs_satisfy_the_time_formula() {
    // A 30 Hz sequence into a 25 fps host: every run's frames must sit where
    // output_time_start + k * source_pts_step * time_base puts them.
    let host = SynthVideo::new(320, 240).frames(50).cached();
    let dir = tempfile::tempdir().unwrap();
    let seq = dir.path().join("seq");
    std::fs::create_dir(&seq).unwrap();
    let frames = SynthVideo::new(160, 120).frames(12).label(false).cached();
    ffmpeg(&[
        "-v",
        "error",
        "-i",
        &frames.path.display().to_string(),
        "-start_number",
        "1",
        &seq.join("%08d.jpg").display().to_string(),
    ]);
    std::fs::write(seq.join("groundtruth.txt"), "10,10,40,30\n".repeat(12)).unwrap();
    std::fs::write(seq.join("meta_info.ini"), "[METAINFO]\nanno_fps: 30Hz\n").unwrap();
    let out = dir.path().join("n.mp4");
    vidprep()
        .args(["insert", "--host"])
        .arg(&host.path)
        .arg("--sequence")
        .arg(&seq)
        .args(["--at", "20", "--preset", "ultrafast", "-o"])
        .arg(&out)
        .assert()
        .success();
    let sc = sidecar(&out);
    let times = oracle::frame_pts(&out);
    let start = oracle::input_start_time(&out);
    let mut covered = 0;
    for run in sc["frames"].as_array().unwrap() {
        let source = run["source"].as_u64().unwrap() as usize;
        let tb = sc["sources"][source]["time_base"].as_str().unwrap();
        let (n, d) = tb.split_once('/').unwrap();
        let tb = n.parse::<f64>().unwrap() / d.parse::<f64>().unwrap();
        let t0 = run["output_time_start_s"].as_f64().unwrap();
        let step = run["source_pts_step"].as_i64().unwrap() as f64 * tb;
        let first = run["output_start"].as_u64().unwrap() as usize;
        for k in 0..run["count"].as_u64().unwrap() as usize {
            let formula = t0 + k as f64 * step;
            let real = times[first + k] - start;
            assert!(
                (formula - real).abs() < 1e-3,
                "output frame {}: formula {formula} s, real {real} s",
                first + k
            );
            covered += 1;
        }
    }
    assert_eq!(covered, times.len());
}

#[test]
fn fps_sampling_holds_frames_through_a_freeze() {
    // 40 frames at 25 fps, a 2 s freeze, then 60 more: 1 fps repeats the held frame, as a
    // viewer sees it, instead of refusing.
    let dir = tempfile::tempdir().unwrap();
    let src = SynthVideo::new(320, 240).frames(100).cached();
    let vfr = dir.path().join("freeze.mp4");
    ffmpeg(&[
        "-v",
        "error",
        "-i",
        &src.path.display().to_string(),
        "-vf",
        "setpts='if(lt(N\\,40)\\,N\\,N+50)/25/TB'",
        common::cmd::passthrough()[0],
        common::cmd::passthrough()[1],
        "-video_track_timescale",
        "1000",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        &vfr.display().to_string(),
    ]);
    let out = dir.path().join("f");
    let a = vidprep()
        .args(["export", "frames"])
        .arg(&vfr)
        .arg("--out-dir")
        .arg(&out)
        .args(["--fps", "1"])
        .assert()
        .success();
    let _ = a;
    let fj: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("frames.json")).unwrap()).unwrap();
    let picked: Vec<u64> = fj["sampled"]["indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    // t = 0..5 s: frames 0, 25, 39 (held from 1.56 s to 3.6 s), 39, then frame n >= 40 at
    // (n + 50) / 25 s: 50 at 4 s, 75 at 5 s.
    assert_eq!(picked, vec![0, 25, 39, 39, 50, 75]);
    let _ = Codec::H264;
}
