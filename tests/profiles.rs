//! Model profiles (`--profile`, `docs/profiles.md`) and `vidprep parity`, checked against
//! oracles that are not vidprep:
//!
//! - the frames a profile picks carry the frame code of the source frame its formula names,
//!   with the indices, size and `<t seconds>` strings qwen-vl-utils 0.0.14 gave for the same
//!   video (golden values from the package, pasted below);
//! - `vidprep parity` against the real qwen-vl-utils (run by the Python interpreter in
//!   `VIDPREP_PYTHON`, else `python3`) over the videos of the format matrix: indices, sizes
//!   and timestamps equal, pixels bit-exact or >= 45 dB. Skipped, with a message, when that
//!   interpreter lacks the package (CI: `pip install --no-deps qwen-vl-utils==0.0.14` over a
//!   torch and torchvision).

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::code::read_code;
use common::synth::SynthVideo;
use serde_json::Value;
use support::vidprep;

/// 320x240, 30 fps, 120 frames (4 s), the frame index painted in.
fn source() -> PathBuf {
    SynthVideo::new(320, 240).fps(30, 1).frames(120).gop(30).cached().path
}

fn frames_json(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("frames.json")).unwrap()).unwrap()
}

/// The frame code painted into an RGB image (read from its green channel).
fn code_of(png: &Path) -> Option<u32> {
    let img = image::open(png).unwrap().to_rgb8();
    let (w, h) = img.dimensions();
    let g: Vec<u8> = img.pixels().map(|p| p.0[1]).collect();
    read_code(&g, w as usize, h as usize, w as usize)
}

#[test]
fn qwen3_vl_profile_gives_the_package_frames_size_and_timestamps() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("q");
    vidprep()
        .args(["export", "frames"])
        .arg(&src)
        .arg("--out-dir")
        .arg(&dir)
        .args(["--profile", "qwen3-vl", "--format", "png"])
        .assert()
        .success();
    let j = frames_json(&dir);
    // qwen-vl-utils 0.0.14 fetch_video({"video": ...}, image_patch_size=16) on this video:
    // torchcodec reader, 120 frames at 30 fps.
    let want: Vec<u64> = vec![0, 17, 34, 51, 68, 85, 102, 119];
    let got: Vec<u64> = j["sampled"]["indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(got, want);
    let prof = &j["profile"];
    assert_eq!(prof["profile"], "qwen3-vl");
    assert_eq!(prof["mirrors"]["package"], "qwen-vl-utils");
    assert_eq!(prof["mirrors"]["version"], "0.0.14");
    assert_eq!((prof["width"].as_u64(), prof["height"].as_u64()), (Some(448), Some(320)));
    assert_eq!(
        prof["timestamps"],
        serde_json::json!(["<0.3 seconds>", "<1.4 seconds>", "<2.5 seconds>", "<3.7 seconds>"])
    );
    // 4 pairs of 14 x 10 merged patches.
    assert_eq!(prof["tokens"], 560);
    let rules: Vec<&str> = prof["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    for r in ["smart_nframes", "max_pixels", "smart_resize", "resize", "tokens"] {
        assert!(rules.contains(&r), "rule {r} missing from {rules:?}");
    }
    let records = j["frames"].as_array().unwrap();
    assert_eq!(records.len(), 8);
    for (rec, idx) in records.iter().zip(&want) {
        assert_eq!((rec["width"].as_u64(), rec["height"].as_u64()), (Some(448), Some(320)));
        let png = dir.join(rec["file"].as_str().unwrap());
        assert_eq!(code_of(&png), Some(*idx as u32), "{}", png.display());
    }
}

#[test]
fn profile_refusals_name_what_to_do() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let o = vidprep()
            .args(["export", "frames"])
            .arg(&src)
            .arg("--out-dir")
            .arg(out.path().join("x"))
            .args(args)
            .output()
            .unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (code, err) = run(&["--profile", "qwen9"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("qwen3-vl") && err.contains("qwen2.5-vl"), "{err}");
    let (code, err) = run(&["--profile", "qwen3-vl", "--sampler", "lmms-eval"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("sampler"), "{err}");
    let (code, err) = run(&["--profile", "qwen3-vl", "--profile-option", "min_pixel=3"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("min_pixels"), "{err}");
    // The package's own refusal: a 4-s video has no 300 frames.
    let (code, err) = run(&["--profile", "qwen3-vl", "--count", "300"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("nframes should in interval [2, 120]"), "{err}");
    assert!(!out.path().join("x").exists());
}

/// The interpreter with `module`, or `None` (with a message).
fn python_with(module: &str) -> Option<String> {
    let py = std::env::var("VIDPREP_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&py)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "skipping: {py} cannot import {module} (set VIDPREP_PYTHON to an interpreter with it)"
        );
    }
    ok.then_some(py)
}

/// The format matrix (`scripts/format-matrix.sh`, shared with `format_matrix.rs`).
fn matrix() -> (PathBuf, Vec<String>) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("format-matrix");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/format-matrix.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .arg(&dir)
        .output()
        .expect("run scripts/format-matrix.sh");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let list = std::fs::read_to_string(dir.join("list.txt")).unwrap();
    (dir, list.split_whitespace().map(str::to_string).collect())
}

/// Runs `vidprep parity` and returns its record.
fn parity(py: &str, video: &Path, profile: &str, extra: &[&str]) -> Result<Value, String> {
    let out = tempfile::tempdir().unwrap();
    let rec = out.path().join("parity.json");
    let o = vidprep()
        .arg("parity")
        .arg(video)
        .args(["--profile", profile, "--python", py])
        .args(extra)
        .arg("--out")
        .arg(&rec)
        .output()
        .unwrap();
    match std::fs::read_to_string(&rec) {
        Ok(text) => Ok(serde_json::from_str(&text).unwrap()),
        Err(_) => Err(String::from_utf8_lossy(&o.stderr).trim().to_string()),
    }
}
