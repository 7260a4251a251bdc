//! #53 item 2: `--payload vllm`, an OpenAI-compatible chat body for a vLLM server whose frames
//! are one `video/jpeg` list (a `video_url` data URL) and whose `media_io_kwargs.video` says
//! each frame's source index, the source's rate, frame count and duration, so that the server
//! sees exactly the exported frames and its video processor writes each frame's time marker
//! from index / fps (a plain list of frames gets markers from `range(n)`). Checked against
//! independent oracles: ffprobe's rate and frame count, the frame numbers painted into the
//! source (read from each JPEG in the body), the exported files' bytes, and the checks vLLM's
//! `VideoMediaIO.load_base64` makes of a `video/jpeg` request (vllm/multimodal/media/video.py
//! as of PR #40133: `num_frames` frames split at the commas, `frames_indices` a list of
//! integers as long as the frames, `total_num_frames` a positive integer at least that,
//! `duration` a non-negative number).

use crate::common;
use crate::support;

use base64::Engine as _;
use common::oracle::{self, PixFmt};
use common::synth::SynthVideo;
use serde_json::Value;
use support::vidprep;

/// vLLM's checks of a `video/jpeg` request, as `load_base64` makes them; the JPEGs' bytes.
fn as_vllm_reads(body: &Value) -> (Vec<Vec<u8>>, &Value) {
    let content = body["messages"][0]["content"].as_array().unwrap();
    assert_eq!(body["messages"][0]["role"], "user");
    assert_eq!(content[0]["type"], "video_url");
    let url = content[0]["video_url"]["url"].as_str().unwrap();
    let data = url
        .strip_prefix("data:video/jpeg;base64,")
        .unwrap_or_else(|| panic!("not a video/jpeg data URL: {}", &url[..40.min(url.len())]));
    let kwargs = &body["media_io_kwargs"]["video"];
    let num_frames = kwargs["num_frames"].as_u64().unwrap() as usize;
    let parts: Vec<&str> = data.split(',').collect();
    // The server keeps the first `num_frames` parts: every frame must be among them.
    assert_eq!(parts.len(), num_frames, "frames sent and num_frames");
    let jpegs: Vec<Vec<u8>> = parts
        .iter()
        .map(|p| base64::engine::general_purpose::STANDARD.decode(p).unwrap())
        .collect();
    assert!(
        jpegs.iter().all(|j| j.starts_with(&[0xff, 0xd8])),
        "JPEG data"
    );
    let indices = kwargs["frames_indices"].as_array().unwrap();
    assert!(
        indices.iter().all(|i| i.is_u64()),
        "frames_indices: integers"
    );
    assert_eq!(indices.len(), jpegs.len(), "frames_indices: one per frame");
    let total = kwargs["total_num_frames"].as_u64().unwrap();
    assert!(
        total >= jpegs.len() as u64,
        "total_num_frames >= frames sent"
    );
    assert!(kwargs["duration"].as_f64().unwrap() >= 0.0);
    assert!(kwargs["fps"].as_f64().unwrap() > 0.0);
    (jpegs, kwargs)
}

/// ffprobe's average rate of the video stream, as a number.
fn probed_fps(path: &std::path::Path) -> f64 {
    let s = oracle::video_stream(path);
    let (num, den) = oracle::ratio(&s["avg_frame_rate"]).unwrap();
    num as f64 / den as f64
}

#[test]
fn a_vllm_body_carries_the_frames_and_their_source_indices() {
    // 29.97 fps, and a span that does not start at 0: the indices are the source's.
    let v = SynthVideo::new(160, 120)
        .fps(30000, 1001)
        .frames(90)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f");
    vidprep()
        .args(["export", "frames"])
        .arg(&v.path)
        .args([
            "--start",
            "1s",
            "--end",
            "2.5s",
            "--count",
            "5",
            "--format",
            "jpg",
            "--payload",
            "vllm",
            "--out-dir",
        ])
        .arg(&out)
        .assert()
        .success();
    let frames: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("frames.json")).unwrap()).unwrap();
    assert_eq!(frames["payload"], "payload.json");
    let body: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("payload.json")).unwrap()).unwrap();
    let (jpegs, kwargs) = as_vllm_reads(&body);
    let records = frames["frames"].as_array().unwrap();
    assert_eq!(jpegs.len(), 5);
    let sidecar_indices: Vec<u64> = records
        .iter()
        .map(|f| f["source_frame"].as_u64().unwrap())
        .collect();
    let sent: Vec<u64> = kwargs["frames_indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_u64().unwrap())
        .collect();
    assert_eq!(sent, sidecar_indices, "frames_indices are the sidecar's");
    // The span [1 s, 2.5 s) at 29.97 fps: source frames 30..75.
    assert!(sent.iter().all(|&i| (30..75).contains(&i)), "{sent:?}");
    for ((jpeg, record), &index) in jpegs.iter().zip(records).zip(&sent) {
        // The body's JPEG is the exported file, and shows the frame it names.
        let file = out.join(record["file"].as_str().unwrap());
        assert_eq!(jpeg, &std::fs::read(&file).unwrap(), "{}", file.display());
        let picture = oracle::decode_image(&file, PixFmt::Rgb24);
        assert_eq!(picture.code(), Some(index as u32), "{}", file.display());
    }
    // The source's rate and frame count as ffprobe reads them; its duration as the sidecar
    // gives it, within a frame of ffprobe's.
    let fps = kwargs["fps"].as_f64().unwrap();
    assert!((fps - probed_fps(&v.path)).abs() < 1e-9, "fps {fps}");
    assert_eq!(
        kwargs["total_num_frames"].as_u64().unwrap(),
        oracle::count_frames(&v.path)
    );
    let duration = kwargs["duration"].as_f64().unwrap();
    assert_eq!(
        duration,
        frames["sources"][0]["duration_s"].as_f64().unwrap()
    );
    assert!(
        (duration - oracle::presented_duration(&v.path)).abs() <= 1.001 / fps,
        "duration {duration}"
    );
    // No token figure: a vLLM server's tokens are its model's.
    assert!(
        frames["request_tokens"].is_null(),
        "{}",
        frames["request_tokens"]
    );
}

#[test]
fn a_vllm_body_of_png_frames_is_refused_before_anything_is_read() {
    let v = SynthVideo::new(160, 120).frames(10).cached();
    let dir = tempfile::tempdir().unwrap();
    let out = vidprep()
        .args(["export", "frames"])
        .arg(&v.path)
        .args([
            "--count",
            "2",
            "--format",
            "png",
            "--payload",
            "vllm",
            "--out-dir",
        ])
        .arg(dir.path().join("f"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("vllm payload") && err.contains("--format jpg"),
        "{err}"
    );
    assert!(!dir.path().join("f").exists());
}
