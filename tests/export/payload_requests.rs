//! #53 items 2 and 3: the image payloads carry each frame's time, and `export video` writes
//! the request body a native-video model's API takes (`--payload gemini-video|openai-video`)
//! within a provider's limits (`--limits`). Every payload kind is checked against its API's
//! published request schema, transcribed in `fixtures/request_schemas/` (offline); the times
//! against ffprobe's frame times of the frame each image shows (its painted number), the
//! clip in a body against ffprobe's reading of it, never against vidprep's sidecar alone.

use crate::common;
use crate::support;

use base64::Engine as _;
use common::oracle::{self, PixFmt};
use common::synth::SynthVideo;
use serde_json::Value;
use std::path::Path;
use support::vidprep;

/// The request schema `file` (in fixtures/request_schemas/), at its definition `def` (or its
/// root).
fn validator(file: &str, def: Option<&str>) -> jsonschema::Validator {
    let path = crate::repo_root()
        .join("fixtures/request_schemas")
        .join(file);
    let mut schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    if let Some(def) = def {
        schema = serde_json::json!({
            "$schema": schema["$schema"],
            "$defs": schema["$defs"],
            "$ref": format!("#/$defs/{def}"),
        });
    }
    jsonschema::validator_for(&schema).unwrap()
}

/// Asserts that `body` is accepted by the schema of its API (`kind` a `--payload` name).
fn assert_accepted(kind: &str, body: &Value) {
    let v = match kind {
        "openai" => validator("openai_chat.schema.json", Some("user_message")),
        "vllm" | "openai-video" => validator("openai_chat.schema.json", None),
        "anthropic" => validator("anthropic_message.schema.json", None),
        "gemini" => validator("gemini_generate_content.schema.json", Some("content")),
        "gemini-video" => validator("gemini_generate_content.schema.json", None),
        other => panic!("no schema for {other}"),
    };
    let errors: Vec<String> = v
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{kind}: {errors:#?}");
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Qwen3-VL's marker of `t` seconds to the millisecond, as the test writes it.
fn marker(t: f64) -> String {
    let ms = (t * 1000.0).round() as u64;
    let mut s = format!("{}.{:03}", ms / 1000, ms % 1000);
    while s.ends_with('0') && !s.ends_with(".0") {
        s.pop();
    }
    format!("<{s} seconds>")
}

/// The parts of a payload as (marker text before it, image bytes), per API.
fn marked_images(kind: &str, body: &Value) -> Vec<(Option<String>, Vec<u8>)> {
    let parts = match kind {
        "gemini" => body["parts"].as_array().unwrap(),
        _ => body["content"].as_array().unwrap(),
    };
    let b64 = |s: &Value| {
        base64::engine::general_purpose::STANDARD
            .decode(s.as_str().unwrap())
            .unwrap()
    };
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for p in parts {
        let image = match kind {
            "openai" => p["image_url"]["url"]
                .as_str()
                .map(|u| b64(&Value::from(u.split_once(',').unwrap().1))),
            "anthropic" => (p["type"] == "image").then(|| b64(&p["source"]["data"])),
            _ => p.get("inline_data").map(|d| b64(&d["data"])),
        };
        match image {
            Some(bytes) => out.push((pending.take(), bytes)),
            None => {
                assert!(pending.is_none(), "two texts in a row: {p}");
                pending = Some(p["text"].as_str().unwrap().to_string());
            }
        }
    }
    out
}

#[test]
fn image_payloads_carry_each_frames_source_time() {
    // 29.97 fps and a span from 1 s: the times are the source's, not range(n).
    let v = SynthVideo::new(160, 120)
        .fps(30000, 1001)
        .frames(90)
        .cached();
    let times = oracle::frame_pts(&v.path);
    for kind in ["openai", "anthropic", "gemini"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("f");
        vidprep()
            .args(["export", "frames"])
            .arg(&v.path)
            .args(["--start", "1s", "--count", "5", "--payload", kind])
            .arg("--out-dir")
            .arg(&out)
            .assert()
            .success();
        let body = read_json(&out.join("payload.json"));
        assert_accepted(kind, &body);
        let images = marked_images(kind, &body);
        assert_eq!(images.len(), 5, "{kind}");
        for (text, jpeg) in &images {
            let file = dir.path().join("one.jpg");
            std::fs::write(&file, jpeg).unwrap();
            let shown = oracle::decode_image(&file, PixFmt::Rgb24).code().unwrap() as usize;
            assert!((30..90).contains(&shown), "{kind}: frame {shown}");
            assert_eq!(
                text.as_deref(),
                Some(marker(times[shown]).as_str()),
                "{kind}: the marker of frame {shown}"
            );
        }
        // Left out on request: the images alone.
        let plain = dir.path().join("g");
        vidprep()
            .args(["export", "frames"])
            .arg(&v.path)
            .args(["--count", "3", "--payload", kind, "--no-time-markers"])
            .arg("--out-dir")
            .arg(&plain)
            .assert()
            .success();
        let body = read_json(&plain.join("payload.json"));
        assert_accepted(kind, &body);
        assert!(marked_images(kind, &body).iter().all(|(t, _)| t.is_none()));
    }
}

#[test]
fn a_profiles_payload_uses_the_profiles_own_markers() {
    // Qwen3-VL writes one `<t seconds>` (one decimal) per pair of frames: the mean time of
    // the pair's source indices at the source's rate.
    let v = SynthVideo::new(160, 120).fps(25, 1).frames(100).cached();
    let fps = {
        let (n, d) = oracle::ratio(&oracle::video_stream(&v.path)["avg_frame_rate"]).unwrap();
        n as f64 / d as f64
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f");
    vidprep()
        .args(["export", "frames"])
        .arg(&v.path)
        .args([
            "--profile",
            "qwen3-vl",
            "--count",
            "6",
            "--payload",
            "openai",
        ])
        .arg("--out-dir")
        .arg(&out)
        .assert()
        .success();
    let body = read_json(&out.join("payload.json"));
    assert_accepted("openai", &body);
    let images = marked_images("openai", &body);
    assert_eq!(images.len(), 6);
    let shown: Vec<usize> = images
        .iter()
        .map(|(_, png)| {
            let file = dir.path().join("one.jpg");
            std::fs::write(&file, png).unwrap();
            oracle::decode_image(&file, PixFmt::Rgb24).code().unwrap() as usize
        })
        .collect();
    for (i, (text, _)) in images.iter().enumerate() {
        if i % 2 == 0 {
            let t = (shown[i] as f64 / fps + shown[i + 1] as f64 / fps) / 2.0;
            assert_eq!(text.as_deref(), Some(format!("<{t:.1} seconds>").as_str()));
        } else {
            assert!(text.is_none(), "one marker per pair: {text:?}");
        }
    }
}

/// The clip a video payload carries, written out, and the body.
fn export_video_payload(
    v: &Path,
    dir: &Path,
    kind: &str,
    limits: &str,
    extra: &[&str],
) -> (Value, std::path::PathBuf) {
    let out = dir.join(format!("{kind}-{limits}.mp4"));
    vidprep()
        .args(["export", "video"])
        .arg(v)
        .args([
            "--payload",
            kind,
            "--limits",
            limits,
            "--max-size",
            "160x120",
        ])
        .args(extra)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let request = out.with_extension("payload.json");
    let body = read_json(&request);
    assert_accepted(kind, &body);
    let data = match kind {
        "gemini-video" => {
            let part = &body["contents"][0]["parts"][0];
            assert_eq!(part["inlineData"]["mimeType"], "video/mp4");
            part["inlineData"]["data"].as_str().unwrap().to_string()
        }
        _ => body["messages"][0]["content"][0]["video_url"]["url"]
            .as_str()
            .unwrap()
            .strip_prefix("data:video/mp4;base64,")
            .unwrap()
            .to_string(),
    };
    let clip = dir.join(format!("{kind}-{limits}.decoded.mp4"));
    std::fs::write(
        &clip,
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap(),
    )
    .unwrap();
    // The body holds the written clip, byte for byte; its size is the sidecar's.
    assert_eq!(std::fs::read(&clip).unwrap(), std::fs::read(&out).unwrap());
    let sidecar = support::sidecar(&out);
    assert_eq!(
        sidecar["payload"]["bytes"].as_u64().unwrap(),
        std::fs::metadata(&request).unwrap().len()
    );
    (body, clip)
}

#[test]
fn video_payloads_carry_the_capped_clip_in_each_apis_body() {
    let v = SynthVideo::new(320, 240)
        .fps(30, 1)
        .frames(75)
        .audio_tone(440.0)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    // Gemini: inlineData and videoMetadata, 1 fps sampled server-side, 70 tokens a frame.
    let (body, clip) = export_video_payload(&v.path, dir.path(), "gemini-video", "gemini", &[]);
    assert_eq!(oracle::dimensions(&clip), (160, 120));
    assert_eq!(oracle::count_frames(&clip), 75);
    let duration = oracle::presented_duration(&clip);
    // The schema has teeth: a rate Gemini refuses, a misspelt field.
    let mut bad = body.clone();
    bad["contents"][0]["parts"][0]["videoMetadata"]["fps"] = 30.0.into();
    assert!(!validator("gemini_generate_content.schema.json", None).is_valid(&bad));
    let mut bad = body.clone();
    bad["contents"][0]["parts"][0]["inlineData"]["mimetype"] = "video/mp4".into();
    assert!(!validator("gemini_generate_content.schema.json", None).is_valid(&bad));
    let meta = &body["contents"][0]["parts"][0]["videoMetadata"];
    assert_eq!(meta["fps"], 1.0);
    assert_eq!(meta["startOffset"], "0s");
    let end: f64 = meta["endOffset"]
        .as_str()
        .unwrap()
        .trim_end_matches('s')
        .parse()
        .unwrap();
    assert!(
        end <= duration && duration - end < 0.05,
        "{end} of {duration}"
    );
    let out = dir.path().join("gemini-video-gemini.mp4");
    let sidecar = support::sidecar(&out);
    let limits = &sidecar["limits"];
    assert_eq!(limits["preset"], "gemini");
    assert_eq!(limits["max_request_bytes"], 100_000_000);
    let seen = (duration * 1.0).ceil() as u64;
    assert_eq!(limits["server_sampling"]["frames_seen"], seen);
    assert_eq!(
        limits["tokens"]["total"].as_u64().unwrap(),
        seen * 70 + (duration.ceil() as u64) * 32
    );
    // OpenAI-compatible bodies: a vLLM server keeps 32 frames by default; MiMo's part says
    // its fps.
    let (_, clip) = export_video_payload(&v.path, dir.path(), "openai-video", "vllm", &[]);
    assert_eq!(oracle::count_frames(&clip), 75);
    let sidecar = support::sidecar(&dir.path().join("openai-video-vllm.mp4"));
    assert_eq!(sidecar["limits"]["server_sampling"]["frames_seen"], 32);
    assert_eq!(sidecar["limits"]["server_sampling"]["max_frames"], 768);
    assert!(sidecar["limits"]["tokens"].is_null());
    let (body, _) = export_video_payload(&v.path, dir.path(), "openai-video", "mimo", &[]);
    assert_eq!(body["messages"][0]["content"][0]["fps"], 2.0);
    // The paper's preset by default: the Base64 within 10 MB.
    let (_, clip) = export_video_payload(&v.path, dir.path(), "gemini-video", "vistr", &[]);
    let b64 = 4 * std::fs::metadata(&clip).unwrap().len().div_ceil(3);
    assert!(b64 <= 10_000_000);
}

#[test]
fn a_clip_whose_request_cannot_fit_is_refused() {
    let v = SynthVideo::new(320, 240).frames(75).cached();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.mp4");
    let o = vidprep()
        .args(["export", "video"])
        .arg(&v.path)
        .args([
            "--payload",
            "gemini-video",
            "--limits",
            "gemini",
            "--max-base64-bytes",
            "2000",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let name = v.path.file_name().unwrap().to_str().unwrap();
    assert!(err.contains(name), "names the file: {err}");
    assert!(
        err.contains("gemini limits") && err.contains("--max-base64-bytes"),
        "{err}"
    );
    assert!(!out.exists() && !out.with_extension("payload.json").exists());
    // A payload needs an MP4 (its MIME type is video/mp4).
    let o = vidprep()
        .args(["export", "video"])
        .arg(&v.path)
        .args(["--payload", "openai-video", "-o"])
        .arg(dir.path().join("v.mkv"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains(".mp4"), "{err}");
    // A Base64 cap above the whole request's limit is refused before anything is read.
    let o = vidprep()
        .args(["export", "video"])
        .arg(&v.path)
        .args([
            "--limits",
            "gemini",
            "--max-base64-bytes",
            "200000000",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("100000000"), "{err}");
}

#[test]
fn the_vllm_frames_payload_is_accepted_by_the_chat_schema() {
    let v = SynthVideo::new(160, 120).frames(20).cached();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f");
    vidprep()
        .args(["export", "frames"])
        .arg(&v.path)
        .args(["--count", "4", "--payload", "vllm", "--out-dir"])
        .arg(&out)
        .assert()
        .success();
    assert_accepted("vllm", &read_json(&out.join("payload.json")));
}

/// A request body is written beside the clip (`NAME.payload.json`): a file already there that
/// vidprep did not write (its sidecar does not record it) is refused before anything is
/// written and left as it was, as a sidecar in the way is; vidprep's own body is replaced on
/// a rerun.
#[test]
fn a_persons_file_in_the_way_of_the_request_body_is_never_replaced() {
    let v = SynthVideo::new(160, 120).frames(30).cached();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let body = d.join("c.payload.json");
    std::fs::write(&body, "my notes\n").unwrap();
    let export = || {
        vidprep()
            .current_dir(d)
            .args(["export", "video"])
            .arg(&v.path)
            .args([
                "-o",
                "c.mp4",
                "--payload",
                "openai-video",
                "--preset",
                "ultrafast",
            ])
            .output()
            .unwrap()
    };
    let out = export();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("c.payload.json: is in the way of c.mp4's request body"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&body).unwrap(), "my notes\n");
    assert!(!d.join("c.mp4").exists() && !d.join("c.json").exists());
    std::fs::remove_file(&body).unwrap();
    for _ in 0..2 {
        let out = export();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let body = read_json(&d.join("c.payload.json"));
        assert!(body["messages"][0]["content"][0]["video_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:video/mp4;base64,"));
    }
}
