//! More model profiles (`docs/profiles.md`): lmms-eval's `read_video`, checked against
//! oracles that are not vidprep:
//!
//! - the frames the `lmms-eval` profile picks carry the frame code of the source frame
//!   numpy's `np.linspace(0, total - 1, n, dtype=int)` names (values printed by numpy,
//!   pasted below), at the decoded size, and a path with `mkv` in it gives every frame, as
//!   `read_video` does;
//! - `vidprep parity --profile lmms-eval` against the real lmms-eval 0.7.3 loader (its
//!   installed `load_video.py`, run by the interpreter in `VIDPREP_PYTHON`, else `python3`)
//!   over the videos of the format matrix: indices, sizes equal and pixels bit-exact on
//!   the variants PyAV reads as vidprep does. Skipped, with a message, when that
//!   interpreter lacks lmms-eval (CI: `pip install --no-deps lmms-eval==0.7.3` over
//!   Debian's python3-av and python3-numpy).

use crate::common;
use crate::profiles::parity::{code_of, frames_json, matrix, parity, python_with};
use crate::support;

use std::path::{Path, PathBuf};

use common::synth::SynthVideo;
use serde_json::Value;
use support::vidprep;

/// 320x240, 30 fps, 120 frames (4 s), the frame index painted in.
fn source() -> PathBuf {
    SynthVideo::new(320, 240)
        .fps(30, 1)
        .frames(120)
        .gop(30)
        .cached()
        .path
}

fn indices(j: &Value) -> Vec<u64> {
    j["sampled"]["indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

fn export(src: &Path, dir: &Path, args: &[&str]) {
    vidprep()
        .args(["export", "frames"])
        .arg(src)
        .arg("--out-dir")
        .arg(dir)
        .args(["--profile", "lmms-eval", "--format", "png"])
        .args(args)
        .assert()
        .success();
}

#[test]
fn lmms_eval_profile_gives_read_video_frames_at_the_decoded_size() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("l");
    export(&src, &dir, &["--count", "8"]);
    let j = frames_json(&dir);
    // numpy: np.linspace(0, 119, 8, dtype=int).tolist()
    let want: Vec<u64> = vec![0, 17, 34, 51, 68, 85, 102, 119];
    assert_eq!(indices(&j), want);
    let prof = &j["profile"];
    assert_eq!(prof["profile"], "lmms-eval");
    assert_eq!(prof["mirrors"]["package"], "lmms-eval");
    assert_eq!(prof["mirrors"]["version"], "0.7.3");
    assert_eq!(prof["resample"], "none");
    let rules: Vec<&str> = prof["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["indices", "to_ndarray"]);
    for (rec, idx) in j["frames"].as_array().unwrap().iter().zip(&want) {
        assert_eq!(
            (rec["width"].as_u64(), rec["height"].as_u64()),
            (Some(320), Some(240))
        );
        let png = dir.join(rec["file"].as_str().unwrap());
        assert_eq!(code_of(&png), Some(*idx as u32), "{}", png.display());
    }
    // fps 2 over 4 s: num_frm = min(32, int(120 / 30 * 2)) = 8, the same frames.
    let dir2 = out.path().join("f");
    export(
        &src,
        &dir2,
        &["--fps", "2", "--profile-option", "num_frm=32"],
    );
    assert_eq!(indices(&frames_json(&dir2)), want);
}

#[test]
fn lmms_eval_profile_reads_every_frame_of_an_mkv_as_read_video_does() {
    let out = tempfile::tempdir().unwrap();
    let mkv = out.path().join("clip.mkv");
    let st = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(source())
        .args(["-c", "copy"])
        .arg(&mkv)
        .status()
        .unwrap();
    assert!(st.success());
    let dir = out.path().join("m");
    export(&mkv, &dir, &["--count", "8"]);
    let j = frames_json(&dir);
    assert_eq!(indices(&j), (0..120).collect::<Vec<u64>>());
    assert!(j["profile"]["rules"][0]["formula"]
        .as_str()
        .unwrap()
        .contains("record_video_length_packet"));
}

/// Variants PyAV reads as vidprep does (header frame count right, 8-bit 4:2:0, no
/// rotation): these must agree with lmms-eval's loader.
const MUST_AGREE: &[&str] = &[
    "h264_mp4.mp4",
    "h264_aac_mp4.mp4",
    "h264_mkv.mkv",
    "h264_mov.mov",
    "hevc_mp4.mp4",
    "mpeg4_mp4_bf.mp4",
    "odd_size_mkv.mkv",
];

#[test]
fn lmms_eval_parity_with_read_video_over_the_format_matrix() {
    let Some(py) = python_with("lmms_eval, av, numpy") else {
        return;
    };
    let (dir, names) = matrix();
    let mut agreed = Vec::new();
    let mut differ = Vec::new();
    let mut refused = Vec::new();
    let mut wrong = Vec::new();
    for name in names {
        let must = MUST_AGREE.contains(&name.as_str());
        match parity(&py, &dir.join(name), "lmms-eval", &["--count", "8"]) {
            Err(e) if must => wrong.push(format!("{name}: {e}")),
            Err(e) => refused.push(format!("{name}: {}", common::cmd::tail_lines(&e, 1))),
            Ok(rec) => {
                let line = format!(
                    "{name}: indices {}, size {}, bit-exact {}, min PSNR {}",
                    rec["indices_equal"], rec["sizes_equal"], rec["bit_exact"], rec["min_psnr_db"]
                );
                match rec["pass"].as_bool() == Some(true) {
                    true => agreed.push(line),
                    false if must => wrong.push(line),
                    false => differ.push(line),
                }
            }
        }
    }
    eprintln!(
        "lmms-eval: {} agree, {} differ, {} refused\nagree:\n  {}\ndiffer:\n  {}\nrefused:\n  {}",
        agreed.len(),
        differ.len(),
        refused.len(),
        agreed.join("\n  "),
        differ.join("\n  "),
        refused.join("\n  ")
    );
    assert!(
        wrong.is_empty(),
        "unexpected differences:\n  {}",
        wrong.join("\n  ")
    );
    assert!(agreed.len() >= MUST_AGREE.len());
}

/// `request_tokens` in frames.json with a payload, against the vendors' worked examples
/// (docs/profiles.md cites them): OpenAI "a 1024 x 1024 square image in detail: high mode
/// costs 765 tokens" (low: 85); Anthropic 1000x1000 ~1334 tokens; Gemini an image within
/// 384 x 384 is 258 tokens.
#[test]
fn payload_reports_the_tokens_the_request_costs() {
    let out = tempfile::tempdir().unwrap();
    let tokens = |w: u32, h: u32, api: &str| -> Value {
        let src = SynthVideo::new(w, h).fps(10, 1).frames(10).cached().path;
        let dir = out.path().join(format!("{api}{w}"));
        vidprep()
            .args(["export", "frames"])
            .arg(&src)
            .arg("--out-dir")
            .arg(&dir)
            .args(["--count", "3", "--payload", api])
            .assert()
            .success();
        frames_json(&dir)["request_tokens"].clone()
    };
    let o = tokens(1024, 1024, "openai");
    assert_eq!(o[0]["per_image"], serde_json::json!([765, 765, 765]));
    assert_eq!(o[0]["total"], 2295);
    assert_eq!(o[0]["counted_size"], serde_json::json!([768, 768]));
    assert_eq!(o[1]["total"], 255);
    let a = tokens(1000, 1000, "anthropic");
    assert_eq!(a[0]["per_image"], serde_json::json!([1334, 1334, 1334]));
    let g = tokens(384, 384, "gemini");
    assert_eq!(g[0]["total"], 3 * 258);
}

#[test]
fn llava_onevision_profile_gives_the_processor_indices_and_size() {
    let src = source();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("o");
    vidprep()
        .args(["export", "frames"])
        .arg(&src)
        .arg("--out-dir")
        .arg(&dir)
        .args(["--profile", "llava-onevision", "--count", "8"])
        .assert()
        .success();
    let j = frames_json(&dir);
    // numpy: (np.arange(8) * 120 // 8).tolist(), as transformers 5.24 gave for this video.
    assert_eq!(indices(&j), [0, 15, 30, 45, 60, 75, 90, 105]);
    let prof = &j["profile"];
    assert_eq!(prof["mirrors"]["package"], "transformers");
    assert_eq!(
        (prof["width"].as_u64(), prof["height"].as_u64()),
        (Some(384), Some(384))
    );
    for rec in j["frames"].as_array().unwrap() {
        assert_eq!(
            (rec["width"].as_u64(), rec["height"].as_u64()),
            (Some(384), Some(384))
        );
    }
    // The processor's refusal: more frames than the video has.
    let o = vidprep()
        .args(["export", "frames"])
        .arg(&src)
        .arg("--out-dir")
        .arg(out.path().join("x"))
        .args(["--profile", "llava-onevision", "--count", "121"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("exceeds total_num_frames=120"));
}

/// Variants torchcodec (transformers' reader) reads as vidprep does (reliable timestamps,
/// 8-bit 4:2:0, no rotation): these must agree with the processor.
const LLAVA_MUST_AGREE: &[&str] = &[
    "h264_mp4.mp4",
    "h264_aac_mp4.mp4",
    "h264_mkv.mkv",
    "h264_mov.mov",
    "hevc_mp4.mp4",
    "av1_mkv.mkv",
    "mpeg4_mp4_bf.mp4",
    "ffv1_mkv.mkv",
    "odd_size_mkv.mkv",
    "h263_3gp.3gp",
];

#[test]
fn llava_onevision_parity_with_transformers_over_the_format_matrix() {
    let Some(py) = python_with("transformers, torchcodec") else {
        return;
    };
    let (dir, _) = matrix();
    let mut wrong = Vec::new();
    let mut lines = Vec::new();
    for name in LLAVA_MUST_AGREE {
        match parity(&py, &dir.join(name), "llava-onevision", &["--count", "8"]) {
            Err(e) => wrong.push(format!("{name}: {e}")),
            Ok(rec) => {
                let line = format!(
                    "{name}: indices {}, size {}, bit-exact {}, min PSNR {}",
                    rec["indices_equal"], rec["sizes_equal"], rec["bit_exact"], rec["min_psnr_db"]
                );
                // torch's uint8 kernel, mirrored: 0 differing values.
                if rec["pass"].as_bool() != Some(true) || rec["bit_exact"] != true {
                    wrong.push(line.clone());
                }
                lines.push(line);
            }
        }
    }
    eprintln!("llava-onevision:\n  {}", lines.join("\n  "));
    assert!(wrong.is_empty(), "differences:\n  {}", wrong.join("\n  "));
}
